//! A fact revised or restored thousands of times (`past_adjacency.rs`): a `relate` call reads as
//! many pages after 2,000 revisions as after 250 (it read 505 pages a call at 250 and 6,013 at
//! 2,000, a record per earlier version or life), and a store written before the copies were filed
//! apart answers every call as one written since, once its earlier versions are moved
//! (`past_adjacency_build.rs`). Pages are the store's count (`Store::pages_read`), never a clock.

use super::testing::{call, caller};
use super::trees::{ADJ, ADJ_PAST};
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

/// A status flipped by `replaces`, as `bench/revisions.bench.mjs` flips it (each call ends one
/// edge and restores the other, keeping its earlier life), or a fact said again with a later end
/// (each call keeps the version before). The bench's other shape, a new attribute each call, also
/// grows the fact's own list of attribute writes (`fact_attribute_time.rs`), which each call reads.
fn shape(replaces: bool, i: usize) -> Value {
    if replaces {
        json!({"from": "Ann", "to": if i.is_multiple_of(2) { "Busy" } else { "Idle" }, "type": "status", "replaces": true})
    } else {
        json!({"from": "Ann", "to": "Bob", "type": "knows", "attributes": {"valid_to": format!("{}-01-01", 2100 + i)}})
    }
}

fn open(dir: &std::path::Path) -> Store {
    // No checkpoint while the reads are counted: its pages are not theirs.
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    Store::open(dir, options).unwrap()
}

fn relate(store: &Store, i: usize, body: &Value) -> Value {
    let reply = call(store, &caller(1_000 + i64::try_from(i).unwrap()), "relate", body).unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
    reply
}

/// The pages the ten calls after `upto` read, the calls before made first.
fn pages_after(store: &Store, replaces: bool, (done, upto): (usize, usize)) -> u64 {
    for i in done..upto {
        relate(store, i, &shape(replaces, i));
    }
    let before = store.pages_read();
    for i in upto..upto + 10 {
        relate(store, i, &shape(replaces, i));
    }
    store.pages_read() - before
}

#[test]
fn a_relate_reads_as_many_pages_after_2000_revisions_as_after_250() {
    for replaces in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        let small = pages_after(&store, replaces, (0, 250));
        let big = pages_after(&store, replaces, (260, 2_000));
        eprintln!("replaces {replaces}: {small} pages for 10 calls after 250 revisions, {big} after 2,000");
        // Eight times the revisions may deepen a tree, a page more per lookup; a record read per
        // revision costs pages in proportion to them.
        assert!(big * 2 <= small * 3, "replaces {replaces}: {big} pages after 2,000 revisions, {small} after 250");
    }
}

/// `store` as a version before `k.adj_past` wrote it: every copy in `k.adj` with an empty value,
/// no marker.
pub(super) fn as_written_before(store: &Store) {
    store
        .write(|tx| {
            for (key, _) in tx.prefix(ADJ_PAST, &[])? {
                if !key.is_empty() {
                    tx.put(ADJ, &key, &[])?;
                }
            }
            for (key, value) in tx.prefix(ADJ, &[])? {
                if !value.is_empty() {
                    tx.put(ADJ, &key, &[])?;
                }
            }
            tx.delete_prefix(ADJ_PAST, &[])?;
            Ok(())
        })
        .unwrap();
    store.forget_marks();
}

/// The calls both stores answer after their shared history: revisions, restores, and assertions
/// dated inside earlier lives (read against the copies) and from the other end.
fn later_calls() -> Vec<Value> {
    vec![
        json!({"from": "Ann", "to": "Busy", "type": "status", "attributes": {"valid_from": "1970-01-01T00:00:01.010Z"}}),
        json!({"from": "Ann", "to": "Idle", "type": "status", "replaces": true, "attributes": {"valid_from": "1970-01-01T00:00:01.005Z"}}),
        json!({"from": "Ann", "to": "Busy", "type": "status", "attributes": {"valid_from": "1970-01-01T00:00:00.500Z", "valid_to": "1970-01-01T00:00:01.001Z"}}),
        json!({"from": "Ann", "to": "Bob", "type": "knows", "attributes": {"note": "again"}}),
        json!({"from": "Ann", "to": "Bob", "type": "knows", "attributes": {"valid_to": "2050-01-01"}}),
        json!({"from": "Bob", "to": "Ann", "type": "knows", "attributes": {"note": "from Bob"}}),
        json!({"from": "Ann", "to": "Idle", "type": "status", "replaces": true}),
        json!({"from": "Ann", "to": "Busy", "type": "status", "replaces": true}),
    ]
}

#[test]
fn a_store_written_before_answers_as_one_written_since_once_its_versions_move() {
    let (new_dir, old_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (new, old) = (open(new_dir.path()), open(old_dir.path()));
    for store in [&new, &old] {
        for i in 0..60 {
            relate(store, i, &shape(!i.is_multiple_of(3), i));
        }
    }
    as_written_before(&old);
    let snap = old.snapshot().unwrap();
    assert!(snap.get(ADJ_PAST, &[]).unwrap().is_none() && snap.prefix(ADJ_PAST, &[]).unwrap().next().is_none());
    // The first verb moves the versions (`past_adjacency_build.rs`) and every call after plans
    // from the lists as the store written since does.
    for (i, body) in (100..).zip(later_calls()) {
        assert_eq!(relate(&old, i, &body), relate(&new, i, &body), "{body}");
    }
    let snap = old.snapshot().unwrap();
    assert_eq!(snap.get(ADJ_PAST, &[]).unwrap(), Some(vec![1]), "marked");
    let moved = snap.prefix(ADJ_PAST, &[]).unwrap().count();
    assert!(moved > 40, "the earlier versions are filed apart: {moved} entries");
    for as_of in [1_010, 1_030, 1_059, 1_103, 2_000] {
        let body = json!({"subject": "Ann", "as_of": as_of});
        let read = |store: &Store| call(store, &caller(3_000), "recall", &body).unwrap();
        assert_eq!(read(&old), read(&new), "as of {as_of}");
    }
    let history = json!({"fact": {"from": "Ann", "to": "Busy", "type": "status"}, "limit": 100});
    let read = |store: &Store| {
        crate::notes::api::call(store, "history", &caller(3_000), &serde_json::to_vec(&history).unwrap()).unwrap()
    };
    assert_eq!(read(&old), read(&new));
}
