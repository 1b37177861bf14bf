//! A quick read tried on the caller's thread under `budget::within`: in time it answers exactly
//! what the verb answers anywhere; out of time it is void; a write tried there changes nothing.

use std::time::Duration;

use serde_json::json;

use crate::budget::within;
use crate::knowledge::testing::{TODAY, call, caller, fresh};
use crate::store::Store;

fn bytes(v: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

/// A store holding one fact about Ada, and the body of a recall of her.
fn ada() -> (tempfile::TempDir, Store, Vec<u8>) {
    let (dir, store, _part) = fresh();
    let facts = json!({"facts": {"relations": [{"source": "Ada", "target": "Babbage", "type": "works_with"}]}});
    call(&store, &caller(TODAY), "remember", &facts).unwrap();
    (dir, store, bytes(&json!({"subject": "Ada"})))
}

#[test]
fn a_recall_in_time_answers_what_it_answers_on_any_thread() {
    let (_dir, store, body) = ada();
    let anywhere = super::call(&store, "recall", &caller(TODAY), &body).unwrap();
    let here = within(Duration::from_secs(10), || super::call(&store, "recall", &caller(TODAY), &body));
    assert_eq!(here.map(Result::unwrap), Some(anywhere));
}

#[test]
fn a_recall_out_of_time_is_void() {
    let (_dir, store, body) = ada();
    assert!(within(Duration::ZERO, || super::call(&store, "recall", &caller(TODAY), &body)).is_none());
}

#[test]
fn a_write_tried_under_a_deadline_is_void_and_changes_nothing() {
    let (_dir, store, _part) = fresh();
    let before = store.snapshot().unwrap().txn();
    let facts = bytes(&json!({"facts": {"relations": [{"source": "Ada", "target": "Babbage", "type": "works_with"}]}}));
    assert!(within(Duration::from_secs(10), || super::call(&store, "remember", &caller(TODAY), &facts)).is_none());
    assert_eq!(store.snapshot().unwrap().txn(), before, "nothing was committed");
    let recall = call(&store, &caller(TODAY), "recall", &json!({"subject": "Ada"})).unwrap();
    assert_eq!(recall["state"], json!("nothing_stored"), "{recall}");
}

#[test]
fn only_reads_are_quick() {
    assert!(super::quick("recall") && super::quick("status"));
    for verb in super::VERBS.iter().filter(|v| !matches!(**v, "recall" | "status")) {
        assert!(!super::quick(verb), "{verb}");
    }
}
