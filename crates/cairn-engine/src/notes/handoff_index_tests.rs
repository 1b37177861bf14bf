//! The index of addressed handoffs (`handoff_index.rs`): `handoff_resume {}` pages by a seek, in
//! the order and with the replies it had when each page read every capsule; forgets, imports and
//! whole-scope forgets keep the index in step; a store written with `n.hand_to` is indexed once.

use super::events::PAGE_BYTES;
use super::handoff::{Capsule, HAND};
use super::handoff_index::ADDRESSED;
use super::tests::{T0, agent, code, fresh, run, who};
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::store::{Store, StoreOptions};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::HashMap;

fn ids(reply: &Value) -> Vec<String> {
    let handoffs = reply["handoffs"].as_array().unwrap_or_else(|| panic!("not a listing: {reply}"));
    handoffs.iter().map(|h| h["id"].as_str().unwrap().to_owned()).collect()
}

/// Leaves a capsule on `task` at `at` (its `createdAt`), addressed to `to`; its id.
fn leave(store: &Store, at: i64, task: &str, to: Option<&str>, expires: Option<i64>) -> String {
    let mut body = json!({"taskId": task, "summary": format!("on {task}")});
    if let Some(to) = to {
        body["to"] = json!(to);
    }
    if let Some(at) = expires {
        body["expiresAt"] = json!(crate::time::iso_ms(at));
    }
    let reply = run(store, &who("u1", "default", "codex", at), "handoff_create", &body);
    reply["id"].as_str().unwrap_or_else(|| panic!("{reply}")).to_owned()
}

/// Every page of `handoff_resume {}` for `me`, `limit` at a time.
fn pages(store: &Store, me: &Caller, limit: usize) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut body = json!({"limit": limit});
    loop {
        let page = run(store, me, "handoff_resume", &body);
        out.push(ids(&page));
        let Some(cursor) = page["nextCursor"].as_str() else { return out };
        body["cursor"] = json!(cursor);
    }
}

/// The entries of the index, as (key, value), marker aside.
fn index(store: &Store) -> Vec<(Vec<u8>, Vec<u8>)> {
    let snap = store.snapshot().unwrap();
    snap.prefix(ADDRESSED, &[]).unwrap().map(Result::unwrap).filter(|(k, _)| !k.is_empty()).collect()
}

fn mentions(entries: &[(Vec<u8>, Vec<u8>)], text: &str) -> bool {
    entries.iter().any(|(k, v)| [k, v].iter().any(|b| String::from_utf8_lossy(b).contains(text)))
}

#[test]
fn pages_run_newest_created_first_then_highest_id_and_pass_over_expired_ones() {
    let (_dir, store) = fresh();
    // Left out of time order (as an import keeps a capsule's time under a new id); ties on
    // `createdAt` go to the higher id.
    let a = leave(&store, T0 + 5, "A", Some("claude"), None);
    let b = leave(&store, T0 + 1, "B", Some("claude"), None);
    let c = leave(&store, T0 + 5, "C", Some("claude"), None);
    let _gone = leave(&store, T0 + 4, "D", Some("claude"), Some(T0 + 50));
    let e = leave(&store, T0 + 3, "E", Some("claude"), Some(T0 + 5_000));
    let _not_mine = leave(&store, T0 + 9, "F", Some("gemini"), None);
    let _nobodys = leave(&store, T0 + 9, "G", None, None);
    let me = who("u1", "default", "claude", T0 + 100);
    assert_eq!(pages(&store, &me, 2), [vec![c.clone(), a.clone()], vec![e.clone(), b.clone()]]);
    assert_eq!(pages(&store, &me, 100), [vec![c, a, e, b]]);
}

#[test]
fn a_cursor_resumes_after_its_capsule_whatever_was_left_or_forgotten_meanwhile() {
    let (_dir, store) = fresh();
    let made: Vec<String> =
        (0..6).map(|i| leave(&store, T0 + 10 * i, &format!("T{i}"), Some("claude"), None)).collect();
    let me = who("u1", "default", "claude", T0 + 1_000);
    let first = run(&store, &me, "handoff_resume", &json!({"limit": 2}));
    assert_eq!(ids(&first), [made[5].clone(), made[4].clone()]);
    let cursor = first["nextCursor"].as_str().unwrap();
    // Newer than every page: on none. Older than the cursor's capsule (an import keeps its time):
    // on a later page, in its place. The cursor's own capsule forgotten: the seek still lands.
    let _newer = leave(&store, T0 + 500, "N", Some("claude"), None);
    let older = leave(&store, T0 + 25, "O", Some("claude"), None);
    assert_eq!(run(&store, &agent("codex"), "handoff_forget", &json!({"taskId": "T4"}))["state"], "forgotten");
    let rest = run(&store, &me, "handoff_resume", &json!({"limit": 3, "cursor": cursor}));
    assert_eq!(ids(&rest), [made[3].clone(), older, made[2].clone()]);
    let cursor = rest["nextCursor"].as_str().unwrap();
    let last = run(&store, &me, "handoff_resume", &json!({"limit": 3, "cursor": cursor}));
    assert_eq!((ids(&last), &last["nextCursor"]), (vec![made[1].clone(), made[0].clone()], &json!(null)));
}

