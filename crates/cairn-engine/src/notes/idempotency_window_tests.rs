//! Idempotency records last the store's window, then go (`idempotency_window.rs`).

use super::idempotency::IDEM;
use super::idempotency_window::IDEM_AT;
use super::tests::{T0, agent, code, fresh, note, replayed, run, who, with};
use crate::knowledge::api::Caller;
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

const DAY: i64 = 24 * 3_600_000;

fn at(now: i64) -> Caller {
    who("u1", "default", "claude", now)
}

/// Every entry of `tree`.
fn entries(store: &Store, tree: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    store.snapshot().unwrap().prefix(tree, &[]).unwrap().map(Result::unwrap).collect()
}

/// The keys of `tree`, the marker (the empty key) left out.
fn tree_keys(store: &Store, tree: &str) -> Vec<Vec<u8>> {
    entries(store, tree).into_iter().map(|kv| kv.0).filter(|k| !k.is_empty()).collect()
}

/// How many records the store holds, once it is checked that the records and the index agree:
/// one entry per record, at the record's time.
fn assert_indexed(store: &Store) -> usize {
    let records = entries(store, IDEM);
    let mut expected: Vec<Vec<u8>> = records
        .iter()
        .map(|(k, v)| {
            let part = crate::knowledge::Partition::of_key(k).unwrap();
            let at = serde_json::from_slice::<Value>(v).unwrap()["at"].as_i64().unwrap();
            super::idempotency_window::at_key(&part, k, at)
        })
        .collect();
    expected.sort();
    assert_eq!(tree_keys(store, IDEM_AT), expected);
    records.len()
}

fn keyed(key: &str, value: Value, idem: &str) -> Value {
    with(note(key, value), json!({"idempotencyKey": idem}))
}

/// Leaves the store as a build before the window left it, with `more` records of `at(T0).part`
/// (key after the partition prefix, record) added: no time in the records, no index, no marker.
fn as_an_older_build_left_them(store: &Store, more: Vec<(Vec<u8>, Value)>) {
    let part = at(T0).part;
    store
        .write(move |tx| {
            for (k, v) in tx.prefix(IDEM, &[])? {
                let mut record: Value = serde_json::from_slice(&v).unwrap();
                record.as_object_mut().unwrap().remove("at");
                tx.put(IDEM, &k, &serde_json::to_vec(&record).unwrap())?;
            }
            for (k, _) in tx.prefix(IDEM_AT, &[])? {
                tx.delete(IDEM_AT, &k)?;
            }
            for (k, record) in &more {
                tx.put(IDEM, &part.key(&[k]), &serde_json::to_vec(record).unwrap())?;
            }
            Ok(())
        })
        .unwrap();
}

/// A note write's record whose version was never stored.
fn lost() -> Value {
    json!({"hash": "0", "receipt": {"key": "lost", "version": 9, "visibility": "user", "id": "99"}})
}

/// The times of the store's records, in key order.
fn times(store: &Store) -> Vec<i64> {
    entries(store, IDEM)
        .iter()
        .map(|(_, v)| serde_json::from_slice::<Value>(v).unwrap()["at"].as_i64().unwrap())
        .collect()
}

#[test]
fn a_retry_replays_inside_the_window_and_writes_anew_after_it() {
    let (_d, store) = fresh();
    let first = run(&store, &at(T0), "note_write", &keyed("k", json!(1), "op-1"));
    assert_eq!(run(&store, &at(T0 + DAY - 1), "note_write", &keyed("k", json!(1), "op-1")), replayed(&first));
    // A day on, the key is new again: the retry is a first write, and then replays as one.
    let anew = run(&store, &at(T0 + DAY), "note_write", &keyed("k", json!(1), "op-1"));
    // A write anew of the same value changes nothing: no new version (`unchanged`), not a replay.
    assert_eq!((anew["version"].clone(), anew["unchanged"].clone()), (json!(1), json!(true)), "{anew}");
    assert!(anew.get("replayed").is_none(), "{anew}");
    assert_eq!(run(&store, &at(T0 + DAY + 1), "note_write", &keyed("k", json!(1), "op-1")), replayed(&anew));
    // After the window another request may take the key: no conflict with a record that is gone.
    let other = run(&store, &at(T0 + 3 * DAY), "note_write", &keyed("other", json!(2), "op-1"));
    assert_eq!(other["version"], 1, "{other}");
    // Handoffs alike.
    let body = json!({"taskId": "T", "summary": "s", "idempotencyKey": "h-1"});
    let left = run(&store, &at(T0), "handoff_create", &body);
    assert_eq!(run(&store, &at(T0 + DAY - 1), "handoff_create", &body), replayed(&left));
    let again = run(&store, &at(T0 + DAY), "handoff_create", &body);
    assert!(again.get("replayed").is_none() && again["id"] != left["id"], "{again}");
    assert_eq!(assert_indexed(&store), 2, "op-1 (other), h-1 (again), and no stale index entry");
}

