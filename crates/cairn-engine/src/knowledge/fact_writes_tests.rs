//! A fact's attribute writes kept apart (`fact_writes.rs`): a relate that changes a fact's
//! attributes costs as many pages after 2,000 writes as after 250, a store whose records held
//! their lists answers as before once moved (`fact_writes_build.rs`), and forgetting a fact, its
//! subject or its scope leaves none of its writes behind.

use super::Partition;
use super::fact_writes::FACT_WRITES;
use super::graph::Relation;
use super::records::decode;
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, export_pages, normalized, notes_verb, verb};
use super::trees::REL;
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

const DAY: i64 = 86_400_000;

fn relate(store: &Store, part: &Partition, now: i64, to: &str, extra: &Value) -> Value {
    let mut body = json!({"from": "Ann", "to": to, "type": "works_on"});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let reply = verb(store, &caller(part, now), "relate", &body).unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
    reply
}

/// What a reader sees of Ann's facts: recalls over a grid of `as_of` and `valid_at`, the export
/// (ids dropped) and the history of her `works_on` Cairn fact.
pub(super) fn answers(store: &Store, part: &Partition, times: &[i64]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut bodies = vec![json!({"subject": "Ann"})];
    for &t in times {
        bodies.push(json!({"subject": "Ann", "as_of": t}));
        bodies.push(json!({"subject": "Ann", "valid_at": super::iso_ms(t)}));
        for &v in times {
            bodies.push(json!({"subject": "Ann", "as_of": t, "valid_at": super::iso_ms(v)}));
        }
    }
    for body in bodies {
        let reply = verb(store, &caller(part, TODAY), "recall", &body).unwrap();
        out.push(json!([body, reply["facts"]]));
    }
    let records: Vec<Value> = export_pages(store, part, 1000).concat();
    out.push(json!(normalized(&records)));
    let body = json!({"fact": {"from": "Ann", "to": "Cairn", "type": "works_on"}, "limit": 100});
    out.push(notes_verb(store, &caller(part, TODAY), "history", &body)["events"].clone());
    out
}

/// Rewrites every relation record of the store as a store written before `k.fact_writes` held it:
/// its list inline, no `writes`; with `copies`, each earlier version holds a copy of its fact's
/// first writes in place of pointing at them (as before versions pointed). The tree goes, marker
/// and all.
pub(super) fn to_old_layout(store: &Store, copies: bool) {
    store
        .write(move |tx| {
            for (key, bytes) in tx.prefix(REL, &[])? {
                let rel: Relation = decode(&bytes, "relation")?;
                let part = Partition::of_key(&key)?;
                let mut record: Value = serde_json::from_slice(&bytes).unwrap();
                let record = record.as_object_mut().unwrap();
                record.remove("writes");
                let list = match (rel.writes_in, rel.writes) {
                    (Some(w), _) if copies => {
                        record.remove("writes_in");
                        super::fact_writes::first_in(tx, &part, w.holder, w.n)?
                    }
                    (None, Some(_)) => super::fact_writes::first_in(tx, &part, rel.id, u32::MAX)?,
                    _ => Vec::new(),
                };
                if !list.is_empty() {
                    record.insert("attribute_writes".into(), serde_json::to_value(list).unwrap());
                }
                tx.put(REL, &key, &serde_json::to_vec(record).unwrap())?;
            }
            tx.delete_prefix(FACT_WRITES, &[])?;
            Ok(())
        })
        .unwrap();
    store.forget_marks();
}

/// The entries `k.fact_writes` holds for `part`.
fn writes_left(store: &Store, part: &Partition) -> usize {
    store.snapshot().unwrap().prefix(FACT_WRITES, part.prefix()).unwrap().count()
}

/// Ann's `works_on` Cairn fact, its status changed `n` times (one a day, ending before `TODAY`),
/// in a store that counts pages.
fn revised(n: i64) -> (tempfile::TempDir, Store, Partition) {
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint while the reads are counted: its pages are not theirs.
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    let part = Partition::new("local", "u1", "default").unwrap();
    for i in 0..n {
        let now = TODAY - (n + 1 - i) * 60_000;
        relate(&store, &part, now, "Cairn", &json!({"attributes": {"status": format!("step {i}")}}));
    }
    (dir, store, part)
}

