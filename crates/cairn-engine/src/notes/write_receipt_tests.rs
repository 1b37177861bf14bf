//! What a `note_write` tells its writer: a private note it wrote (`private: true` in the receipt),
//! a retry spelled with its defaults (the same request), and a private note it may not write
//! (403 naming `key` and the remedy).

use super::tests::{agent, code, fresh, replayed, run, with};
use serde_json::json;

#[test]
fn a_plain_write_to_a_private_note_is_told_the_note_is_private() {
    let (_dir, store) = fresh();
    let mine =
        json!({"key": "editor", "value": "vim", "kind": "user_preference", "private": true, "allowPrivate": true});
    let first = run(&store, &agent("claude"), "note_write", &mine);
    assert_eq!(first["private"], true, "{first}");
    // Another agent's plain write keeps the flag (notes.md), and its receipt says so.
    let plain = json!({"key": "editor", "value": "emacs", "allowPrivate": true});
    let over = run(&store, &agent("codex"), "note_write", &plain);
    assert_eq!((over["version"].clone(), over["private"].clone()), (json!(2), json!(true)), "{over}");
    let public =
        run(&store, &agent("codex"), "note_write", &json!({"key": "shell", "value": "zsh", "kind": "user_preference"}));
    assert!(public.get("private").is_none(), "{public}");
    let unhidden = run(
        &store,
        &agent("codex"),
        "note_write",
        &json!({"key": "editor", "value": "x", "private": false, "allowPrivate": true}),
    );
    assert!(unhidden.get("private").is_none(), "{unhidden}");
}

#[test]
fn a_retry_that_spells_out_the_defaults_replays_the_first_receipt() {
    let (_dir, store) = fresh();
    let me = agent("claude");
    let first =
        run(&store, &me, "note_write", &json!({"key": "k", "value": 1, "kind": "decision", "idempotencyKey": "h1"}));
    let spelled = json!({"key": "k", "value": 1, "kind": "decision", "idempotencyKey": "h1",
                         "writeMode": "replace", "visibility": "user", "userConfirmed": false});
    assert_eq!(run(&store, &me, "note_write", &spelled), replayed(&first));
    let task = run(
        &store,
        &me,
        "note_write",
        &json!({"key": "tk", "value": 1, "kind": "decision", "taskId": "T", "idempotencyKey": "t1"}),
    );
    let task_spelled = json!({"key": "tk", "value": 1, "kind": "decision", "taskId": "T", "visibility": "task", "idempotencyKey": "t1"});
    assert_eq!(run(&store, &me, "note_write", &task_spelled), replayed(&task));
    // A request that means something else still conflicts, and nothing was written by any retry.
    let merge = json!({"key": "k", "value": 1, "kind": "decision", "idempotencyKey": "h1", "writeMode": "merge"});
    assert_eq!(code(&run(&store, &me, "note_write", &merge)), "IDEMPOTENCY_CONFLICT");
    let history = run(&store, &me, "history", &json!({"key": "k"}));
    assert_eq!(history["events"].as_array().unwrap().len(), 1, "{history}");
}

#[test]
fn a_private_note_under_a_policy_that_forbids_them_is_refused_naming_key_and_the_remedy() {
    let (_dir, store) = fresh();
    let me = agent("claude");
    run(
        &store,
        &me,
        "note_write",
        &json!({"key": "priv", "value": 1, "kind": "user_fact", "private": true, "allowPrivate": true}),
    );
    let refused = run(&store, &me, "note_write", &json!({"key": "priv", "value": 2, "private": false}));
    assert_eq!(code(&refused), "FORBIDDEN");
    assert_eq!(refused["error"]["details"][0]["field"], "key", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("forget") && message.contains("CAIRN_ALLOW_PRIVATE=1"), "{message}");
}

/// A write that leaves the note as it is writes no version and no event (found by QA: a no-op
/// merge made another agent's `expectedVersion` stale, a 409 for no change, and history grew).
#[test]
fn a_write_that_changes_nothing_writes_no_version() {
    let (_dir, store) = fresh();
    let (me, other) = (agent("claude"), agent("codex"));
    let create = json!({"key": "prefs", "value": {"a": 1, "b": {"c": 2}}, "kind": "user_preference"});
    run(&store, &me, "note_write", &create);
    let same_merge = json!({"key": "prefs", "value": {"a": 1}, "writeMode": "merge"});
    let merged = run(&store, &me, "note_write", &same_merge);
    let unchanged = json!({"id": merged["id"], "key": "prefs", "version": 1, "evolution": "merged",
                           "supersedes": null, "visibility": "user", "unchanged": true});
    assert_eq!(merged, unchanged);
    let same_replace = json!({"key": "prefs", "value": {"b": {"c": 2}, "a": 1}, "expectedVersion": 1});
    let replaced = run(&store, &me, "note_write", &same_replace);
    assert_eq!((replaced["version"].clone(), replaced["unchanged"].clone()), (json!(1), json!(true)), "{replaced}");
    let events = run(&store, &me, "history", &json!({"key": "prefs"}))["events"].as_array().unwrap().len();
    assert_eq!(events, 1, "no event for a write that changed nothing");
    // Another agent's CAS on the version it read still wins.
    let theirs = json!({"key": "prefs", "value": {"a": 2}, "writeMode": "merge", "expectedVersion": 1});
    let r = run(&store, &other, "note_write", &theirs);
    assert_eq!((r["version"].clone(), r.get("unchanged")), (json!(2), None), "{r}");
    // A stale expectedVersion is a conflict even when the write would change nothing.
    let stale = json!({"key": "prefs", "value": {"a": 2}, "writeMode": "merge", "expectedVersion": 1});
    assert_eq!(code(&run(&store, &me, "note_write", &stale)), "VERSION_CONFLICT");
    // A changed kind, privacy or confidence is a change.
    let kind = json!({"key": "prefs", "value": {"a": 2, "b": {"c": 2}}, "kind": "decision"});
    assert_eq!(run(&store, &me, "note_write", &kind)["version"], json!(3));
    let sure = json!({"key": "prefs", "value": {}, "writeMode": "merge", "confidence": 0.9,
                      "confidenceBasis": "agent_inferred"});
    assert_eq!(run(&store, &me, "note_write", &sure)["version"], json!(4));
    // A retry of an unchanged write replays its receipt; the key then binds that request.
    let keyed = with(same_merge, json!({"value": {"a": 2}, "idempotencyKey": "once"}));
    let first = run(&store, &me, "note_write", &keyed);
    assert_eq!((first["version"].clone(), first["unchanged"].clone()), (json!(4), json!(true)), "{first}");
    assert_eq!(run(&store, &me, "note_write", &keyed), replayed(&first));
    let other_body = with(keyed.clone(), json!({"value": {"a": 3}}));
    assert_eq!(code(&run(&store, &me, "note_write", &other_body)), "IDEMPOTENCY_CONFLICT");
}
