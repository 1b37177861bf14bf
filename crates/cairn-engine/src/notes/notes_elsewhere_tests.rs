//! `note_list` and `history {key}` that find nothing in the caller's scope name its other scopes
//! holding what it asked for (`notes_elsewhere.rs`): only its own user's, only scopes
//! `readableScopes` allows, only notes it could read there with the same request.

use super::tests::{code, fresh, run, who};
use crate::store::Store;
use serde_json::{Value, json};

/// u1's notes in `work` and `secret`, u2's in `theirs`.
fn stored() -> (tempfile::TempDir, Store) {
    let (dir, store) = fresh();
    let write = |user: &str, scope: &str, agent: &str, body: Value| {
        let mut body = body;
        body["value"] = json!("v");
        body["allowPrivate"] = json!(true);
        if body.get("kind").is_none() {
            body["kind"] = json!("user_fact");
        }
        let r = run(&store, &who(user, scope, agent, 1), "note_write", &body);
        assert!(r.get("error").is_none(), "{r}");
    };
    write("u1", "work", "claude", json!({"key": "deploy", "kind": "decision"}));
    write("u1", "work", "claude", json!({"key": "plan"}));
    write("u1", "work", "claude", json!({"key": "state", "visibility": "task", "taskId": "t1"}));
    write("u1", "work", "codex", json!({"key": "mine", "visibility": "agent"}));
    write("u1", "work", "claude", json!({"key": "hidden", "private": true}));
    write("u1", "secret", "claude", json!({"key": "plan"}));
    write("u2", "theirs", "claude", json!({"key": "deploy", "kind": "decision"}));
    write("u2", "theirs", "claude", json!({"key": "only-theirs"}));
    (dir, store)
}

fn scopes(reply: &Value) -> Value {
    reply["elsewhere"]["scopes"].clone()
}

