//! A status ended and restored thousands of times (`present_adjacency.rs`): a present recall and a
//! context on it read about as many pages after 2,000 restores as after 250 (the recall read a
//! record per earlier life before), and a life still true now is shown, however the store files
//! it. Pages are the store's count (`Store::pages_read`), never a clock.

use super::past_adjacency_tests::as_written_before;
use super::testing::{TODAY, call, caller};
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

const DAY: i64 = 86_400_000;

pub(super) fn open(dir: &std::path::Path) -> Store {
    // No checkpoint while the reads are counted: its pages are not theirs.
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    Store::open(dir, options).unwrap()
}

/// `verb` called at `now`, and the pages it read.
fn counted(store: &Store, now: i64, verb: &str, body: &Value) -> (Value, u64) {
    let before = store.pages_read();
    let reply = call(store, &caller(now), verb, body).unwrap();
    assert!(reply.get("error").is_none(), "{verb} {body}: {reply}");
    (reply, store.pages_read() - before)
}

/// `Ann status S(i % 7)` with `replaces`, one call a day, for `i` in `done..upto`: from the
/// eighth on, each ends the live status and restores an earlier one, keeping its earlier life.
pub(super) fn restore(store: &Store, (done, upto): (usize, usize)) -> i64 {
    for i in done..upto {
        let body = json!({"from": "Ann", "to": format!("S{}", i % 7), "type": "status", "replaces": true});
        counted(store, TODAY + i64::try_from(i).unwrap() * DAY, "relate", &body);
    }
    TODAY + i64::try_from(upto).unwrap() * DAY
}

/// The pages a recall of Ann and a context on her status read, at `now`, each showing the one
/// live status.
fn pages_of_reads(store: &Store, now: i64) -> [u64; 2] {
    let (recall, recall_pages) = counted(store, now, "recall", &json!({"subject": "Ann"}));
    assert_eq!(recall["facts"].as_array().map(Vec::len), Some(1), "{recall}");
    let (context, context_pages) = counted(store, now, "context", &json!({"question": "What is Ann's status?"}));
    assert_eq!(context["coverage"]["facts"], json!(1), "{context}");
    [recall_pages, context_pages]
}

#[test]
fn a_present_recall_reads_as_many_pages_after_2000_restores_as_after_250() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let now = restore(&store, (0, 250));
    let small = pages_of_reads(&store, now);
    let now = restore(&store, (250, 2_000));
    let big = pages_of_reads(&store, now);
    eprintln!("recall, context: {small:?} pages after 250 restores, {big:?} after 2,000");
    // Eight times the restores may deepen a tree, a page more per lookup; a record read per
    // earlier life costs pages in proportion to them.
    for (verb, (small, big)) in ["recall", "context"].into_iter().zip(small.into_iter().zip(big)) {
        assert!(big * 2 <= small * 3, "{verb}: {big} pages after 2,000 restores, {small} after 250");
    }
}

/// The objects of Ann's `works_at` facts a reply shows, with their ends.
fn jobs(reply: &Value) -> Vec<(String, Value)> {
    let facts = reply["facts"].as_array().unwrap();
    facts.iter().map(|f| (f["object"].as_str().unwrap().to_owned(), f["valid_to"].clone())).collect()
}

#[test]
fn an_earlier_life_true_now_is_recalled_in_either_filing() {
    let (new_dir, old_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (new, old) = (open(new_dir.path()), open(old_dir.path()));
    for store in [&new, &old] {
        // Ann works at Acme until 2030, then again from 2031: the restore keeps the life until
        // 2030 as a copy, the fact now starting in 2031.
        let until = json!({"from": "Ann", "to": "Acme", "type": "works_at", "attributes": {"valid_to": "2030-01-01"}});
        counted(store, TODAY, "relate", &until);
        let again =
            json!({"from": "Ann", "to": "Acme", "type": "works_at", "attributes": {"valid_from": "2031-01-01"}});
        let (reply, _) = counted(store, TODAY + DAY, "relate", &again);
        assert_eq!(reply["restored"].as_array().map(Vec::len), Some(1), "{reply}");
    }
    as_written_before(&old);
    let recall = json!({"subject": "Ann"});
    let (today, _) = counted(&new, TODAY + 2 * DAY, "recall", &recall);
    assert_eq!(jobs(&today), [("Acme".to_owned(), json!("2030-01-01"))], "the life true today: {today}");
    let (later, _) = counted(&new, TODAY + 2_000 * DAY, "recall", &recall);
    assert_eq!(jobs(&later), [("Acme".to_owned(), Value::Null)], "the fact from 2031: {later}");
    for (now, reply) in [(TODAY + 2 * DAY, today), (TODAY + 2_000 * DAY, later)] {
        assert_eq!(counted(&old, now, "recall", &recall).0, reply, "a store written before, at {now}");
    }
}
