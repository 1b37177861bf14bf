//! An export of a fact revised many times grows with the revisions, not their square: each
//! earlier version counts the writes of its fact it holds (`version_writes.rs`); a package that
//! spells each version's list out, as earlier builds wrote it, still imports; a count its fact
//! cannot answer is refused, naming the field.

use super::Partition;
use super::fact_revisions_tests::{REVISIONS, day, level_as_of, relate};
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, export_pages, normalized, verb};
use super::version_writes::FIELD;
use crate::store::Store;
use serde_json::{Value, json};

/// The export of `REVISIONS` revisions of Ann's `works_at` Acme fact, one a day.
fn revised(store: &Store, part: &Partition) -> Vec<Value> {
    for i in 0..REVISIONS {
        relate(store, part, day(i), "Acme", &json!({"attributes": {"level": i}}));
    }
    export_pages(store, part, 500).concat()
}

fn import(store: &Store, scope: &str, records: &[Value]) -> (Partition, Value) {
    let part = Partition::new("local", "u1", scope).unwrap();
    let reply = verb(store, &caller(&part, TODAY), "import", &json!({"records": records})).unwrap();
    (part, reply)
}

/// Every version of the copy reads as the source's did.
fn reads_alike(store: &Store, copy: &Partition) {
    for i in [0, 1, 150, REVISIONS - 2, REVISIONS - 1] {
        assert_eq!(level_as_of(store, copy, day(i) + 1), Some(json!(i)), "the copy, as of revision {i}");
    }
}

/// The fact's own record, with its whole list, first of the facts.
fn the_fact(records: &[Value]) -> &Value {
    records.iter().find(|r| r["kind"] == "fact" && r.get("version_of").is_none()).unwrap()
}

#[test]
fn each_version_counts_its_writes_and_the_export_grows_linearly() {
    let (_dir, store, _) = fresh();
    let a = Partition::new("local", "u1", "a").unwrap();
    let records = revised(&store, &a);
    let versions: Vec<&Value> = records.iter().filter(|r| r.get("version_of").is_some()).collect();
    assert_eq!(versions.len(), REVISIONS as usize - 1);
    // The first, known before any revision, had no list (a fact never revised keeps none); each
    // later one counts one write more.
    for (i, v) in versions.iter().enumerate() {
        assert!(v.get("attribute_writes").is_none(), "version {i}: {v}");
        assert_eq!(v.get(FIELD), (i > 0).then(|| json!(i + 1)).as_ref(), "version {i}: {v}");
    }
    // The fact's record holds the list once; each version adds a record of a few hundred bytes
    // (each spelt its list out: ~4 MB here, growing with the square of the revisions).
    let size = |r: &Value| serde_json::to_vec(r).unwrap().len();
    let all: usize = records.iter().map(size).sum();
    assert!(all < size(the_fact(&records)) + REVISIONS as usize * 1024, "{all} bytes exported");
    let (b, imported) = import(&store, "b", &records);
    assert_eq!(imported["skipped"], json!([]), "{imported}");
    reads_alike(&store, &b);
    assert_eq!(normalized(&export_pages(&store, &b, 500).concat()), normalized(&records));
}

/// A package from the build before counts: each version with its own `attribute_writes`.
#[test]
fn a_package_spelling_each_version_out_still_imports() {
    let (_dir, store, _) = fresh();
    let a = Partition::new("local", "u1", "a").unwrap();
    let records = revised(&store, &a);
    let list = the_fact(&records)["attribute_writes"].as_array().unwrap().clone();
    let spelt: Vec<Value> = records
        .iter()
        .cloned()
        .map(|mut r| {
            if let Some(n) = r.as_object_mut().unwrap().remove(FIELD) {
                r["attribute_writes"] = json!(list[..usize::try_from(n.as_u64().unwrap()).unwrap()]);
            }
            r
        })
        .collect();
    let (c, imported) = import(&store, "c", &spelt);
    assert_eq!(imported["skipped"], json!([]), "{imported}");
    assert_eq!(imported["imported"]["facts"], REVISIONS, "{imported}");
    reads_alike(&store, &c);
    // The copy's versions point at its fact's list: exported again, they count.
    let again = export_pages(&store, &c, 500).concat();
    assert_eq!(again.iter().filter(|r| r.get(FIELD).is_some()).count(), REVISIONS as usize - 2);
    assert_eq!(normalized(&again), normalized(&records));
}

#[test]
fn a_count_its_fact_cannot_answer_is_refused_naming_the_field() {
    let (_dir, store, _) = fresh();
    let a = Partition::new("local", "u1", "a").unwrap();
    let records = revised(&store, &a);
    let at = records.iter().position(|r| r.get(FIELD).is_some()).unwrap();
    let fact = records.iter().position(|r| r["kind"] == "fact" && r.get("version_of").is_none()).unwrap();
    let cases = [
        (
            at,
            json!(REVISIONS + 1),
            "attribute_writes_from_fact: 301 writes, but the fact this is a version of (version_of) holds 300",
        ),
        (at, json!(0), "attribute_writes_from_fact: must be a whole number"),
        (at, json!("3"), "attribute_writes_from_fact: must be a whole number"),
        (fact, json!(3), "attribute_writes_from_fact: only an earlier version"),
    ];
    for (n, (index, value, why)) in cases.into_iter().enumerate() {
        let mut bad = records.clone();
        bad[index][FIELD] = value;
        let (copy, imported) = import(&store, &format!("bad{n}"), &bad);
        // Refused, the fact takes its versions with it (`version_of: … not imported yet`).
        let skipped = if index == fact { REVISIONS as usize } else { 1 };
        assert_eq!(imported["skipped"].as_array().map(Vec::len), Some(skipped), "{imported}");
        assert_eq!(imported["skipped"][0]["index"], index, "{imported}");
        let reason = imported["skipped"][0]["reason"].as_str().unwrap();
        assert!(reason.starts_with(why), "{why}: {reason}");
        // Nothing of it was written: the copy has every fact record but that one.
        let facts = export_pages(&store, &copy, 500).concat().iter().filter(|r| r["kind"] == "fact").count();
        let expected = if index == fact { 0 } else { REVISIONS as usize - 1 };
        assert_eq!(facts, expected, "{imported}");
    }
    let mut both = records.clone();
    both[at]["attribute_writes"] = the_fact(&records)["attribute_writes"].clone();
    let (_, imported) = import(&store, "both", &both);
    let reason = imported["skipped"][0]["reason"].as_str().unwrap_or_else(|| panic!("{imported}"));
    assert!(reason.starts_with("attribute_writes_from_fact: a version gives its writes"), "{reason}");
}
