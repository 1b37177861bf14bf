//! `handoff_resume` as an agent acting on it reads it (a replaced capsule marked, `limit` beside
//! `taskId` refused, `skippedExpired` bounded) and `handoff_forget`, the one way to remove a
//! task's capsules short of wiping the scope.

use super::tests::{T0, agent, code, fresh, replayed, run, who};
use serde_json::json;

#[test]
fn a_listed_capsule_that_a_newer_one_replaced_is_marked_superseded() {
    let (_dir, store) = fresh();
    let codex = agent("codex");
    let old = run(&store, &codex, "handoff_create", &json!({"taskId": "X", "to": "claude", "summary": "old"}));
    let newer = run(&store, &codex, "handoff_create", &json!({"taskId": "X", "summary": "done", "status": "done"}));
    let live = run(&store, &codex, "handoff_create", &json!({"taskId": "Y", "to": "claude", "summary": "yours"}));
    let listed = run(&store, &agent("claude"), "handoff_resume", &json!({}));
    let handoffs = listed["handoffs"].as_array().unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(handoffs.len(), 2, "{listed}");
    assert_eq!(handoffs[0]["id"], live["id"]);
    assert!(handoffs[0].get("superseded").is_none(), "{listed}");
    assert_eq!(handoffs[1]["id"], old["id"]);
    assert_eq!(
        (handoffs[1]["superseded"].clone(), handoffs[1]["supersededBy"].clone()),
        (json!(true), newer["id"].clone())
    );
}

#[test]
fn limit_beside_task_id_is_refused_naming_limit() {
    let (_dir, store) = fresh();
    let me = agent("claude");
    run(&store, &me, "handoff_create", &json!({"taskId": "X", "summary": "s"}));
    let refused = run(&store, &me, "handoff_resume", &json!({"taskId": "X", "limit": 3}));
    assert_eq!(code(&refused), "VALIDATION_ERROR");
    assert_eq!(refused["error"]["details"][0]["field"], "limit", "{refused}");
    assert_eq!(run(&store, &me, "handoff_resume", &json!({"limit": 3}))["state"], "listed");
}

#[test]
fn skipped_expired_lists_the_newest_twenty_and_counts_them_all() {
    let (_dir, store) = fresh();
    let me = agent("claude");
    run(&store, &me, "handoff_create", &json!({"taskId": "beat", "summary": "lasting"}));
    let mut last = json!(null);
    for i in 0..30 {
        let at = who("u1", "default", "claude", T0 + 1 + i);
        let soon = crate::time::iso_ms(T0 + 1_000);
        last = run(&store, &at, "handoff_create", &json!({"taskId": "beat", "summary": "tick", "expiresAt": soon}));
    }
    let later = who("u1", "default", "claude", T0 + 2_000);
    let resumed = run(&store, &later, "handoff_resume", &json!({"taskId": "beat"}));
    assert_eq!(resumed["handoff"]["summary"], "lasting", "{resumed}");
    let skipped = resumed["skippedExpired"].as_array().unwrap();
    assert_eq!((skipped.len(), resumed["skippedExpiredCount"].clone()), (20, json!(30)));
    assert_eq!(skipped[0]["id"], last["id"]);
}

