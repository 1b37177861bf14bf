//! A fact revised many times (`fact_attribute_time::WritesIn`): its earlier versions point at the
//! fact's one list of writes instead of each holding the list as it was, so the store grows by a
//! constant a revision, and every `as_of` read still sees each version's attributes, through a
//! restore that starts the fact's list anew and through export and import.

use super::Partition;
use super::shown_attributes::SHOWN_ATTRIBUTE_BYTES;
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, export_pages, normalized, notes_verb, verb};
use super::trees::REL;
use crate::history::EVENT;
use crate::store::Store;
use serde_json::{Value, json};

const DAY: i64 = 86_400_000;
pub(super) const REVISIONS: i64 = 300;
/// When revision `i` was written: one a day, the last well before `TODAY`.
pub(super) const fn day(i: i64) -> i64 {
    TODAY - (REVISIONS + 10 - i) * DAY
}

pub(super) fn relate(store: &Store, part: &Partition, now: i64, to: &str, extra: &Value) -> Value {
    let mut body = json!({"from": "Ann", "to": to, "type": "works_at"});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    verb(store, &caller(part, now), "relate", &body).unwrap()
}

/// The `level` of Ann's `works_at` Acme fact as a recall as of `as_of` shows it, true at
/// `valid_at` (now when `None`).
pub(super) fn level_as_of(store: &Store, part: &Partition, as_of: i64) -> Option<Value> {
    level_at(store, part, as_of, None)
}

fn level_at(store: &Store, part: &Partition, as_of: i64, valid_at: Option<&str>) -> Option<Value> {
    let mut body = json!({"subject": "Ann", "as_of": as_of});
    if let Some(at) = valid_at {
        body["valid_at"] = json!(at);
    }
    let reply = verb(store, &caller(part, TODAY), "recall", &body).unwrap();
    let facts = reply["facts"].as_array().unwrap();
    facts.iter().find(|f| f["object"] == "Acme").map(|f| f["attributes"]["level"].clone())
}

/// The bytes of every relation record of `part`, and of the largest.
fn record_bytes(store: &Store, part: &Partition) -> (usize, usize) {
    let snap = store.snapshot().unwrap();
    let sizes: Vec<usize> = snap.prefix(REL, part.prefix()).unwrap().map(|kv| kv.unwrap().1.len()).collect();
    (sizes.iter().sum(), sizes.into_iter().max().unwrap_or(0))
}

#[test]
fn each_revision_costs_a_constant_and_every_version_reads_as_it_was() {
    let (_dir, store, _) = fresh();
    let part = Partition::new("local", "u1", "a").unwrap();
    for i in 0..REVISIONS {
        relate(&store, &part, day(i), "Acme", &json!({"attributes": {"level": i}}));
    }
    let (all, largest) = record_bytes(&store, &part);
    // The fact's record holds all 300 writes; each earlier version adds a few hundred bytes
    // (each held its list as it was: ~3 MB here, growing with the square of the revisions).
    assert!(all < largest + 300 * 512, "{all} bytes of relation records, the largest {largest}");
    for i in [0, 1, 2, 150, 298, 299] {
        assert_eq!(level_as_of(&store, &part, day(i) + 1), Some(json!(i)), "as of revision {i}");
    }
    assert_eq!(level_as_of(&store, &part, day(0) - 1), None, "before the fact");
    // Each version's writes: as known at revision 200, the level true at revision 100's time.
    let then = super::iso_ms(day(100) + 1);
    assert_eq!(level_at(&store, &part, day(200) + 1, Some(&then)), Some(json!(100)));
    // An event keeps the newest writes history shows and counts the rest (it kept both lists
    // whole: ~36 KB an event by now, growing with the revisions).
    let snap = store.snapshot().unwrap();
    let largest_event = snap.prefix(EVENT, part.prefix()).unwrap().map(|kv| kv.unwrap().1.len()).max().unwrap();
    assert!(largest_event < 2 * SHOWN_ATTRIBUTE_BYTES + 2048, "an event of {largest_event} bytes");
    let mut body = json!({"fact": {"from": "Ann", "to": "Acme", "type": "works_at"}, "limit": 100});
    let newest = loop {
        let page = notes_verb(&store, &caller(&part, TODAY), "history", &body);
        match page["nextCursor"].as_str() {
            Some(next) => body["cursor"] = json!(next),
            None => break page["events"].as_array().unwrap().last().unwrap().clone(),
        }
    };
    let after = &newest["after"];
    let shown = after["attribute_writes"].as_array().map_or(0, Vec::len);
    assert_eq!(after["attribute_writes_omitted"].as_u64().unwrap() + shown as u64, REVISIONS as u64, "{after}");
    assert_eq!(after["attribute_writes"][shown - 1]["attributes"], json!({"level": REVISIONS - 1}));
    // A copy made by export and import reads alike,
    // and exports the same records again.
    let records: Vec<Value> = export_pages(&store, &part, 500).concat();
    let b = Partition::new("local", "u1", "b").unwrap();
    let imported = verb(&store, &caller(&b, TODAY), "import", &json!({"records": records})).unwrap();
    assert!(imported["skipped"].as_array().unwrap().is_empty(), "{imported}");
    for i in [0, 1, 150, 299] {
        assert_eq!(level_as_of(&store, &b, day(i) + 1), Some(json!(i)), "the copy, as of revision {i}");
    }
    assert_eq!(level_at(&store, &b, day(200) + 1, Some(&then)), Some(json!(100)));
    let (copied, largest) = record_bytes(&store, &b);
    assert!(copied < largest + 300 * 512, "the copy's versions point at its fact's list too: {copied} bytes");
    assert_eq!(normalized(&export_pages(&store, &b, 500).concat()), normalized(&records));
}