#[test]
fn expired_records_leave_the_trees_with_later_writes_at_most_64_a_write() {
    let (_d, store) = fresh();
    for i in 0..100 {
        run(&store, &at(T0 + i), "note_write", &keyed(&format!("n{i}"), json!(i), &format!("op-{i}")));
    }
    assert_eq!(assert_indexed(&store), 100);
    // Another partition's write, a day on, leaves this one's records alone.
    run(&store, &who("u2", "default", "claude", T0 + 2 * DAY), "note_write", &note("x", json!(1)));
    assert_eq!(assert_indexed(&store), 100);
    // The first 50 expired a day after they were written; a plain write removes them, oldest first.
    run(&store, &at(T0 + DAY + 49), "note_write", &note("plain", json!(1)));
    assert_eq!(assert_indexed(&store), 50);
    assert_eq!(run(&store, &at(T0 + DAY + 49), "note_write", &keyed("n50", json!(50), "op-50"))["replayed"], true);
    // The 50 left have expired by now: one write takes them all.
    run(&store, &at(T0 + 2 * DAY), "note_write", &note("plain", json!(2)));
    assert_eq!(assert_indexed(&store), 0);
    // A backlog of 100: a write (a handoff too) takes the 64 oldest, the next one the rest.
    for i in 0..100 {
        run(&store, &at(T0 + 3 * DAY + i), "note_write", &keyed(&format!("n{i}"), json!(i), &format!("op-{i}")));
    }
    run(&store, &at(T0 + 5 * DAY), "handoff_create", &json!({"taskId": "T", "summary": "s"}));
    assert_eq!(assert_indexed(&store), 36, "one write removed 64");
    run(&store, &at(T0 + 5 * DAY), "note_write", &note("plain", json!(3)));
    assert_eq!(assert_indexed(&store), 0);
}

#[test]
fn a_refused_write_removes_nothing() {
    let (_d, store) = fresh();
    run(&store, &at(T0), "note_write", &keyed("k", json!(1), "op-1"));
    let refused = run(&store, &at(T0 + DAY), "note_write", &with(note("k", json!(2)), json!({"expectedVersion": 7})));
    assert_eq!(code(&refused), "VERSION_CONFLICT");
    assert_eq!(assert_indexed(&store), 1);
}

#[test]
fn forgetting_takes_the_records_and_their_index_entries() {
    let (_d, store) = fresh();
    let me = agent("claude");
    run(&store, &me, "note_write", &keyed("k", json!(1), "op-1"));
    run(&store, &me, "handoff_create", &json!({"taskId": "T", "summary": "s", "idempotencyKey": "h-1"}));
    run(&store, &me, "note_write", &keyed("kept", json!(1), "op-2"));
    assert_eq!(assert_indexed(&store), 3);
    run(&store, &me, "note_forget", &json!({"key": "k"}));
    assert_eq!(assert_indexed(&store), 2);
    run(&store, &me, "handoff_forget", &json!({"taskId": "T"}));
    assert_eq!(assert_indexed(&store), 1);
    // A scope forgotten whole, and a user deleted, take theirs.
    let knowledge = |caller: &Caller, verb: &str, body: Value| {
        crate::knowledge::api::call(&store, verb, caller, &serde_json::to_vec(&body).unwrap()).unwrap()
    };
    knowledge(&me, "forget", json!({"all": true}));
    assert_eq!(assert_indexed(&store), 0);
    let other = who("u2", "work", "codex", T0);
    run(&store, &other, "note_write", &keyed("k", json!(1), "op-1"));
    assert_eq!(assert_indexed(&store), 1);
    knowledge(&other, "delete_user", json!({}));
    assert_eq!(assert_indexed(&store), 0);
}

