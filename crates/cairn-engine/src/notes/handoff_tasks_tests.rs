//! The index of each task's capsules (`handoff_tasks.rs`): a task's verbs read its newest
//! capsules, not every one it ever held; resumes answer as they did when they read them all;
//! imports, forgets and whole-scope forgets keep it in step; a store written before it is indexed
//! once, by its first handoff verb or import.

use super::handoff::Capsule;
use super::handoff_index_tests::{damage, task_capsules};
use super::handoff_tasks::TASKS;
use super::tests::{T0, agent, code, fresh, run, who};
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::store::{Store, StoreOptions};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Leaves a capsule on `task` at `at` (its `createdAt`), expiring at `expires`; the reply.
fn leave(store: &Store, at: i64, task: &str, expires: Option<i64>) -> Value {
    let mut body = json!({"taskId": task, "summary": format!("{task} at {at}"), "to": "claude"});
    if let Some(e) = expires {
        body["expiresAt"] = json!(crate::time::iso_ms(e));
    }
    let reply = run(store, &who("u1", "default", "codex", at), "handoff_create", &body);
    assert!(reply.get("error").is_none(), "{reply}");
    reply
}

/// Overwrites the stored capsules of `task` with `ids` by bytes no capsule decodes from.
fn damage_task(store: &Store, task: &str, ids: &[Value]) {
    let part = Partition::new("local", "u1", "default").unwrap();
    let keys: Vec<Vec<u8>> = ids
        .iter()
        .map(|id| part.key(&[task.as_bytes(), b"\0", &id.as_str().unwrap().parse::<u64>().unwrap().to_be_bytes()]))
        .collect();
    damage(store, keys);
}

fn entries(store: &Store) -> usize {
    let snap = store.snapshot().unwrap();
    snap.prefix(TASKS, &[]).unwrap().map(Result::unwrap).filter(|(k, _)| !k.is_empty()).count()
}

/// The task's verbs read its newest capsules only: with every older capsule of the task damaged
/// on disk, resuming it, handing it off again and listing what is addressed to the agent still
/// answer (when each read every capsule of the task, the first damaged one failed them all, and
/// a task handed off 2,000 times cost 8 ms a create: `examples/handoff_task.rs`).
#[test]
fn a_tasks_verbs_read_its_newest_capsules_not_all_it_held() {
    let (_dir, store) = fresh();
    let old: Vec<Value> = (0..30).map(|i| leave(&store, T0 + i, "long-job", None)["id"].clone()).collect();
    let expired = leave(&store, T0 + 50, "long-job", Some(T0 + 60))["id"].clone();
    let newest = leave(&store, T0 + 40, "long-job", None)["id"].clone();
    damage_task(&store, "long-job", &old);
    let now = who("u1", "default", "claude", T0 + 100);
    let resumed = run(&store, &now, "handoff_resume", &json!({"taskId": "long-job"}));
    assert_eq!(resumed["state"], "resumed", "{resumed}");
    assert_eq!(resumed["handoff"]["id"], newest);
    assert_eq!(resumed["skippedExpired"][0]["id"], expired, "{resumed}");
    let listed = run(&store, &now, "handoff_resume", &json!({"limit": 1}));
    assert_eq!(listed["handoffs"][0]["id"], newest, "{listed}");
    let next = run(&store, &now, "handoff_create", &json!({"taskId": "long-job", "summary": "and on"}));
    assert_eq!(next["replaces"]["id"], newest, "{next}");
}

#[test]
fn an_import_finds_its_duplicates_among_capsules_left_at_the_same_time() {
    let (_dir, store) = fresh();
    for i in 0..5 {
        leave(&store, T0 + i, "T", None);
    }
    // Two capsules left at one time that differ: both are kept, and both found again.
    run(&store, &who("u1", "default", "codex", T0 + 9), "handoff_create", &json!({"taskId": "T", "summary": "a"}));
    run(&store, &who("u1", "default", "codex", T0 + 9), "handoff_create", &json!({"taskId": "T", "summary": "b"}));
    let part = Partition::new("local", "u1", "default").unwrap();
    let records: Vec<Value> = crate::knowledge::testing_api::export_pages(&store, &part, 3).concat();
    let copy = who("u1", "copy", "codex", T0 + 20);
    let first = knowledge(&store, &copy, "import", &json!({"records": records}));
    assert_eq!(first["imported"]["handoffs"], 7, "{first}");
    // Again, and again with the records stripped of their origin (so only content can match).
    let again = knowledge(&store, &copy, "import", &json!({"records": records}));
    assert_eq!(again["imported"]["handoffs"], 0, "{again}");
    let bare: Vec<Value> = records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if r["type"] == "handoff" {
                r.as_object_mut().unwrap().remove("id");
            }
            r
        })
        .collect();
    let bare_again = knowledge(&store, &copy, "import", &json!({"records": bare}));
    assert_eq!(bare_again["imported"]["handoffs"], 0, "{bare_again}");
    assert_eq!(entries(&store), 14);
}