/// Ended by a `replaces` and said again, the fact lives anew with a list of its own; its earlier
/// life's versions read the list its copy kept.
#[test]
fn a_restored_fact_leaves_its_earlier_versions_their_writes() {
    let (_dir, store, _) = fresh();
    let part = Partition::new("local", "u1", "a").unwrap();
    for i in 0..4 {
        let date = format!("{}-01-01", 2020 + i);
        relate(&store, &part, day(i), "Acme", &json!({"attributes": {"level": i}, "date": date}));
    }
    relate(&store, &part, day(10), "Beta", &json!({"replaces": true}));
    let back = relate(&store, &part, day(20), "Acme", &json!({"attributes": {"level": 40}}));
    assert_eq!(back["restored"].as_array().map(Vec::len), Some(1), "restored: {back}");
    relate(&store, &part, day(21), "Acme", &json!({"attributes": {"level": 41}}));
    for (at, level) in [(day(0), 0), (day(1), 1), (day(3), 3), (day(20), 40), (day(21), 41)] {
        assert_eq!(level_as_of(&store, &part, at + 1), Some(json!(level)), "as of {at}");
    }
    assert_eq!(level_as_of(&store, &part, day(10) + 1), None, "ended by the replaces");
    // The level true in mid-2021: as known before the 2021 write, the 2020 one's; once it was
    // written, its own, also as known before the later writes.
    for (i, level) in [(1, 0), (2, 1), (3, 1)] {
        assert_eq!(level_at(&store, &part, day(i) - 1, Some("2021-06-01")), Some(json!(level)), "before write {i}");
    }
    assert_eq!(level_at(&store, &part, day(3) + 1, Some("2022-06-01")), Some(json!(2)));
}

/// A fact revised past a thousand times comes through export and import with every write (a
/// record of over 1,000 writes was skipped, and every earlier version with it).
#[test]
fn a_record_of_many_writes_is_imported_whole() {
    let (_dir, store, _) = fresh();
    let part = Partition::new("local", "u1", "a").unwrap();
    let writes: Vec<Value> = (0..1500)
        .map(|i| json!({"attributes": {"level": i}, "from": super::iso_ms(day(0) + i * 1000), "recorded_at": super::iso_ms(day(0) + i * 1000)}))
        .collect();
    let records = json!([
        {"kind": "entity", "id": "1", "name": "Ann", "types": [], "attributes": {}, "recorded_at": super::iso_ms(day(0))},
        {"kind": "entity", "id": "2", "name": "Acme", "types": [], "attributes": {}, "recorded_at": super::iso_ms(day(0))},
        {"kind": "fact", "id": "3", "from": "1", "to": "2", "from_name": "Ann", "to_name": "Acme", "type": "works_at",
         "attributes": {"level": 1499}, "valid_from": null, "valid_to": null, "recorded_at": super::iso_ms(day(0) + 1_499_000),
         "provenance": {"kind": "asserted", "label": null, "agent": "a"}, "attribute_writes": writes},
    ]);
    let imported = verb(&store, &caller(&part, TODAY), "import", &json!({"records": records})).unwrap();
    assert_eq!(imported["skipped"], json!([]), "{imported}");
    assert_eq!(imported["imported"]["facts"], 1, "{imported}");
    let then = super::iso_ms(day(0) + 700_500);
    assert_eq!(level_at(&store, &part, TODAY, Some(&then)), Some(json!(700)));
}

#[test]
fn an_event_keeps_the_record_as_it_did_when_it_spelt_out_every_write() {
    use super::event_writes::{OMITTED, kept, left_out};
    use super::fact_attribute_time::WritesIn;
    use super::graph::Relation;
    use super::records::decode;
    let (_dir, store, _) = fresh();
    let part = Partition::new("local", "u1", "a").unwrap();
    for i in 0..REVISIONS {
        relate(&store, &part, day(i), "Acme", &json!({"attributes": {"level": i, "note": "x".repeat(40)}}));
    }
    let snap = store.snapshot().unwrap();
    let mut omitted = 0;
    for kv in snap.prefix(REL, part.prefix()).unwrap() {
        let stored: Relation = decode(&kv.unwrap().1, "relation").unwrap();
        // What `kept` gave before it left the older writes out of the JSON it spelt, when the
        // record held its list (a version pointing at its fact's held none).
        let mut listed = stored.clone();
        if stored.writes_in.is_none() {
            WritesIn::fill(&snap, &part, &mut listed, None).unwrap();
        }
        let mut whole = serde_json::to_value(Relation { writes: None, ..stored.clone() }).unwrap();
        let from = left_out(&listed.attribute_writes);
        if !listed.attribute_writes.is_empty() {
            whole["attribute_writes"] = serde_json::to_value(&listed.attribute_writes[from..]).unwrap();
        }
        if from > 0 {
            whole[OMITTED] = json!(from);
            omitted += 1;
        }
        let (p, r) = (part.clone(), stored.clone());
        let (got, _) = store.write(move |tx| kept(tx, &p, &r)).unwrap();
        assert_eq!(serde_json::to_vec(&got).unwrap(), serde_json::to_vec(&whole).unwrap());
    }
    assert!(omitted > 0, "no record had writes left out");
}
