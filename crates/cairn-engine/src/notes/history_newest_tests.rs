//! `history` and `audit` with `newestFirst` (`event_order.rs`): the latest events on the first
//! page, pages going back in time, each event once, a cursor bound to its order.

use super::tests::{agent, code, fresh, run};
use serde_json::{Value, json};

/// The values written, as a history page's events show them (`after.value`).
fn values(page: &Value) -> Vec<i64> {
    let events = page["events"].as_array().unwrap_or_else(|| panic!("not a page: {page}"));
    events.iter().map(|e| e["after"]["value"].as_i64().unwrap_or_else(|| panic!("no value: {e}"))).collect()
}

#[test]
fn newest_first_pages_back_from_the_latest_write_each_event_once() {
    let (_d, store) = fresh();
    for n in 1..=7 {
        let reply =
            run(&store, &agent("claude"), "note_write", &json!({"key": "plan", "kind": "decision", "value": n}));
        assert!(reply.get("error").is_none(), "{reply}");
        // Another note's events between, under other targets: not this note's.
        run(&store, &agent("codex"), "note_write", &json!({"key": "other", "kind": "decision", "value": n}));
    }
    let read = |extra: Value| {
        let mut body = json!({"key": "plan", "limit": 3});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        run(&store, &agent("codex"), "history", &body)
    };
    assert_eq!(values(&read(json!({}))), [1, 2, 3], "oldest first stays the default");
    let first = read(json!({"newestFirst": true}));
    assert_eq!(values(&first), [7, 6, 5]);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second = read(json!({"newestFirst": true, "cursor": cursor}));
    assert_eq!(values(&second), [4, 3, 2]);
    let third = read(json!({"newestFirst": true, "cursor": second["nextCursor"]}));
    assert_eq!(values(&third), [1]);
    assert_eq!(third["nextCursor"], Value::Null, "{third}");

    // A cursor of one order is refused in the other, naming `cursor`.
    let mixed = read(json!({"cursor": cursor}));
    assert_eq!(code(&mixed), "VALIDATION_ERROR", "{mixed}");
    assert_eq!(mixed["error"]["details"][0]["field"], "cursor", "{mixed}");
}

#[test]
fn audit_newest_first_gives_the_callers_latest_writes_first() {
    let (_d, store) = fresh();
    for key in ["a", "b", "c"] {
        run(&store, &agent("claude"), "note_write", &json!({"key": key, "kind": "decision", "value": 1}));
    }
    let page = run(&store, &agent("claude"), "audit", &json!({"newestFirst": true, "limit": 2}));
    let keys: Vec<&str> =
        page["events"].as_array().unwrap().iter().map(|e| e["target"]["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["c", "b"], "{page}");
    let rest = run(&store, &agent("claude"), "audit", &json!({"newestFirst": true, "cursor": page["nextCursor"]}));
    assert_eq!(rest["events"].as_array().map(Vec::len), Some(1), "{rest}");
    assert_eq!(rest["events"][0]["target"]["key"], "a", "{rest}");
}