#[test]
fn forgets_keep_the_index_in_step() {
    let (_dir, store) = fresh();
    leave(&store, T0, "secret", None);
    leave(&store, T0 + 1, "secret", Some(T0 + 5));
    leave(&store, T0 + 2, "kept", None);
    assert_eq!(entries(&store), 3);
    assert_eq!(run(&store, &agent("codex"), "handoff_forget", &json!({"taskId": "secret"}))["state"], "forgotten");
    assert_eq!(entries(&store), 1);
    let again = leave(&store, T0 + 3, "secret", None);
    let resumed = run(&store, &agent("claude"), "handoff_resume", &json!({"taskId": "secret"}));
    assert_eq!(resumed["handoff"]["id"], again["id"], "a task handed off anew after a forget");
    assert_eq!(knowledge(&store, &agent("codex"), "forget", &json!({"all": true}))["state"], "forgotten");
    assert_eq!(entries(&store), 0, "a scope forgotten whole takes its entries");
}

fn knowledge(store: &Store, who: &Caller, verb: &str, body: &Value) -> Value {
    let reply = crate::knowledge::api::call(store, verb, who, &serde_json::to_vec(body).unwrap()).unwrap();
    serde_json::from_slice(&reply).unwrap()
}

/// Puts `store` back into the layout before the index: no `n.hand_task`, nor its marker.
fn as_written_before(store: &Store) {
    store.write(|tx| tx.delete_prefix(TASKS, &[]).map(drop)).unwrap();
    store.forget_marks();
}

#[test]
fn a_store_written_before_the_index_is_indexed_by_its_first_handoff_verb_or_import() {
    let dir = tempfile::tempdir().unwrap();
    let open = || Store::open(dir.path(), StoreOptions::default()).unwrap();
    let store = open();
    for i in 0..4 {
        leave(&store, T0 + i, &format!("T{}", i % 2), if i == 3 { Some(T0 + 10) } else { None });
    }
    let later = who("u1", "default", "claude", T0 + 50);
    let before: Vec<Value> =
        ["T0", "T1"].iter().map(|t| run(&store, &later, "handoff_resume", &json!({"taskId": t}))).collect();
    as_written_before(&store);
    drop(store);
    let store = open();
    assert_eq!(entries(&store), 0);
    run(&store, &agent("claude"), "note_list", &json!({}));
    assert_eq!(entries(&store), 0, "other notes verbs leave it as it is");
    let after: Vec<Value> =
        ["T0", "T1"].iter().map(|t| run(&store, &later, "handoff_resume", &json!({"taskId": t}))).collect();
    assert_eq!(after, before);
    assert_eq!(entries(&store), 4);
    // `memory_status` counts the unexpired capsules from it, built first on an older store.
    as_written_before(&store);
    let status = knowledge(&store, &later, "status", &json!({}));
    assert_eq!(status["scopes"][0]["handoffs"], 3, "{status}");
    assert_eq!(entries(&store), 4);
    // An import on an older store builds it first, so the duplicates it checks for are found.
    as_written_before(&store);
    let part = Partition::new("local", "u1", "default").unwrap();
    let mut records: Vec<Value> = crate::knowledge::testing_api::export_pages(&store, &part, 100).concat();
    for r in &mut records {
        r.as_object_mut().unwrap().remove("id");
    }
    let imported = knowledge(&store, &agent("codex"), "import", &json!({"records": records}));
    assert_eq!(imported["imported"]["handoffs"], 0, "{imported}");
    assert_eq!(entries(&store), 4);
}

