//! The `possible_duplicates` check of a write that creates an entity reads about as many pages
//! after 400 entities were created one call at a time as after 40 (found by an audit: each such
//! write read every entity created since the partition's name index was built, 4,090 pages at
//! 2,000 entities against 50 for a write creating none). Pages are the store's count
//! (`Store::pages_read`), never a clock.

use crate::knowledge::testing::{call, caller};
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

/// The pages read by a `relate` that creates one entity, after `earlier` entities were each
/// created by a `relate` of their own; and its reply. The entity is a misspelling of a stored one.
fn pages_of_a_create_after(earlier: usize) -> (u64, Value) {
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint while the reads are counted: its pages are not theirs.
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    let relate = |to: String| json!({"from": "Priya Raman", "to": to, "type": "knows"});
    for i in 0..earlier {
        let reply = call(&store, &caller(1), "relate", &relate(format!("Colleague {i}"))).unwrap();
        assert_eq!(reply["created"], json!(true), "{reply}");
    }
    let before = store.pages_read();
    let typo = json!({"from": "Priya Ramen", "to": "Colleague 0", "type": "knows"});
    let reply = call(&store, &caller(2), "relate", &typo).unwrap();
    (store.pages_read() - before, reply)
}

#[test]
fn a_write_creating_an_entity_reads_no_more_pages_for_ten_times_the_entities_created_before() {
    let (few, _) = pages_of_a_create_after(40);
    let (many, reply) = pages_of_a_create_after(400);
    assert!(many < 2 * few, "one entity created after 400 read {many} pages, after 40 {few}");
    eprintln!("pages of one create: after 40 {few}, after 400 {many}");
    // The check still finds the stored spelling.
    assert_eq!(reply["possible_duplicates"][0]["similar_to"]["name"], json!("Priya Raman"), "{reply}");
}