/// A page reads the entries of its own capsules, one more, and the expired ones it passes over,
/// never the capsules further down: a capsule damaged there leaves the first pages readable (when
/// every page read every capsule addressed to the caller, any one of them failed them all).
/// Overwrites the stored capsules at `keys` (of `n.hand`) by bytes no capsule decodes from.
pub(super) fn damage(store: &Store, keys: Vec<Vec<u8>>) {
    store
        .write(move |tx| {
            for k in &keys {
                tx.put(HAND, k, b"not a capsule")?;
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_page_reads_no_capsule_beyond_it() {
    let (_dir, store) = fresh();
    let old: Vec<String> = (0..20).map(|i| leave(&store, T0 + i, &format!("old{i}"), Some("claude"), None)).collect();
    let expired = leave(&store, T0 + 100, "stale", Some("claude"), Some(T0 + 200));
    let fresh_ones: Vec<String> =
        (0..3).map(|i| leave(&store, T0 + 300 + i, &format!("new{i}"), Some("claude"), None)).collect();
    let part = Partition::new("local", "u1", "default").unwrap();
    let damaged: Vec<(String, &String)> =
        old.iter().enumerate().map(|(i, id)| (format!("old{i}"), id)).chain([("stale".to_owned(), &expired)]).collect();
    let keys: Vec<Vec<u8>> = damaged
        .iter()
        .map(|(task, id)| part.key(&[task.as_bytes(), b"\0", &id.parse::<u64>().unwrap().to_be_bytes()]))
        .collect();
    damage(&store, keys);
    let me = who("u1", "default", "claude", T0 + 1_000);
    let body = serde_json::to_vec(&json!({"limit": 3})).unwrap();
    let page = super::api::call(&store, "handoff_resume", &me, &body).map(|b| serde_json::from_slice::<Value>(&b));
    let page = page.unwrap_or_else(|e| panic!("a damaged capsule beyond the page failed it: {e}")).unwrap();
    let newest: Vec<String> = fresh_ones.iter().rev().cloned().collect();
    assert_eq!(ids(&page), newest);
    assert!(page["nextCursor"].is_string(), "{page}");
}

#[test]
fn forgets_and_imports_keep_the_index_in_step() {
    let (_dir, store) = fresh();
    leave(&store, T0, "secret-task", Some("claude"), None);
    leave(&store, T0 + 1, "secret-task", Some("gemini"), Some(T0 + 5));
    let kept = leave(&store, T0 + 2, "kept", Some("claude"), None);
    assert_eq!(index(&store).len(), 3, "each addressed capsule is filed");
    assert_eq!(run(&store, &agent("codex"), "handoff_forget", &json!({"taskId": "secret-task"}))["state"], "forgotten");
    let left = index(&store);
    assert_eq!(left.len(), 1, "the task's entries went with it");
    assert!(!mentions(&left, "secret-task"));
    let me = who("u1", "default", "claude", T0 + 10);
    assert_eq!(pages(&store, &me, 5), [vec![kept]]);
    // An import files what it stores, in its own scope.
    let part = Partition::new("local", "u1", "default").unwrap();
    let records: Vec<Value> = crate::knowledge::testing_api::export_pages(&store, &part, 100).concat();
    let copy = who("u1", "copy", "codex", T0 + 20);
    let imported = knowledge(&store, &copy, "import", &json!({"records": records}));
    assert_eq!(imported["imported"]["handoffs"], 1, "{imported}");
    let there = run(&store, &who("u1", "copy", "claude", T0 + 30), "handoff_resume", &json!({}));
    assert_eq!(there["handoffs"][0]["taskId"], "kept", "{there}");
    assert_eq!(index(&store).len(), 2);
    // A scope forgotten whole takes its entries; another scope keeps its own.
    assert_eq!(knowledge(&store, &copy, "forget", &json!({"all": true}))["state"], "forgotten");
    let left = index(&store);
    assert_eq!(left.len(), 1);
    assert!(!left[0].0.starts_with(Partition::new("local", "u1", "copy").unwrap().prefix()));
    assert_eq!(knowledge(&store, &agent("codex"), "delete_user", &json!({}))["state"], "forgotten");
    assert!(index(&store).is_empty(), "deleting the user takes every entry");
    assert_eq!(code(&run(&store, &me, "handoff_forget", &json!({"taskId": "kept"}))), "NOT_FOUND");
}

fn knowledge(store: &Store, who: &Caller, verb: &str, body: &Value) -> Value {
    let reply = crate::knowledge::api::call(store, verb, who, &serde_json::to_vec(body).unwrap()).unwrap();
    serde_json::from_slice(&reply).unwrap()
}

/// Puts `store` back into the layout before the index: no `n.hand_for` (nor its marker), and
/// `n.hand_to` `part | to \0 | id BE` → taskId for every addressed capsule.
fn as_written_before(store: &Store) {
    store
        .write(|tx| {
            tx.delete_prefix(ADDRESSED, &[])?;
            for (k, v) in tx.prefix(HAND, &[])? {
                let capsule = Capsule::decode(&v)?;
                if let Some(to) = &capsule.to {
                    let part = Partition::of_key(&k)?;
                    let key = part.key(&[to.as_bytes(), b"\0", &capsule.id.to_be_bytes()]);
                    tx.put("n.hand_to", &key, capsule.task_id.as_bytes())?;
                }
            }
            Ok(())
        })
        .unwrap();
    store.forget_marks();
}

fn old_entries(store: &Store) -> usize {
    store.snapshot().unwrap().prefix("n.hand_to", &[]).unwrap().count()
}

#[test]
fn a_store_written_before_the_index_is_indexed_by_its_first_handoff_verb() {
    let dir = tempfile::tempdir().unwrap();
    let open = || Store::open(dir.path(), StoreOptions::default()).unwrap();
    let store = open();
    let made: Vec<String> =
        (0..5).map(|i| leave(&store, T0 + i, &format!("T{}", i % 3), Some("claude"), None)).collect();
    leave(&store, T0 + 9, "T0", None, None);
    let before = run(&store, &who("u1", "default", "claude", T0 + 50), "handoff_resume", &json!({"limit": 100}));
    as_written_before(&store);
    drop(store);
    let store = open();
    assert_eq!((index(&store).len(), old_entries(&store)), (0, 5));
    // Other verbs leave it as it is (a read never writes what it does not need).
    run(&store, &agent("claude"), "note_list", &json!({}));
    assert_eq!((index(&store).len(), old_entries(&store)), (0, 5));
    // The first handoff verb, a forget here: what it forgets leaves no entry in either layout.
    assert_eq!(run(&store, &agent("codex"), "handoff_forget", &json!({"taskId": "T1"}))["state"], "forgotten");
    assert_eq!(old_entries(&store), 0, "the old layout is emptied");
    assert!(!mentions(&index(&store), "T1"));
    assert_eq!(index(&store).len(), 3);
    let me = who("u1", "default", "claude", T0 + 50);
    let after = run(&store, &me, "handoff_resume", &json!({"limit": 100}));
    let expected: Vec<Value> =
        before["handoffs"].as_array().unwrap().iter().filter(|h| h["taskId"] != "T1").cloned().collect();
    assert_eq!(after["handoffs"], json!(expected), "the same list, less what was forgotten");
    assert_eq!(ids(&after), [made[3].clone(), made[2].clone(), made[0].clone()]);
    // Built once: a resume after a restart finds it marked and reads the same.
    drop(store);
    let store = open();
    assert_eq!(run(&store, &me, "handoff_resume", &json!({"limit": 100})), after);
}

#[test]
fn a_fresh_store_is_indexed_from_its_first_capsule_and_a_refused_call_writes_nothing() {
    let (_dir, store) = fresh();
    let txn = |store: &Store| store.snapshot().unwrap().txn();
    let marked = |store: &Store| store.snapshot().unwrap().get(ADDRESSED, &[]).unwrap().is_some();
    let before = txn(&store);
    assert_eq!(run(&store, &agent("claude"), "handoff_resume", &json!({}))["handoffs"], json!([]));
    assert_eq!((txn(&store), marked(&store)), (before, false), "a store with no capsule is left as it is");
    leave(&store, T0, "T", Some("claude"), None);
    assert_eq!((txn(&store), marked(&store)), (before + 1, true), "the first capsule marks it, in its transaction");
    let refused = run(&store, &agent("codex"), "handoff_create", &json!({"taskId": "T", "summary": " "}));
    assert_eq!(code(&refused), "VALIDATION_ERROR", "{refused}");
    assert_eq!(run(&store, &agent("claude"), "handoff_resume", &json!({}))["handoffs"][0]["taskId"], "T");
    assert_eq!(txn(&store), before + 1, "nothing is built or written after");
}

/// One step of the property test.
#[derive(Debug, Clone)]
enum Step {
    /// A capsule on task `task` left `at` ms after T0 by codex, addressed to agent `to` (of
    /// `AGENTS`, or none), expiring `expires` ms after it, with a summary of `size` bytes.
    Leave { task: u8, at: u16, to: Option<u8>, expires: Option<u16>, size: u16 },
    /// `handoff_forget` of task `task`.
    Forget { task: u8 },
}

const AGENTS: [&str; 3] = ["claude", "gemini", "aider"];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0..6u8, 0..40u16, prop::option::weighted(0.8, 0..3u8), prop::option::of(1..60u16),
              prop::sample::select(vec![1u16, 40, 6_000, 15_000]))
            .prop_map(|(task, at, to, expires, size)| Step::Leave { task, at, to, expires, size }),
        1 => (0..6u8).prop_map(|task| Step::Forget { task }),
    ]
}

/// A capsule as the model holds it.
#[derive(Debug, Clone)]
struct Held {
    id: u64,
    task: u8,
    at: i64,
    to: Option<u8>,
    expires: Option<i64>,
}

impl Held {
    fn live(&self, now: i64) -> bool {
        self.expires.is_none_or(|e| e > now)
    }
}

/// The capsules addressed to `agent` that a listing at `now` shows, in order, each with the id
/// of the newer unexpired capsule of its task that supersedes it.
fn model(held: &[Held], agent: u8, now: i64) -> Vec<(u64, Option<u64>)> {
    let mut mine: Vec<&Held> = held.iter().filter(|h| h.to == Some(agent) && h.live(now)).collect();
    mine.sort_by_key(|h| std::cmp::Reverse((h.at, h.id)));
    mine.iter()
        .map(|h| {
            let newest = held.iter().filter(|t| t.task == h.task && t.live(now)).max_by_key(|t| (t.at, t.id));
            (h.id, newest.map(|n| n.id).filter(|n| *n != h.id))
        })
        .collect()
}

/// Orders capsules oldest first by when they were left (then id): which is a task's newest.
pub(super) fn newest_last(capsules: &mut [Capsule]) {
    capsules.sort_by_key(|c| (c.created_at, c.id));
}

/// The capsules of `task_id`, oldest first, each decoded (the read before `handoff_tasks.rs`).
pub(super) fn task_capsules(snap: &crate::snapshot::Snapshot, part: &Partition, task_id: &str) -> Vec<Capsule> {
    let mut capsules: Vec<Capsule> = snap
        .prefix(HAND, &part.key(&[task_id.as_bytes(), b"\0"]))
        .unwrap()
        .map(|kv| Capsule::decode(&kv.unwrap().1).unwrap())
        .collect();
    newest_last(&mut capsules);
    capsules
}

/// A page as `handoff_resume {}` answered it when it read every capsule of the scope addressed to
/// the caller (the code before the index, kept here as the reference): its handoffs, and the
/// position the next page starts after, when there is one.
fn reference(
    store: &Store,
    caller: &Caller,
    limit: usize,
    after: Option<(i64, u64)>,
) -> (Vec<Value>, Option<(i64, u64)>) {
    let snap = store.snapshot().unwrap();
    let mut capsules: Vec<Capsule> = snap
        .prefix(HAND, caller.part.prefix())
        .unwrap()
        .map(|kv| Capsule::decode(&kv.unwrap().1).unwrap())
        .filter(|c| c.to.as_deref() == Some(caller.agent.as_str()))
        .collect();
    newest_last(&mut capsules);
    let rest: Vec<&Capsule> = capsules
        .iter()
        .rev()
        .filter(|c| after.is_none_or(|a| (c.created_at, c.id) < a) && !c.expired(caller.now))
        .take(limit + 1)
        .collect();
    let page = &rest[..rest.len().min(limit)];
    let mut current: HashMap<&str, Option<u64>> = HashMap::new();
    let (mut out, mut bytes) = (Vec::new(), 0);
    for c in page {
        let newest = *current.entry(&c.task_id).or_insert_with(|| {
            let all = task_capsules(&snap, &caller.part, &c.task_id);
            all.iter().rev().find(|t| !t.expired(caller.now)).map(|t| t.id)
        });
        let mut shown = c.render();
        if let Some(newer) = newest.filter(|id| *id != c.id) {
            shown["superseded"] = json!(true);
            shown["supersededBy"] = json!(newer.to_string());
        }
        let size = serde_json::to_vec(&shown).unwrap().len() + 1;
        if !out.is_empty() && bytes + size > PAGE_BYTES {
            break;
        }
        bytes += size;
        out.push(shown);
    }
    let next = (rest.len() > out.len()).then(|| (page[out.len() - 1].created_at, page[out.len() - 1].id));
    (out, next)
}

/// Applies `steps` to `store`, keeping the model.
fn apply(store: &Store, steps: &[Step]) -> Vec<Held> {
    let mut held: Vec<Held> = Vec::new();
    for s in steps {
        match *s {
            Step::Leave { task, at, to, expires, size } => {
                let at = T0 + i64::from(at);
                let mut body = json!({"taskId": format!("T{task}"), "summary": "s".repeat(usize::from(size))});
                if let Some(to) = to {
                    body["to"] = json!(AGENTS[usize::from(to)]);
                }
                let expires = expires.map(|e| at + i64::from(e));
                if let Some(e) = expires {
                    body["expiresAt"] = json!(crate::time::iso_ms(e));
                }
                let reply = run(store, &who("u1", "default", "codex", at), "handoff_create", &body);
                let id = reply["id"].as_str().unwrap_or_else(|| panic!("{reply}")).parse().unwrap();
                held.push(Held { id, task, at, to, expires });
            }
            Step::Forget { task } => {
                run(store, &agent("codex"), "handoff_forget", &json!({"taskId": format!("T{task}")}));
                held.retain(|h| h.task != task);
            }
        }
    }
    held
}

/// Pages through the capsules addressed to `agent` at `now` with `limits` (cycled), checking
/// each page against the reference; the (id, supersededBy) of every capsule listed.
fn listed(store: &Store, agent: u8, now: i64, limits: &[usize]) -> Result<Vec<(u64, Option<u64>)>, TestCaseError> {
    let me = who("u1", "default", AGENTS[usize::from(agent)], now);
    let (mut seen, mut cursor, mut after) = (Vec::new(), None::<String>, None);
    for round in 0.. {
        let limit = limits[round % limits.len()];
        let mut body = json!({"limit": limit});
        if let Some(c) = &cursor {
            body["cursor"] = json!(c);
        }
        let page = run(store, &me, "handoff_resume", &body);
        let (handoffs, next) = reference(store, &me, limit, after);
        prop_assert_eq!(&page["handoffs"], &json!(handoffs), "the reply the full read gave");
        prop_assert_eq!(page["nextCursor"].is_string(), next.is_some());
        for h in page["handoffs"].as_array().unwrap() {
            let id = h["id"].as_str().unwrap().parse().unwrap();
            seen.push((id, h["supersededBy"].as_str().map(|s| s.parse().unwrap())));
        }
        let Some(c) = page["nextCursor"].as_str() else { break };
        cursor = Some(c.to_owned());
        after = next;
    }
    Ok(seen)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random capsules (addressees, times, expiries, tasks, sizes up to a page's bytes) and task
    /// forgets, then every agent's list paged with random limits at a random time: exactly the
    /// model's capsules, in its order, each page the reply the full read gave; and the same once
    /// the store is put back in the layout before the index and indexed again.
    #[test]
    fn paging_the_addressed_capsules_matches_a_model(
        steps in prop::collection::vec(step(), 1..40),
        limits in prop::collection::vec(1..6usize, 1..4),
        now in 0..120i64,
    ) {
        let (_dir, store) = fresh();
        let held = apply(&store, &steps);
        let now = T0 + now;
        for round in 0..2 {
            if round == 1 {
                as_written_before(&store);
            }
            for agent in 0..3u8 {
                prop_assert_eq!(listed(&store, agent, now, &limits)?, model(&held, agent, now), "{}", AGENTS[usize::from(agent)]);
            }
        }
    }
}
