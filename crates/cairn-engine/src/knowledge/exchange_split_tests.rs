//! A note too large for one page (`notes::exchange_windows`): exported as several records, each
//! within the page bound, in version order; they import one page at a time (and through `load`)
//! into the same history; a record whose predecessor has not come is skipped naming the gap;
//! an older export's single record still imports; a random property over sizes and bounds.

use super::Partition;
use super::api::Caller;
use super::testing::fresh;
use super::testing_api::{caller, loaded, normalized, notes_verb, pages_within, verb};
use crate::store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};

/// `part` as `agent` at `now`.
fn as_agent(part: &Partition, agent: &str, now: i64) -> Caller {
    Caller { agent: agent.into(), ..caller(part, now) }
}

/// The time of the `i`th write (from 0): one second apart, from 1 s.
fn second(i: usize) -> i64 {
    1_000 * (i64::try_from(i).unwrap() + 1)
}

/// Writes `count` versions of note `big` of about `size` bytes each (agents `a` and `b` by turns,
/// one second apart), then a small note after it in key order.
fn written(store: &Store, part: &Partition, count: usize, size: usize) {
    for i in 0..count {
        let agent = if i % 2 == 0 { "a" } else { "b" };
        let value = format!("{i}:{}", "x".repeat(size));
        let body = json!({"key": "big", "value": value, "kind": "task_state"});
        let reply = notes_verb(store, &as_agent(part, agent, second(i)), "note_write", &body);
        assert!(reply.get("error").is_none(), "{reply}");
    }
    let body = json!({"key": "small", "value": "after", "kind": "decision"});
    notes_verb(store, &as_agent(part, "a", 1_000_000), "note_write", &body);
}

/// Every page of `part`'s export at `max_bytes` (and `limit`), each within the bound unless it is
/// one record of one version.
fn pages_at(store: &Store, part: &Partition, at: (usize, usize)) -> Vec<Vec<Value>> {
    pages_within(store, part, at, |r| r["versions"].as_array().is_some_and(Vec::is_empty))
}

/// The records of note `key` across `pages`, in order.
fn note_records(pages: &[Vec<Value>], key: &str) -> Vec<Value> {
    pages.concat().into_iter().filter(|r| r["kind"] == "note" && r["key"] == key).collect()
}

/// The version numbers a note record holds, oldest first.
fn numbers(r: &Value) -> Vec<u64> {
    let earlier = r["versions"].as_array().unwrap().iter().map(|v| v["version"].as_u64().unwrap());
    earlier.chain([r["version"].as_u64().unwrap()]).collect()
}

/// A value as a test compares it: its length and its last characters (the version's number).
fn short(v: &Value) -> Value {
    let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    json!([text.len(), text.chars().rev().take(4).collect::<String>()])
}

/// What a reader sees of note `key`: its history (writer, time, version, value), every page of
/// it, and its reads at every second of the writes.
fn seen(store: &Store, part: &Partition, key: &str, count: usize) -> Vec<Value> {
    let who = caller(part, 10_000_000);
    let mut out = Vec::new();
    let mut body = json!({"key": key, "limit": 100});
    loop {
        let history = notes_verb(store, &who, "history", &body);
        let events = history["events"].as_array().unwrap_or_else(|| panic!("{history}"));
        out.extend(
            events.iter().map(|e| json!([e["agent"], e["at"], e["after"]["version"], short(&e["after"]["value"])])),
        );
        match &history["nextCursor"] {
            Value::Null => break,
            next => body["cursor"] = next.clone(),
        }
    }
    for t in (0..=count + 1).map(|s| second(s) - 500) {
        let notes = notes_verb(store, &who, "note_list", &json!({"key": key, "as_of": t}))["notes"].clone();
        out.extend(notes.as_array().unwrap().iter().map(|n| json!([t, n["version"], short(&n["value"]), n["agent"]])));
    }
    out
}

/// Imports `pages` into `part` one call each, as an admin; the replies.
fn import_each(store: &Store, part: &Partition, pages: &[Vec<Value>]) -> Vec<Value> {
    let admin = caller(part, 20_000_000);
    pages.iter().map(|p| verb(store, &admin, "import", &json!({"records": p, "allAgents": true})).unwrap()).collect()
}