#[test]
fn records_of_older_builds_are_timed_by_the_write_they_answer() {
    let (_d, store) = fresh();
    let first = run(&store, &at(T0), "note_write", &keyed("k", json!(1), "op-1"));
    let mine = json!({"key": "a", "value": 1, "kind": "decision", "visibility": "agent", "idempotencyKey": "op-2"});
    let agent_note = run(&store, &at(T0 + 10), "note_write", &mine);
    let body = json!({"taskId": "T", "summary": "s", "idempotencyKey": "h-1"});
    let left = run(&store, &at(T0 + 20), "handoff_create", &body);
    // And one record whose write is not found (its version was never stored).
    as_an_older_build_left_them(&store, vec![(b"claude\0lost-op".to_vec(), lost())]);
    let late = T0 + DAY - 1;
    // The first write (a replay writes nothing) times them all: there are fewer than 64.
    run(&store, &at(late), "note_write", &note("plain", json!(1)));
    assert_eq!(assert_indexed(&store), 4, "every record timed and indexed");
    assert_eq!(run(&store, &at(late), "note_write", &keyed("k", json!(1), "op-1")), replayed(&first));
    assert_eq!(run(&store, &at(late), "note_write", &mine), replayed(&agent_note));
    assert_eq!(run(&store, &at(late), "handoff_create", &body), replayed(&left));
    // Each expires a day after its own write; the lost one a day after the write that timed it
    // (a write anew of the same value is `unchanged`, where a replay would repeat the first receipt).
    assert_eq!(run(&store, &at(T0 + DAY), "note_write", &keyed("k", json!(1), "op-1"))["unchanged"], true);
    assert_eq!(run(&store, &at(T0 + DAY + 10), "note_write", &mine)["unchanged"], true);
    assert!(run(&store, &at(T0 + DAY + 20), "handoff_create", &body).get("replayed").is_none());
    assert_eq!(times(&store), vec![T0 + DAY + 20, late, T0 + DAY, T0 + DAY + 10], "h-1, lost-op, op-1, op-2");
}

#[test]
fn a_store_of_many_untimed_records_times_64_a_write_and_they_still_expire() {
    let (_d, store) = fresh();
    let first = run(&store, &at(T0), "note_write", &keyed("k1", json!(1), "op-1"));
    run(&store, &at(T0), "note_write", &keyed("k2", json!(2), "op-2"));
    // 1,000 records of handoffs made at T0, and a lost one; keys sort old-…, op-1, op-2, zz-lost.
    let created = crate::time::iso_ms(T0);
    let mut more: Vec<(Vec<u8>, Value)> = (0..1000)
        .map(|i| {
            let receipt = json!({"id": i.to_string(), "taskId": "T", "createdAt": created});
            (format!("claude\0old-{i:04}").into_bytes(), json!({"hash": "0", "receipt": receipt}))
        })
        .collect();
    more.push((b"claude\0zz-lost".to_vec(), lost()));
    as_an_older_build_left_them(&store, more);
    let records = || entries(&store, IDEM).len();
    let timed = || tree_keys(&store, IDEM_AT).len();
    assert_eq!(records(), 1003);
    // Before any record is timed, each answers by its own write's time: a replay (which stores
    // nothing, and times nothing) inside the window, a new write after it.
    assert_eq!(run(&store, &at(T0 + DAY - 1), "note_write", &keyed("k1", json!(1), "op-1")), replayed(&first));
    assert_eq!(timed(), 0);
    assert_eq!(run(&store, &at(T0 + DAY), "note_write", &keyed("k2", json!(2), "op-2"))["unchanged"], true);
    assert_eq!(timed(), 64 + 1, "the first write timed 64 older records, not 1,003, and its own");
    // Each later write removes at most 64 expired records and times at most 64 more, until the
    // two left are op-2's new record and the lost one, timed at the first write.
    for j in 2..=17 {
        run(&store, &at(T0 + DAY + j - 1), "note_write", &note("plain", json!(j)));
        assert_eq!(records(), usize::try_from((1003 - 64 * (j - 1)).max(2)).unwrap(), "write {j}");
        assert!(timed() <= 64 + 1, "write {j}: {} timed", timed());
    }
    assert_eq!(entries(&store, IDEM_AT)[0], (vec![], vec![1]), "every record timed");
    assert_eq!(assert_indexed(&store), 2);
    assert_eq!(times(&store), vec![T0 + DAY, T0 + DAY], "op-2, zz-lost");
    run(&store, &at(T0 + 2 * DAY), "note_write", &note("plain", json!(0)));
    assert_eq!(records(), 0);
}

#[test]
fn a_window_outside_its_range_is_refused_and_opens_nothing() {
    for hours in [0, 8761] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        let err = Store::open(&path, StoreOptions { idempotency_hours: hours, ..StoreOptions::default() }).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert_eq!(
            err.to_string(),
            format!("invalid argument: idempotencyHours must be a whole number of hours, 1–8760, got {hours}")
        );
        assert!(!path.exists(), "nothing created");
    }
    // A window of one hour: a retry two hours on writes anew.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { idempotency_hours: 1, ..StoreOptions::default() }).unwrap();
    let first = run(&store, &at(T0), "note_write", &keyed("k", json!(1), "op-1"));
    assert_eq!(run(&store, &at(T0 + 3_599_999), "note_write", &keyed("k", json!(1), "op-1")), replayed(&first));
    assert_eq!(run(&store, &at(T0 + 3_600_000), "note_write", &keyed("k", json!(1), "op-1"))["unchanged"], true);
}
