//! `handoff_resume` without `taskId` pages the capsules addressed to the caller: every one is
//! reached, once, newest first, whatever is left meanwhile, and a cursor opens only its own list.

use super::tests::{T0, agent, code, fresh, run, who};
use serde_json::{Value, json};

fn ids(reply: &Value) -> Vec<String> {
    let handoffs = reply["handoffs"].as_array().unwrap_or_else(|| panic!("not a listing: {reply}"));
    handoffs.iter().map(|h| h["id"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn every_addressed_capsule_is_reached_page_by_page_newest_first() {
    let (_dir, store) = fresh();
    let mut made = Vec::new();
    // Two capsules a millisecond: the id breaks the tie.
    for i in 0..7 {
        let at = who("u1", "default", "codex", T0 + i / 2);
        let capsule = json!({"taskId": format!("T{i}"), "summary": "s", "to": "claude"});
        made.push(run(&store, &at, "handoff_create", &capsule)["id"].as_str().unwrap().to_owned());
    }
    run(&store, &agent("codex"), "handoff_create", &json!({"taskId": "other", "summary": "s", "to": "gemini"}));
    let soon = crate::time::iso_ms(T0 + 10);
    run(
        &store,
        &agent("codex"),
        "handoff_create",
        &json!({"taskId": "gone", "summary": "s", "to": "claude", "expiresAt": soon}),
    );
    made.reverse();
    let me = who("u1", "default", "claude", T0 + 100);
    let mut seen = Vec::new();
    let mut page = run(&store, &me, "handoff_resume", &json!({"limit": 3}));
    for round in 0.. {
        seen.extend(ids(&page));
        let Some(cursor) = page["nextCursor"].as_str() else { break };
        if round == 0 {
            // A capsule left between pages is newer than every page: it shifts none of them.
            let later = who("u1", "default", "codex", T0 + 50);
            run(&store, &later, "handoff_create", &json!({"taskId": "late", "summary": "s", "to": "claude"}));
        }
        page = run(&store, &me, "handoff_resume", &json!({"limit": 2, "cursor": cursor}));
    }
    assert_eq!(seen, made, "every unexpired capsule addressed to claude, once, newest first");
    assert_eq!(page["nextCursor"], json!(null), "{page}");
}

#[test]
fn a_cursor_is_refused_naming_cursor_beside_a_task_or_for_another_caller() {
    let (_dir, store) = fresh();
    for i in 0..3 {
        run(
            &store,
            &agent("codex"),
            "handoff_create",
            &json!({"taskId": format!("T{i}"), "summary": "s", "to": "claude"}),
        );
        run(
            &store,
            &agent("claude"),
            "handoff_create",
            &json!({"taskId": format!("U{i}"), "summary": "s", "to": "codex"}),
        );
    }
    let first = run(&store, &agent("claude"), "handoff_resume", &json!({"limit": 1}));
    let cursor = first["nextCursor"].as_str().unwrap_or_else(|| panic!("{first}"));
    let notes_cursor = {
        for k in ["a", "b"] {
            run(&store, &agent("claude"), "note_write", &json!({"key": k, "value": 1, "kind": "decision"}));
        }
        run(&store, &agent("claude"), "note_list", &json!({"limit": 1}))["nextCursor"].as_str().unwrap().to_owned()
    };
    for (who, body) in [
        (agent("claude"), json!({"taskId": "T0", "cursor": cursor})),
        (agent("codex"), json!({"cursor": cursor})),
        (who("u2", "default", "claude", T0), json!({"cursor": cursor})),
        (agent("claude"), json!({"cursor": notes_cursor})),
        (agent("claude"), json!({"cursor": "not a cursor"})),
    ] {
        let refused = run(&store, &who, "handoff_resume", &body);
        assert_eq!(code(&refused), "VALIDATION_ERROR", "{body}");
        assert_eq!(refused["error"]["details"][0]["field"], "cursor", "{refused}");
    }
    let second = run(&store, &agent("claude"), "handoff_resume", &json!({"cursor": cursor}));
    assert_eq!(second["handoffs"].as_array().unwrap().len(), 2, "{second}");
}
