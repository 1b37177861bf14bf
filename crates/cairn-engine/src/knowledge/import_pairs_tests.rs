//! A fact said again, revised, replaced and restored many times comes through export and import
//! whole, pages in any order and twice, and an import matches each of its records against the
//! facts stored between the same ends once a call (`import_pairs.rs`), not once a record: the
//! pages an import of such a pair reads grow with its facts, not with their square. Pages are the
//! store's count (`Store::pages_read`), never a clock.

use super::Partition;
use super::testing::TODAY;
use super::testing_api::{caller, export_pages, normalized, verb};
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

const MINUTE: i64 = 60_000;

/// A store (no checkpoint while reads are counted: its pages are not theirs) and its guard.
fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    (dir, store)
}

/// `n` assertions of Ann's status a minute apart, each `(to, replaces, attributes)` as `say`
/// gives it for the `i`th.
fn history(store: &Store, part: &Partition, n: i64, say: impl Fn(i64) -> (&'static str, bool, Value)) {
    for i in 0..n {
        let (to, replaces, attributes) = say(i);
        let body = json!({"from": "Ann", "to": to, "type": "status", "replaces": replaces, "attributes": attributes});
        let reply = verb(store, &caller(part, TODAY - (n + 10 - i) * MINUTE), "relate", &body).unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
    }
}

/// Busy said again with a new level (an earlier version kept each time), every third time
/// replaced by Idle, then restored (its ended life kept as a copy), and Idle restored in turn.
fn revised_and_replaced(i: i64) -> (&'static str, bool, Value) {
    match i % 3 {
        0 => ("Busy", true, json!({"level": i})),
        1 => ("Busy", false, json!({"level": i})),
        _ => ("Idle", true, json!({})),
    }
}

/// `pages` in an order `seed` shuffles.
fn shuffled(pages: &[Vec<Value>], mut seed: u64) -> Vec<&Vec<Value>> {
    let mut order: Vec<&Vec<Value>> = pages.iter().collect();
    for i in (1..order.len()).rev() {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        order.swap(i, usize::try_from(seed >> 33).unwrap() % (i + 1));
    }
    order
}

#[test]
fn a_pair_of_many_revisions_round_trips_in_any_page_order_and_twice_is_once() {
    let (_dir, store) = store();
    let source = Partition::new("local", "u1", "source").unwrap();
    history(&store, &source, 150, revised_and_replaced);
    let pages = export_pages(&store, &source, 7);
    let records = pages.concat();
    let facts = records.iter().filter(|r| r["kind"] == "fact").count();
    let versions = records.iter().filter(|r| r["kind"] == "fact" && r.get("version_of").is_some()).count();
    let ended = records.iter().filter(|r| r["kind"] == "fact" && !r["ended_at"].is_null()).count();
    // Revisions kept as versions, and ended lives (replaced, or copies a restore kept).
    assert!(versions >= 40 && ended - versions >= 40, "{facts} facts, {versions} versions, {ended} ended");
    for seed in [1, 2] {
        let copy = Partition::new("local", "u1", &format!("copy{seed}")).unwrap();
        let who = caller(&copy, TODAY);
        // A version before its fact is refused (its `version_of` names a fact not imported yet):
        // its page is imported again once every page was.
        let mut waiting = Vec::new();
        for page in shuffled(&pages, seed) {
            let reply = verb(&store, &who, "import", &json!({"records": page})).unwrap();
            let skipped = reply["skipped"].as_array().unwrap();
            assert!(
                skipped.iter().all(|s| s["reason"].as_str().unwrap().starts_with("version_of: the fact")),
                "{reply}"
            );
            if !skipped.is_empty() {
                waiting.push(page);
            }
        }
        for page in waiting {
            let reply = verb(&store, &who, "import", &json!({"records": page})).unwrap();
            assert_eq!(reply["skipped"], json!([]), "{reply}");
        }
        assert_eq!(normalized(&export_pages(&store, &copy, 5000).concat()), normalized(&records), "seed {seed}");
        // Twice is once, page by page in another order or all at once.
        for page in shuffled(&pages, seed + 10) {
            let reply = verb(&store, &who, "import", &json!({"records": page})).unwrap();
            assert_eq!(reply["imported"]["facts"], 0, "{reply}");
        }
        let reply = verb(&store, &who, "import", &json!({"records": records})).unwrap();
        assert_eq!(reply["imported"], json!({"entities": 0, "facts": 0, "documents": 0, "notes": 0, "handoffs": 0}));
        assert_eq!(reply["unchanged"]["facts"], facts, "{reply}");
        assert_eq!(normalized(&export_pages(&store, &copy, 5000).concat()), normalized(&records), "seed {seed}");
    }
    assert!(store.check().unwrap().ok);
}

/// The pages an import reads of a status replaced and restored `n` times (half the facts
/// between Ann and Busy, half between Ann and Idle), every fact stored here already: imported
/// before, then met again by records that name no origin, so no id map entry finds them and each
/// is matched against the facts of its pair. Each is `unchanged`, nothing is written again.
fn pages_to_match(n: i64) -> u64 {
    let (_dir, store) = store();
    let source = Partition::new("local", "u1", "source").unwrap();
    history(&store, &source, n, |i| (if i % 2 == 0 { "Busy" } else { "Idle" }, true, json!({})));
    let records = export_pages(&store, &source, 5000).concat();
    let copy = Partition::new("local", "u1", "copy").unwrap();
    let who = caller(&copy, TODAY);
    let reply = verb(&store, &who, "import", &json!({"records": records})).unwrap();
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    let facts = reply["imported"]["facts"].clone();
    assert_eq!(facts, records.iter().filter(|r| r["kind"] == "fact").count(), "{reply}");
    assert!(facts.as_i64().unwrap() >= n, "a life of a status each time: {reply}");
    let unnamed: Vec<Value> = records
        .into_iter()
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("origin");
            r
        })
        .collect();
    let before = store.pages_read();
    let reply = verb(&store, &who, "import", &json!({"records": unnamed})).unwrap();
    let pages = store.pages_read() - before;
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    assert_eq!(reply["imported"], json!({"entities": 0, "facts": 0, "documents": 0, "notes": 0, "handoffs": 0}));
    assert_eq!(reply["unchanged"]["facts"], facts, "{reply}");
    pages
}