#[test]
fn an_empty_list_names_the_scopes_holding_notes_the_same_request_would_list() {
    let (_dir, store) = stored();
    let me = who("u1", "defualt", "claude", 1);
    let list = |body: Value| run(&store, &me, "note_list", &body);
    let every = list(json!({}));
    assert_eq!(every["notes"], json!([]), "{every}");
    // work: deploy and plan (not the task note, codex's agent note nor the private one).
    assert_eq!(scopes(&every), json!([{"scope": "work", "notes": 2}, {"scope": "secret", "notes": 1}]), "{every}");
    let hint = every["elsewhere"]["hint"].as_str().unwrap();
    assert!(hint.contains(r#""work" (2), "secret" (1)"#) && hint.contains("`scope`"), "{hint}");
    assert!(every["elsewhere"].get("more").is_none(), "{every}");
    // The filters hold there too: key, kind, task, private.
    assert_eq!(
        scopes(&list(json!({"key": "plan"}))),
        json!([{"scope": "secret", "notes": 1}, {"scope": "work", "notes": 1}])
    );
    assert_eq!(scopes(&list(json!({"kind": "decision"}))), json!([{"scope": "work", "notes": 1}]));
    assert_eq!(scopes(&list(json!({"visibility": "task", "taskId": "t1"}))), json!([{"scope": "work", "notes": 1}]));
    let private = list(json!({"includePrivate": true, "allowPrivate": true}));
    assert_eq!(scopes(&private), json!([{"scope": "work", "notes": 3}, {"scope": "secret", "notes": 1}]));
    for nothing in
        [json!({"key": "hidden"}), json!({"key": "mine"}), json!({"key": "only-theirs"}), json!({"taskId": "t2"})]
    {
        let r = list(nothing.clone());
        assert!(r.get("elsewhere").is_none(), "{nothing}: {r}");
    }
    // Codex sees its own agent note there.
    let codex = run(&store, &who("u1", "defualt", "codex", 1), "note_list", &json!({"key": "mine"}));
    assert_eq!(scopes(&codex), json!([{"scope": "work", "notes": 1}]), "{codex}");
    // A token limited to some scopes hears of those only; of none, nothing.
    let limited = list(json!({"readableScopes": ["defualt", "secret"]}));
    assert_eq!(scopes(&limited), json!([{"scope": "secret", "notes": 1}]), "{limited}");
    assert!(!limited.to_string().contains("work"), "{limited}");
    assert!(list(json!({"readableScopes": ["defualt"]})).get("elsewhere").is_none());
    assert!(!every.to_string().contains("theirs"), "{every}");
    // As of a time, or for memory_context's ranking (`offer: false`), nothing is looked for.
    assert!(list(json!({"as_of": 2})).get("elsewhere").is_none());
    assert!(list(json!({"offer": false})).get("elsewhere").is_none());
    assert_eq!(code(&list(json!({"readableScopes": "work"}))), "VALIDATION_ERROR");
}

#[test]
fn a_query_names_other_scopes_only_when_this_one_holds_no_note_the_filters_admit() {
    let (_dir, store) = stored();
    let empty = run(&store, &who("u1", "defualt", "claude", 1), "note_list", &json!({"query": "rollout"}));
    assert_eq!(scopes(&empty), json!([{"scope": "work", "notes": 2}, {"scope": "secret", "notes": 1}]), "{empty}");
    assert!(empty["elsewhere"]["hint"].as_str().unwrap().contains("query not tried"), "{empty}");
    // Where notes are, a query that matches none is answered here.
    let here = run(&store, &who("u1", "secret", "claude", 1), "note_list", &json!({"query": "rollout"}));
    assert!(here["notes"] == json!([]) && here.get("elsewhere").is_none(), "{here}");
    // A scope that holds notes lists them and names no other.
    let work = run(&store, &who("u1", "work", "claude", 1), "note_list", &json!({}));
    assert!(work.get("elsewhere").is_none(), "{work}");
}

#[test]
fn a_history_miss_names_the_scopes_where_the_key_is() {
    let (_dir, store) = stored();
    let me = who("u1", "defualt", "claude", 1);
    let history = |body: Value| run(&store, &me, "history", &body);
    let miss = history(json!({"key": "deploy"}));
    assert_eq!(code(&miss), "NOT_FOUND", "{miss}");
    let there = json!([{"elsewhere": {"scopes": [{"scope": "work", "notes": 1}], "hint": miss["error"]["details"][0]["elsewhere"]["hint"]}}]);
    assert_eq!(miss["error"]["details"], there, "{miss}");
    let message = miss["error"]["message"].as_str().unwrap();
    assert!(message.contains(r#"scope "work" (1) holds"#) && message.contains("`scope`"), "{message}");
    assert!(!miss.to_string().contains("theirs"), "{miss}");
    // Unnamed, a task's note at the key counts; named, only the note named.
    let task = history(json!({"key": "state"}));
    assert_eq!(task["error"]["details"].as_array().unwrap().last().unwrap()["elsewhere"]["scopes"][0]["scope"], "work");
    let other_task = history(json!({"key": "state", "visibility": "task", "taskId": "t2"}));
    assert!(!other_task.to_string().contains("elsewhere"), "{other_task}");
    // Never another agent's own note, nor a private one unless private reads are asked for.
    assert!(!history(json!({"key": "mine"})).to_string().contains("elsewhere"));
    assert!(!history(json!({"key": "hidden"})).to_string().contains("elsewhere"));
    let private = history(json!({"key": "hidden", "allowPrivate": true, "includePrivate": true}));
    assert_eq!(
        private["error"]["details"][0]["elsewhere"]["scopes"],
        json!([{"scope": "work", "notes": 1}]),
        "{private}"
    );
    // Never a scope the token may not use, never another user's.
    assert!(!history(json!({"key": "deploy", "readableScopes": ["defualt"]})).to_string().contains("work"));
    let u2 = run(&store, &who("u2", "elsewhere", "claude", 1), "history", &json!({"key": "plan"}));
    assert!(!u2.to_string().contains("work") && !u2.to_string().contains("secret"), "{u2}");
}