#[test]
fn a_note_of_many_large_versions_is_split_within_the_page_bound_and_imports_page_by_page() {
    let (_dir, store, part) = fresh();
    written(&store, &part, 30, 60 * 1024);
    let bound = 256 * 1024;
    let pages = pages_at(&store, &part, (500, bound));
    let big = note_records(&pages, "big");
    assert!(big.len() >= 8, "30 versions of 60 KiB in 256 KiB records: {}", big.len());
    // In version order, every version once; each record's markers name its neighbours.
    let all: Vec<u64> = big.iter().flat_map(numbers).collect();
    assert_eq!(all, (1..=30).collect::<Vec<_>>());
    for (i, r) in big.iter().enumerate() {
        assert!(serde_json::to_vec(r).unwrap().len() <= bound);
        assert_eq!(r.get("continued"), (i + 1 < big.len()).then_some(&json!(true)), "record {i}");
        let before = i.checked_sub(1).map(|j| json!(numbers(&big[j]).last().unwrap()));
        assert_eq!(r.get("follows"), before.as_ref(), "record {i}");
    }
    assert_eq!(note_records(&pages, "small").len(), 1);
    let copy = Partition::new("local", "u1", "copy").unwrap();
    for reply in import_each(&store, &copy, &pages) {
        assert_eq!(reply["skipped"], json!([]), "{reply}");
    }
    assert_eq!(seen(&store, &copy, "big", 30), seen(&store, &part, "big", 30));
    assert_eq!(seen(&store, &copy, "big", 30).len(), 30 + 31, "30 events, the note read at 31 times");
    assert_eq!(normalized(&pages_at(&store, &copy, (500, bound)).concat()), normalized(&pages.concat()));
    // Twice is once.
    for reply in import_each(&store, &copy, &pages) {
        assert_eq!(reply["imported"]["notes"], 0, "{reply}");
    }
    // One record a page (`limit` 1): each page stops between two records of the note.
    let one = pages_at(&store, &part, (1, bound));
    assert!(one.iter().all(|p| p.len() == 1));
    assert_eq!(note_records(&one, "big"), big);
    assert!(store.check().unwrap().ok);
}

#[test]
fn load_rebuilds_a_split_note() {
    let (_dir, store, part) = fresh();
    written(&store, &part, 12, 60 * 1024);
    let records = pages_at(&store, &part, (500, 128 * 1024)).concat();
    assert!(note_records(std::slice::from_ref(&records), "big").len() > 3);
    let (target, reply) = loaded(&store, &records, "loaded");
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    assert_eq!(seen(&store, &target, "big", 12), seen(&store, &part, "big", 12));
}