#[test]
fn a_fresh_store_is_indexed_from_its_first_capsule() {
    let (_dir, store) = fresh();
    let txn = |store: &Store| store.snapshot().unwrap().txn();
    let before = txn(&store);
    assert_eq!(run(&store, &agent("claude"), "handoff_resume", &json!({"taskId": "T"}))["state"], "none");
    assert_eq!(txn(&store), before, "a store with no capsule is left as it is");
    leave(&store, T0, "T", None);
    assert_eq!(txn(&store), before + 1, "the first capsule marks it, in its transaction");
    assert!(store.snapshot().unwrap().get(TASKS, &[]).unwrap().is_some());
    let refused = run(&store, &agent("codex"), "handoff_create", &json!({"taskId": "T", "summary": " "}));
    assert_eq!(code(&refused), "VALIDATION_ERROR");
    assert_eq!(txn(&store), before + 1, "nothing is built or written after");
}

/// `handoff_resume {taskId}` as it answered when it read every capsule of the task.
fn reference(store: &Store, caller: &Caller, task: &str) -> Value {
    let snap = store.snapshot().unwrap();
    let capsules = task_capsules(&snap, &caller.part, task);
    let newer_expired: Vec<&Capsule> = capsules.iter().rev().take_while(|c| c.expired(caller.now)).collect();
    let skipped: Vec<Value> = newer_expired
        .iter()
        .take(super::handoff::MAX_SKIPPED_LISTED)
        .map(|c| json!({ "id": c.id.to_string(), "expiredAt": crate::time::iso_ms(c.expires_at.unwrap()) }))
        .collect();
    match capsules.iter().rev().find(|c| !c.expired(caller.now)) {
        Some(c) if skipped.is_empty() => json!({ "state": "resumed", "handoff": c.render() }),
        Some(c) => json!({ "state": "resumed", "handoff": c.render(), "skippedExpired": skipped,
                           "skippedExpiredCount": newer_expired.len() }),
        None => match newer_expired.first() {
            Some(n) => json!({ "state": "expired", "taskId": task, "id": n.id.to_string(),
                               "expiredAt": crate::time::iso_ms(n.expires_at.unwrap()) }),
            None => json!({ "state": "none", "taskId": task }),
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Capsules left out of time order (as an import keeps a capsule's time under a new id), some
    /// expiring, on two tasks, some forgotten: every resume at every time answers as the read of
    /// every capsule did, and each create names as `replaces` what that read would have resumed.
    #[test]
    fn resuming_a_task_matches_reading_all_its_capsules(
        steps in prop::collection::vec((0..2_u8, 0..40_i64, prop::option::of(1..30_i64), 0..12_u8), 1..40),
        times in prop::collection::vec(0..80_i64, 1..6),
    ) {
        let (_dir, store) = fresh();
        for (task, at, expires, forget) in steps {
            let task = format!("T{task}");
            if forget == 0 {
                run(&store, &agent("codex"), "handoff_forget", &json!({"taskId": task}));
                continue;
            }
            // `createdAt`s spread from T0 + 40, out of the order the capsules are left in.
            let now = who("u1", "default", "codex", T0 + 40 + at);
            let expected = reference(&store, &now, &task);
            let mut body = json!({"taskId": task, "summary": "s"});
            if let Some(e) = expires {
                body["expiresAt"] = json!(crate::time::iso_ms(T0 + 40 + at + e));
            }
            let made = run(&store, &now, "handoff_create", &body);
            prop_assert!(made.get("error").is_none(), "{}", made);
            let named = made.get("replaces").map(|r| r["id"].clone());
            let resumed = (expected["state"] == "resumed").then(|| expected["handoff"]["id"].clone());
            prop_assert_eq!(named, resumed);
        }
        for t in times {
            for task in ["T0", "T1"] {
                let caller = who("u1", "default", "claude", T0 + 40 + t);
                let got = run(&store, &caller, "handoff_resume", &json!({"taskId": task}));
                let want = reference(&store, &caller, task);
                if want["state"] == "none" {
                    prop_assert_eq!(&got["state"], "none");
                } else {
                    prop_assert_eq!(got, want);
                }
            }
        }
    }
}
