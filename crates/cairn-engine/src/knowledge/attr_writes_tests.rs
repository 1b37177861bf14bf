//! The index of attribute writes (`attr_writes.rs`) against the history read it replaced
//! (`attribute_time::history_now`): over random histories of attribute writes (dated in the past
//! and the future, undated, under labels, several keys, in several spellings of the name), forgets
//! (an attribute, the subject, a source) and imports, what is true at any instant reads the same
//! from both; the index holds exactly the writes of the history's stored entities, so a forget
//! leaves nothing; a store written before builds it once; a recall reads as many pages after
//! 2,000 writes of an attribute as after 250.

use super::attr_writes;
use super::attribute_time::{Written, history_now};
use super::graph::{Entity, entities};
use super::part::Partition;
use super::records::decode;
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, export_pages, verb};
use super::trees::{ATTR_WRITES, ENT};
use crate::history::{EVENT, Event};
use crate::store::{Store, StoreOptions};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const NAMES: [&str; 3] = ["Ann", "ann", "Bo Lind"];
const KEYS: [&str; 3] = ["mood", "status", "team"];
const VALUES: [&str; 3] = ["calm", "busy", "away"];
const DATES: [Option<&str>; 4] = [None, Some("2021-01-01"), Some("2026-01-01"), Some("2031-01-01")];
const LABELS: [&str; 2] = ["chat", "crm"];

/// The instants reads are compared at: before every date, between them, at call times, after all.
const INSTANTS: [i64; 6] = [0, 1_640_000_000_000, TODAY - 1, TODAY + 5_000, TODAY + 50_000, 2_000_000_000_000];

#[derive(Debug, Clone)]
enum Step {
    Remember {
        name: usize,
        keys: Vec<(usize, usize)>,
        date: usize,
        label: Option<usize>,
    },
    ForgetAttribute(usize, usize),
    ForgetSubject(usize),
    ForgetSource(usize),
    /// Export the scope and import it into the second scope.
    Import,
}

fn step() -> impl Strategy<Value = Step> {
    let written = prop::collection::vec((0..KEYS.len(), 0..VALUES.len()), 1..3);
    prop_oneof![
        8 => (0..NAMES.len(), written, 0..DATES.len(), prop::option::of(0..LABELS.len()))
            .prop_map(|(name, keys, date, label)| Step::Remember { name, keys, date, label }),
        1 => (0..NAMES.len(), 0..KEYS.len()).prop_map(|(n, k)| Step::ForgetAttribute(n, k)),
        1 => (0..NAMES.len()).prop_map(Step::ForgetSubject),
        1 => (0..LABELS.len()).prop_map(Step::ForgetSource),
        1 => Just(Step::Import),
    ]
}

/// Runs `steps` in `part` (imports into a second scope); returns both partitions.
fn run(store: &Store, part: &Partition, steps: &[Step]) -> [Partition; 2] {
    let imported = Partition::new("local", "u1", "imported").unwrap();
    for (i, s) in steps.iter().enumerate() {
        let now = TODAY + 1_000 * (i64::try_from(i).unwrap() + 1);
        let who = caller(part, now);
        let body = match s.clone() {
            Step::Remember { name, keys, date, label } => {
                let attributes: serde_json::Map<String, Value> =
                    keys.iter().map(|&(k, v)| (KEYS[k].to_owned(), json!(VALUES[v]))).collect();
                let mut body = json!({"facts": {"entities": [{"name": NAMES[name], "attributes": attributes}]}});
                if let Some(d) = DATES[date] {
                    body["date"] = json!(d);
                }
                if let Some(l) = label {
                    body["source"] = json!(LABELS[l]);
                }
                verb(store, &who, "remember", &body).unwrap();
                continue;
            }
            Step::ForgetAttribute(n, k) => json!({"attribute": {"subject": NAMES[n], "key": KEYS[k]}}),
            Step::ForgetSubject(n) => json!({"subject": NAMES[n]}),
            Step::ForgetSource(l) => json!({"source": LABELS[l]}),
            Step::Import => {
                let records = export_pages(store, part, 50).concat();
                verb(store, &caller(&imported, now), "import", &json!({ "records": records })).unwrap();
                continue;
            }
        };
        verb(store, &who, "forget", &body).unwrap();
    }
    [part.clone(), imported]
}

/// Every entity of `part`.
fn stored(store: &Store, part: &Partition) -> Vec<Entity> {
    let snap = store.snapshot().unwrap();
    entities(&snap, part).unwrap()
}

