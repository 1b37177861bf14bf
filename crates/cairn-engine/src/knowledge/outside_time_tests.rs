//! The `outside_time` hint of a context (`outside_time::between`) for seeds that hold no fact
//! between them: the list without the copies a fact keeps of itself settles it, so a status
//! restored 2,000 times costs it no more pages than one restored 250 times (it read every
//! earlier life's key before). Pages are the store's count (`Store::pages_read`), never a clock.

use super::graph::entity_by_name;
use super::outside_time::between;
use super::present_adjacency_tests::{open, restore};
use super::recall::When;
use super::testing::{TODAY, call, caller};
use crate::store::Store;
use serde_json::{Value, json};

/// The hint between Ann and Bob read at `when`, and the pages it read.
fn between_ann_and_bob(store: &Store, when: &When) -> (Option<Value>, u64) {
    let snap = store.snapshot().unwrap();
    let part = caller(TODAY).part;
    let seeds = ["Ann", "Bob"].map(|name| entity_by_name(&snap, &part, name).unwrap().unwrap().id);
    let before = store.pages_read();
    let hint = between(&snap, &part, &seeds, when).unwrap();
    (hint, store.pages_read() - before)
}

#[test]
fn seeds_holding_no_fact_between_them_read_no_earlier_life() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    call(&store, &caller(TODAY), "relate", &json!({"from": "Bob", "to": "Oslo", "type": "lives_in"})).unwrap();
    let now = restore(&store, (0, 250));
    let (hint, small) = between_ann_and_bob(&store, &When::of_request(None, None, now));
    assert_eq!(hint, None);
    let now = restore(&store, (250, 2_000));
    let (hint, big) = between_ann_and_bob(&store, &When::of_request(None, None, now));
    assert_eq!(hint, None);
    eprintln!("between Ann and Bob: {small} pages after 250 restores, {big} after 2,000");
    // Eight times the restores may deepen a tree, a page more per lookup; a key read per earlier
    // life costs pages in proportion to them.
    assert!(big * 2 <= small * 3, "{big} pages after 2,000 restores, {small} after 250");
    // A read as of a moment before any of them was said has no hint either.
    let (hint, _) = between_ann_and_bob(&store, &When::of_request(Some(TODAY - 1), None, now));
    assert_eq!(hint, None);
}