#[test]
fn forgetting_a_tasks_handoffs_removes_every_capsule_and_event() {
    let (_dir, store) = fresh();
    let (claude, codex) = (agent("claude"), agent("codex"));
    run(&store, &claude, "handoff_create", &json!({"taskId": "T", "summary": "token sk-secret", "to": "codex"}));
    run(&store, &claude, "handoff_create", &json!({"taskId": "T", "summary": "second"}));
    run(&store, &claude, "handoff_create", &json!({"taskId": "U", "summary": "kept", "to": "codex"}));
    let gone = run(&store, &codex, "handoff_forget", &json!({"taskId": "T"}));
    assert_eq!(gone["state"], "forgotten", "{gone}");
    assert_eq!((gone["forgotten"]["handoffs"].clone(), gone["handoff"]["capsules"].clone()), (json!(2), json!(2)));
    assert_eq!(run(&store, &codex, "handoff_resume", &json!({"taskId": "T"}))["state"], "none");
    let listed = run(&store, &codex, "handoff_resume", &json!({}));
    assert_eq!(listed["handoffs"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["handoffs"][0]["summary"], "kept");
    let audit = run(&store, &claude, "audit", &json!({"limit": 100}));
    assert!(!audit.to_string().contains("sk-secret"), "{audit}");
    assert_eq!(run(&store, &codex, "handoff_forget", &json!({"taskId": "T"}))["state"], "already_forgotten");
    assert_eq!(code(&run(&store, &codex, "handoff_forget", &json!({"taskId": "never"}))), "NOT_FOUND");
    let other_user = who("u2", "default", "claude", T0);
    assert_eq!(code(&run(&store, &other_user, "handoff_forget", &json!({"taskId": "U"}))), "NOT_FOUND");
    assert_eq!(run(&store, &codex, "handoff_resume", &json!({"taskId": "U"}))["state"], "resumed");
}

/// How many capsules the store holds, expired ones too.
fn capsules(store: &crate::store::Store) -> usize {
    store.snapshot().unwrap().prefix(super::handoff::HAND, b"").unwrap().count()
}

#[test]
fn a_retried_create_with_its_idempotency_key_stores_one_capsule_even_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let open = || crate::store::Store::open(dir.path(), crate::store::StoreOptions::default()).unwrap();
    let store = open();
    let me = agent("claude");
    let soon = crate::time::iso_ms(T0 + 60_000);
    let body =
        json!({"taskId": "T", "summary": "half done", "to": "codex", "expiresAt": soon, "idempotencyKey": "h-1"});
    let first = run(&store, &me, "handoff_create", &body);
    assert!(first["id"].is_string(), "{first}");
    drop(store);
    let store = open();
    // The same request as understood: empty lists spelled out, the instant spelled another way,
    // keys in another order; and retried after its expiry passed.
    let later = who("u1", "default", "claude", T0 + 120_000);
    let spelled = json!({"idempotencyKey": "h-1", "decisions": [], "blockers": null, "expiresAt": soon.replace(".000Z", "Z"),
        "to": "codex", "summary": "half done", "taskId": "T"});
    assert_eq!(run(&store, &later, "handoff_create", &spelled), replayed(&first));
    assert_eq!(capsules(&store), 1);
    let other =
        run(&store, &me, "handoff_create", &json!({"taskId": "T", "summary": "changed", "idempotencyKey": "h-1"}));
    assert_eq!(code(&other), "IDEMPOTENCY_CONFLICT");
    assert_eq!(other["error"]["details"][0]["field"], "idempotencyKey", "{other}");
    // The key is the agent's own: another agent's same key is another request.
    let theirs = run(
        &store,
        &agent("codex"),
        "handoff_create",
        &json!({"taskId": "T", "summary": "x", "idempotencyKey": "h-1"}),
    );
    assert_ne!(theirs["id"], first["id"], "{theirs}");
    assert_eq!(capsules(&store), 2);
    // One key, one request, whatever the verb: a note write under it is another request.
    let note = json!({"key": "k", "value": 1, "kind": "decision", "idempotencyKey": "h-1"});
    assert_eq!(code(&run(&store, &me, "note_write", &note)), "IDEMPOTENCY_CONFLICT");
}

#[test]
fn forgetting_a_tasks_handoffs_takes_their_idempotency_records() {
    let (_dir, store) = fresh();
    let me = agent("claude");
    let body = json!({"taskId": "secret-task", "summary": "s", "idempotencyKey": "k1"});
    let first = run(&store, &me, "handoff_create", &body);
    assert_eq!(run(&store, &me, "handoff_forget", &json!({"taskId": "secret-task"}))["state"], "forgotten");
    for kv in store.snapshot().unwrap().prefix(super::idempotency::IDEM, b"").unwrap() {
        let (k, v) = kv.unwrap();
        assert!(!String::from_utf8_lossy(&v).contains("secret-task"), "{}", String::from_utf8_lossy(&k));
    }
    let again = run(&store, &me, "handoff_create", &body);
    assert_ne!(again["id"], first["id"], "a retry after the forget creates anew: {again}");
    assert_eq!(run(&store, &me, "handoff_resume", &json!({"taskId": "secret-task"}))["state"], "resumed");
}