/// The keys of `part` in the index.
fn entries(store: &Store, part: &Partition) -> BTreeSet<Vec<u8>> {
    let snap = store.snapshot().unwrap();
    snap.prefix(ATTR_WRITES, part.prefix()).unwrap().map(|item| item.unwrap().0).collect()
}

/// The keys the writes of `part`'s stored entities in its history file, through the writers'
/// own filing, in a scratch store.
fn expected(store: &Store, part: &Partition) -> BTreeSet<Vec<u8>> {
    let ids: BTreeSet<u64> = stored(store, part).iter().map(|e| e.id).collect();
    let snap = store.snapshot().unwrap();
    let events: Vec<Event> =
        snap.prefix(EVENT, part.prefix()).unwrap().map(|item| decode(&item.unwrap().1, "event").unwrap()).collect();
    let (_dir, scratch, _) = fresh();
    let p = part.clone();
    scratch
        .write(move |tx| {
            for event in events.iter().filter(|e| Written::by(e).is_some_and(|w| ids.contains(&w.entity))) {
                attr_writes::file_event(tx, &p, event)?;
            }
            Ok(())
        })
        .unwrap();
    entries(&scratch, part)
}

/// Whether the index of `part` holds exactly its history's writes, and reads as the history.
fn check(store: &Store, part: &Partition) -> Result<(), TestCaseError> {
    prop_assert_eq!(entries(store, part), expected(store, part), "the index is not the history's writes");
    let snap = store.snapshot().unwrap();
    for e in stored(store, part) {
        for now in INSTANTS {
            let indexed = attr_writes::attributes_now(&snap, part, &e, now).unwrap();
            let read = history_now(&snap, part, &e, now).unwrap();
            prop_assert_eq!(indexed, Some(read), "{} at {}", e.name, now);
        }
    }
    Ok(())
}