#[test]
fn matching_a_pair_of_many_facts_reads_it_once_a_call() {
    let small = pages_to_match(100);
    let big = pages_to_match(400);
    eprintln!("{small} pages to match 101 facts, {big} to match 401");
    // Four times the facts: about four times the pages (a tree a level deeper at most); read for
    // each record, the pair cost sixteen times.
    assert!(big < small * 7, "{big} pages at 401 facts, {small} at 101");
}

/// The pages each of `pages` took to import into a new scope, in order, every record imported.
fn pages_per_page(store: &Store, pages: &[Vec<Value>], scope: &str) -> Vec<u64> {
    let who = caller(&Partition::new("local", "u1", scope).unwrap(), TODAY);
    let mut read = Vec::new();
    for page in pages {
        let before = store.pages_read();
        let reply = verb(store, &who, "import", &json!({"records": page})).unwrap();
        read.push(store.pages_read() - before);
        assert_eq!(reply["skipped"], json!([]), "{reply}");
    }
    read
}

#[test]
fn a_later_page_of_an_import_does_not_read_again_the_facts_earlier_pages_stored() {
    let (_dir, store) = store();
    let source = Partition::new("local", "u1", "source").unwrap();
    history(&store, &source, 900, revised_and_replaced);
    let pages = export_pages(&store, &source, 60);
    let read = pages_per_page(&store, &pages, "copy");
    eprintln!("pages read per page: {read:?}");
    // Each page holds 60 of the pair's facts; read for every page, the last page read the 900
    // facts the pages before it stored (about eight times its second page's reads).
    let (second, last) = (read[1], read[read.len() - 2]);
    assert!(last < second * 2, "the second page read {second} pages, the one before the last {last}");
}

#[test]
fn a_pair_kept_between_calls_is_read_again_after_another_write() {
    let (_dir, store) = store();
    let source = Partition::new("local", "u1", "source").unwrap();
    history(&store, &source, 300, revised_and_replaced);
    let records = export_pages(&store, &source, 5000).concat();
    let copy = Partition::new("local", "u1", "copy").unwrap();
    let who = caller(&copy, TODAY);
    let reply = verb(&store, &who, "import", &json!({"records": records})).unwrap();
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    // Every fact between Ann and Busy goes, between the call that kept the pair and the next.
    let reply =
        verb(&store, &who, "forget", &json!({"fact": {"from": "Ann", "type": "status", "to": "Busy"}})).unwrap();
    assert_eq!(reply["state"], "forgotten", "{reply}");
    // Met again by records naming no origin, each fact of the pair is found missing and stored
    // again, not taken for the fact forgotten.
    let unnamed: Vec<Value> = records
        .iter()
        .cloned()
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("origin");
            r
        })
        .collect();
    let reply = verb(&store, &who, "import", &json!({"records": unnamed})).unwrap();
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    assert!(reply["imported"]["facts"].as_u64().unwrap() >= 100, "{reply}");
    assert!(store.check().unwrap().ok);
}