/// `handoff_resume {}` with nothing addressed to the caller here names the caller's other scopes
/// where some wait, with counts: only its own user's, only those `readableScopes` allows, only
/// unexpired capsules addressed to its agent; never on a page after the first or beside a list.
#[test]
fn an_empty_list_names_the_callers_other_scopes_where_handoffs_wait() {
    let (_dir, store) = fresh();
    let leave = |user: &str, scope: &str, body: serde_json::Value| {
        let r = run(&store, &who(user, scope, "codex", T0), "handoff_create", &body);
        assert!(r.get("error").is_none(), "{r}");
    };
    let to_claude = |task: &str| json!({"taskId": task, "to": "claude", "summary": "s"});
    leave("u1", "work", to_claude("a"));
    leave("u1", "work", to_claude("b"));
    leave("u1", "work", json!({"taskId": "c", "to": "gemini", "summary": "not yours"}));
    leave("u1", "secret", to_claude("d"));
    let soon = crate::time::iso_ms(T0 + 1_000);
    leave("u1", "stale", json!({"taskId": "e", "to": "claude", "summary": "s", "expiresAt": soon}));
    leave("u2", "mine", to_claude("f"));
    let me = who("u1", "default", "claude", T0 + 2_000);
    let every = run(&store, &me, "handoff_resume", &json!({}));
    assert_eq!(every["handoffs"], json!([]), "{every}");
    let scopes = json!([{"scope": "work", "handoffs": 2}, {"scope": "secret", "handoffs": 1}]);
    assert_eq!(every["elsewhere"]["scopes"], scopes, "{every}");
    let hint = every["elsewhere"]["hint"].as_str().unwrap();
    assert!(hint.contains(r#""work" (2), "secret" (1)"#) && hint.contains("`scope`"), "{hint}");
    assert!(every["elsewhere"].get("more").is_none(), "{every}");
    // A token limited to some scopes hears of those only; of none, nothing.
    let limited = run(&store, &me, "handoff_resume", &json!({"readableScopes": ["default", "work"]}));
    assert_eq!(limited["elsewhere"]["scopes"], json!([{"scope": "work", "handoffs": 2}]), "{limited}");
    assert!(!limited.to_string().contains("secret"), "{limited}");
    let alone = run(&store, &me, "handoff_resume", &json!({"readableScopes": ["default"]}));
    assert!(alone.get("elsewhere").is_none(), "{alone}");
    // Another agent, or the caller where something is addressed to it, gets no such hint.
    assert!(run(&store, &who("u1", "default", "aider", T0), "handoff_resume", &json!({})).get("elsewhere").is_none());
    let there = run(&store, &who("u1", "work", "claude", T0), "handoff_resume", &json!({}));
    assert_eq!(there["handoffs"].as_array().map(Vec::len), Some(2), "{there}");
    assert!(there.get("elsewhere").is_none(), "{there}");
    let bad = run(&store, &me, "handoff_resume", &json!({"readableScopes": "work"}));
    assert_eq!(code(&bad), "VALIDATION_ERROR");
}

/// A task resumed from a scope it does not wait in answers `none` naming the caller's other
/// scopes where it does: only its own user's, only those `readableScopes` allows, only where an
/// unexpired capsule of that task waits.
#[test]
fn a_task_resumed_from_another_scope_names_the_scopes_where_it_waits() {
    let (_dir, store) = fresh();
    let leave = |user: &str, scope: &str, body: serde_json::Value| {
        let r = run(&store, &who(user, scope, "codex", T0), "handoff_create", &body);
        assert!(r.get("error").is_none(), "{r}");
    };
    leave("u1", "default", json!({"taskId": "t1", "summary": "s"}));
    leave("u1", "work", json!({"taskId": "t1", "summary": "s"}));
    leave("u1", "work", json!({"taskId": "t2", "summary": "s"}));
    let soon = crate::time::iso_ms(T0 + 1_000);
    leave("u1", "stale", json!({"taskId": "t1", "summary": "s", "expiresAt": soon}));
    leave("u2", "theirs", json!({"taskId": "t1", "summary": "s"}));
    let me = who("u1", "defualt", "claude", T0 + 2_000);
    let miss = run(&store, &me, "handoff_resume", &json!({"taskId": "t1"}));
    assert_eq!(miss["state"], "none", "{miss}");
    let scopes = json!([{"scope": "default", "handoffs": 1}, {"scope": "work", "handoffs": 1}]);
    assert_eq!(miss["elsewhere"]["scopes"], scopes, "{miss}");
    let hint = miss["elsewhere"]["hint"].as_str().unwrap();
    assert!(hint.contains(r#""default", "work""#) && hint.contains("`scope`"), "{hint}");
    assert!(!miss.to_string().contains("stale") && !miss.to_string().contains("theirs"), "{miss}");
    let limited = run(&store, &me, "handoff_resume", &json!({"taskId": "t1", "readableScopes": ["defualt", "work"]}));
    assert_eq!(limited["elsewhere"]["scopes"], json!([{"scope": "work", "handoffs": 1}]), "{limited}");
    let alone = run(&store, &me, "handoff_resume", &json!({"taskId": "t1", "readableScopes": ["defualt"]}));
    assert!(alone.get("elsewhere").is_none(), "{alone}");
    // A task no scope of the caller's holds, or one resumed where it waits, gets no such hint.
    let never = run(&store, &me, "handoff_resume", &json!({"taskId": "t9"}));
    assert!(never["state"] == "none" && never.get("elsewhere").is_none(), "{never}");
    let here = run(&store, &who("u1", "work", "claude", T0 + 2_000), "handoff_resume", &json!({"taskId": "t2"}));
    assert!(here["state"] == "resumed" && here.get("elsewhere").is_none(), "{here}");
}