/// Takes the index and its marker out, as a store written before it has neither.
fn drop_index(store: &Store) {
    store.write(|tx| tx.delete_prefix(ATTR_WRITES, &[]).map(|_| ())).unwrap();
    store.forget_marks();
    assert!(store.snapshot().unwrap().get(ATTR_WRITES, &[]).unwrap().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn what_is_true_now_reads_the_same_from_the_index_as_from_the_history(
        steps in prop::collection::vec(step(), 1..14)
    ) {
        let (_dir, store, part) = fresh();
        let written = run(&store, &part, &steps);
        for p in &written {
            check(&store, p)?;
        }
        // Built from the history alone, as for a store written before the index: the same.
        let before: Vec<_> = written.iter().map(|p| entries(&store, p)).collect();
        drop_index(&store);
        verb(&store, &caller(&part, TODAY), "status", &json!({})).unwrap();
        let holds = store.snapshot().unwrap().prefix(ENT, &[]).unwrap().next().is_some();
        prop_assert_eq!(store.snapshot().unwrap().get(ATTR_WRITES, &[]).unwrap().is_some(), holds);
        for (p, filed) in written.iter().zip(&before) {
            prop_assert_eq!(&entries(&store, p), filed);
            check(&store, p)?;
        }
    }
}

/// `remember` of `name`'s `key` = `value`, dated `date` when given.
fn set(store: &Store, part: &Partition, now: i64, (name, key, value): (&str, &str, &str), date: Option<&str>) {
    let mut body = json!({"facts": {"entities": [{"name": name, "attributes": {key: value}}]}});
    if let Some(d) = date {
        body["date"] = json!(d);
    }
    let reply = verb(store, &caller(part, now), "remember", &body).unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
}

/// Ann's attributes as a plain recall of her shows them at `TODAY`.
fn shown(store: &Store, part: &Partition) -> Value {
    let reply = verb(store, &caller(part, TODAY), "recall", &json!({"subject": "Ann"})).unwrap();
    reply["subject"]["attributes"].clone()
}

#[test]
fn a_fresh_store_is_marked_by_its_first_write_and_never_built() {
    let (_dir, store, part) = fresh();
    assert!(store.snapshot().unwrap().get(ATTR_WRITES, &[]).unwrap().is_none());
    set(&store, &part, TODAY - 10, ("Ann", "mood", "calm"), None);
    assert_eq!(store.snapshot().unwrap().get(ATTR_WRITES, &[]).unwrap(), Some(vec![1]));
    assert_eq!(entries(&store, &part).len(), 1);
}

#[test]
fn a_store_written_before_reads_its_history_until_built_then_the_index() {
    let (_dir, store, part) = fresh();
    set(&store, &part, TODAY - 30, ("Ann", "mood", "calm"), None);
    set(&store, &part, TODAY - 20, ("Ann", "mood", "busy"), Some("2031-01-01"));
    set(&store, &part, TODAY - 10, ("Ann", "status", "on leave"), Some("2021-01-01"));
    let filed = entries(&store, &part);
    drop_index(&store);
    // Unbuilt: the index answers nothing, the read falls back to the history.
    let snap = store.snapshot().unwrap();
    let ann = stored(&store, &part).pop().unwrap();
    assert_eq!(attr_writes::attributes_now(&snap, &part, &ann, TODAY).unwrap(), None);
    let want = json!({"mood": "calm", "status": "on leave"});
    assert_eq!(Value::Object(history_now(&snap, &part, &ann, TODAY).unwrap()), want);
    // The first verb builds it, and the read answers the same from it.
    assert_eq!(shown(&store, &part), want);
    assert_eq!(store.snapshot().unwrap().get(ATTR_WRITES, &[]).unwrap(), Some(vec![1]));
    assert_eq!(entries(&store, &part), filed);
    let snap = store.snapshot().unwrap();
    assert_eq!(attr_writes::attributes_now(&snap, &part, &ann, TODAY).unwrap().map(Value::Object), Some(want));
}

#[test]
fn every_forget_leaves_no_attribute_write_behind() {
    for form in [
        json!({"subject": "Ann"}),
        json!({"attribute": {"subject": "Ann", "key": "mood"}}),
        json!({"source": "chat"}),
        json!({"all": true}),
    ] {
        let (_dir, store, part) = fresh();
        for (i, mood) in VALUES.iter().enumerate() {
            let body = json!({"source": "chat", "date": "2021-01-01",
                "facts": {"entities": [{"name": "Ann", "attributes": {"mood": mood}}]}});
            verb(&store, &caller(&part, TODAY - 100 + i64::try_from(i).unwrap()), "remember", &body).unwrap();
        }
        assert_eq!(entries(&store, &part).len(), 3, "{form}");
        let reply = verb(&store, &caller(&part, TODAY), "forget", &form).unwrap();
        assert_eq!(reply["state"], "forgotten", "{form}: {reply}");
        assert!(entries(&store, &part).is_empty(), "{form} left {:?}", entries(&store, &part));
    }
    let (_dir, store, part) = fresh();
    set(&store, &part, TODAY - 10, ("Ann", "mood", "calm"), None);
    verb(&store, &caller(&part, TODAY), "delete_user", &json!({})).unwrap();
    assert!(entries(&store, &part).is_empty(), "a deleted user's writes stay");
}

/// A store where Ann's mood was set `n` times, beside 200 other people's.
fn moody(n: usize) -> (tempfile::TempDir, Store, Partition) {
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint while the reads are counted: its pages are not theirs.
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    let part = Partition::new("local", "u1", "default").unwrap();
    let people: Vec<Value> = (0..200).map(|i| json!({"name": format!("Person {i}"), "attributes": {"n": i}})).collect();
    verb(&store, &caller(&part, 1), "remember", &json!({"facts": {"entities": people}})).unwrap();
    for i in 0..n {
        let mood = format!("mood {i}");
        set(&store, &part, 2 + i64::try_from(i).unwrap(), ("Ann", "mood", &mood), None);
    }
    (dir, store, part)
}

/// The reply of a recall of Ann at `TODAY`, and the pages it read.
fn recall_counted(store: &Store, part: &Partition) -> (Value, u64) {
    let before = store.pages_read();
    let reply = verb(store, &caller(part, TODAY), "recall", &json!({"subject": "Ann"})).unwrap();
    (reply, store.pages_read() - before)
}

#[test]
fn a_recall_reads_as_many_pages_after_2000_writes_of_an_attribute_as_after_250() {
    let (_small_dir, small, part) = moody(250);
    let (_big_dir, big, _) = moody(2_000);
    let (small_reply, small_pages) = recall_counted(&small, &part);
    let (big_reply, big_pages) = recall_counted(&big, &part);
    eprintln!("recall of Ann: {small_pages} pages after 250 writes, {big_pages} after 2,000");
    assert_eq!(small_reply["subject"]["attributes"], json!({"mood": "mood 249"}), "{small_reply}");
    assert_eq!(big_reply["subject"]["attributes"], json!({"mood": "mood 1999"}), "{big_reply}");
    assert!(big_pages <= small_pages + 4, "{small_pages} pages after 250 writes, {big_pages} after 2,000");
}