#[test]
fn a_record_whose_predecessor_has_not_come_is_skipped_naming_the_gap() {
    let (_dir, store, part) = fresh();
    written(&store, &part, 8, 60 * 1024);
    let big = note_records(&pages_at(&store, &part, (500, 128 * 1024)), "big");
    assert!(big.len() >= 4, "{}", big.len());
    let copy = Partition::new("local", "u1", "copy").unwrap();
    let one = |r: &Value| import_each(&store, &copy, &[vec![r.clone()]]).remove(0);
    let reason = |reply: &Value| reply["skipped"][0]["reason"].as_str().unwrap_or_default().to_owned();
    // The second record first: no note here, nothing stored.
    let follows = big[1]["follows"].as_u64().unwrap();
    let reply = one(&big[1]);
    assert!(
        reason(&reply).starts_with(&format!(
            "follows: this record continues the note after its version {follows}, but the note is not here"
        )),
        "{reply}"
    );
    assert_eq!(notes_verb(&store, &caller(&copy, 20_000_000), "note_list", &json!({"key": "big"}))["notes"], json!([]));
    // The first, then the third: the copy is at the first's last version, the gap named.
    assert_eq!(one(&big[0])["skipped"], json!([]));
    let at = numbers(&big[0]).last().copied().unwrap();
    let reply = one(&big[2]);
    assert!(reason(&reply).contains(&format!("but the note here is at version {at}")), "{reply}");
    let list = notes_verb(&store, &caller(&copy, 20_000_000), "note_list", &json!({"key": "big"}));
    assert_eq!(list["notes"][0]["version"], json!(at), "nothing of the skipped record is stored");
    // The rest in order: the same note as the source's.
    for r in &big[1..] {
        assert_eq!(one(r)["skipped"], json!([]));
    }
    assert_eq!(seen(&store, &copy, "big", 8), seen(&store, &part, "big", 8));
    // Into a note of its own history: only the last record's current version, as the next one.
    let own = Partition::new("local", "u1", "own").unwrap();
    notes_verb(
        &store,
        &as_agent(&own, "a", 500),
        "note_write",
        &json!({"key": "big", "value": "mine", "kind": "task_state"}),
    );
    let replies = import_each(&store, &own, std::slice::from_ref(&big));
    let reasons: Vec<String> =
        replies[0]["skipped"].as_array().unwrap().iter().map(|s| s["reason"].as_str().unwrap().to_owned()).collect();
    assert_eq!(reasons.len(), big.len() - 1, "{reasons:?}");
    assert!(reasons.iter().all(|r| r.starts_with("continued: the note here has a history of its own")), "{reasons:?}");
    let list = notes_verb(&store, &caller(&own, 20_000_000), "note_list", &json!({"key": "big"}));
    assert_eq!((&list["notes"][0]["version"], &list["notes"][0]["value"]), (&json!(2), &big.last().unwrap()["value"]));
}

#[test]
fn an_older_single_record_of_every_version_still_imports() {
    let (_dir, store, part) = fresh();
    written(&store, &part, 6, 20 * 1024);
    let big = note_records(&pages_at(&store, &part, (500, 48 * 1024)), "big");
    assert!(big.len() > 1);
    // The record an export made before: every earlier version in `versions`, no markers.
    let mut whole = big.last().unwrap().clone();
    let mut versions = Vec::new();
    for r in &big {
        versions.extend(r["versions"].as_array().unwrap().iter().cloned());
        if r.get("continued").is_some() {
            let own: serde_json::Map<String, Value> = r
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| crate::notes::import::VERSION_FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            versions.push(Value::Object(own));
        }
    }
    whole["versions"] = json!(versions);
    whole.as_object_mut().unwrap().remove("follows");
    let copy = Partition::new("local", "u1", "copy").unwrap();
    assert_eq!(import_each(&store, &copy, &[vec![whole]])[0]["skipped"], json!([]));
    assert_eq!(seen(&store, &copy, "big", 6), seen(&store, &part, "big", 6));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Whatever the number and sizes of a note's versions and the page bound: every page fits
    /// (or is one version alone), and the pages imported one by one give the source's note.
    #[test]
    fn split_notes_round_trip(
        sizes in prop::collection::vec(0usize..6_000, 1..14),
        bound in 1_024usize..40_000,
        limit in 1usize..6,
    ) {
        let (_dir, store, part) = fresh();
        for (i, size) in sizes.iter().enumerate() {
            let body = json!({"key": "big", "value": "y".repeat(*size) + &i.to_string(), "kind": "task_state"});
            let reply = notes_verb(&store, &as_agent(&part, "a", second(i)), "note_write", &body);
            prop_assert!(reply.get("error").is_none());
        }
        let pages = pages_at(&store, &part, (limit, bound));
        let big = note_records(&pages, "big");
        prop_assert_eq!(big.iter().flat_map(numbers).collect::<Vec<_>>(), (1..=sizes.len() as u64).collect::<Vec<_>>());
        let copy = Partition::new("local", "u1", "copy").unwrap();
        for reply in import_each(&store, &copy, &pages) {
            prop_assert_eq!(&reply["skipped"], &json!([]));
        }
        prop_assert_eq!(seen(&store, &copy, "big", sizes.len()), seen(&store, &part, "big", sizes.len()));
    }
}