#[test]
fn a_relate_that_changes_attributes_costs_the_same_after_2000_writes_as_after_250() {
    let mut costs = Vec::new();
    for n in [250, 2_000] {
        let (_dir, store, part) = revised(n);
        let body = json!({"from": "Ann", "to": "Cairn", "type": "works_on", "attributes": {"status": "done"}});
        let before = store.pages_read();
        verb(&store, &caller(&part, TODAY), "relate", &body).unwrap();
        let pages = store.pages_read() - before;
        let snap = store.snapshot().unwrap();
        let fact = snap.prefix(REL, part.prefix()).unwrap().map(|kv| kv.unwrap().1).next().unwrap();
        let rel: Relation = decode(&fact, "relation").unwrap();
        assert_eq!(rel.writes.map(|k| k.n), Some(u32::try_from(n).unwrap() + 1), "each write and the call's");
        costs.push((n, pages, fact.len()));
    }
    eprintln!("pages read and fact record bytes by writes: {costs:?}");
    let [(_, small, small_bytes), (_, big, big_bytes)] = costs[..] else { unreachable!() };
    // Eight times the writes deepen a tree a level at most; a record holding the list read and
    // rewrote it whole (at 2,000 writes, ~100 KB over some 25 pages).
    assert!(big <= small + 4, "{big} pages at 2,000 writes, {small} at 250");
    assert!(big_bytes <= small_bytes + 8, "a fact record of {big_bytes} bytes at 2,000 writes, {small_bytes} at 250");
}

#[test]
fn a_store_whose_records_held_their_lists_answers_as_before_once_moved() {
    for copies in [false, true] {
        let (_dir, store, part) = fresh();
        let t = |d: i64| TODAY - d * DAY;
        relate(&store, &part, t(40), "Cairn", &json!({"attributes": {"status": "planned"}}));
        relate(&store, &part, t(30), "Cairn", &json!({"attributes": {"status": "active", "valid_from": "2020-03-01"}}));
        relate(&store, &part, t(20), "Cairn", &json!({"attributes": {"status": "paused", "lead": "Bo"}}));
        relate(&store, &part, t(15), "Cairn", &json!({"attributes": {"status": "early", "valid_from": "2019-01-01"}}));
        relate(&store, &part, t(10), "Rust", &json!({"replaces": true}));
        relate(&store, &part, t(5), "Cairn", &json!({"replaces": true, "attributes": {"status": "back"}}));
        relate(&store, &part, t(2), "Cairn", &json!({"attributes": {"status": "shipped"}}));
        let times: Vec<i64> = [45, 35, 25, 17, 12, 7, 3, 1].map(t).to_vec();
        let before = answers(&store, &part, &times);
        to_old_layout(&store, copies);
        assert_eq!(writes_left(&store, &part), 0);
        // The first verb moves the lists out (and reads them where they now are).
        assert_eq!(answers(&store, &part, &times), before, "copies: {copies}");
        let snap = store.snapshot().unwrap();
        assert_eq!(snap.get(FACT_WRITES, &[]).unwrap(), Some(vec![1]));
        for kv in snap.prefix(REL, part.prefix()).unwrap() {
            let text = String::from_utf8(kv.unwrap().1).unwrap();
            assert!(!text.contains("attribute_writes"), "a record kept its list: {text}");
        }
        assert!(writes_left(&store, &part) > 0);
        // And relates on from there as a store written by this version does.
        relate(&store, &part, TODAY - 1000, "Cairn", &json!({"attributes": {"status": "retired"}}));
        let reply = verb(&store, &caller(&part, TODAY), "recall", &json!({"subject": "Ann"})).unwrap();
        let cairn = reply["facts"].as_array().unwrap().iter().find(|f| f["object"] == "Cairn").unwrap();
        assert_eq!(cairn["attributes"]["status"], "retired", "{reply}");
    }
}

#[test]
fn forgetting_a_fact_its_subject_or_its_scope_leaves_none_of_its_writes() {
    let forms = [
        json!({"fact": {"from": "Ann", "to": "Cairn", "type": "works_on"}}),
        json!({"subject": "Ann"}),
        json!({"all": true}),
    ];
    for form in forms {
        let (_dir, store, part) = fresh();
        for (i, status) in ["planned", "active", "paused"].iter().enumerate() {
            let now = TODAY - (10 - i64::try_from(i).unwrap()) * DAY;
            relate(&store, &part, now, "Cairn", &json!({"attributes": {"status": status}}));
        }
        relate(&store, &part, TODAY - 5 * DAY, "Rust", &json!({"replaces": true}));
        relate(&store, &part, TODAY - 4 * DAY, "Cairn", &json!({"replaces": true, "attributes": {"status": "x"}}));
        relate(&store, &part, TODAY - 3 * DAY, "Cairn", &json!({"attributes": {"status": "y"}}));
        assert!(writes_left(&store, &part) > 0);
        let reply = verb(&store, &caller(&part, TODAY), "forget", &form).unwrap();
        assert!(reply.get("error").is_none(), "{form}: {reply}");
        assert_eq!(writes_left(&store, &part), 0, "{form}: {reply}");
    }
}
