//! An entity too large for one page (`entity_windows.rs`): exported as several records, each a
//! run of its attribute writes within the page bound; they import one page at a time (and
//! through `load`) into the same reads at every valid time and moment; twice is once; a record
//! whose predecessor has not come is skipped naming the gap; an entity that fits an empty page
//! is never split; a random property over sizes and bounds.

use super::Partition;
use super::testing::fresh;
use super::testing_api::{caller, loaded, pages_within, verb};
use crate::store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The time of the `i`th write (from 0): one second apart, from 1 s.
fn second(i: usize) -> i64 {
    1_000 * (i64::try_from(i).unwrap() + 1)
}

/// The date the `i`th write says it became true: day `i` of 2020 on (wrapping after 28 days into
/// the next month, so the dates stay real).
fn day(i: usize) -> String {
    format!("{}-{:02}-{:02}", 2020 + i / 336, i / 28 % 12 + 1, i % 28 + 1)
}

/// Writes entity `name` `sizes.len()` times, the `i`th setting `status` to about `sizes[i]` bytes
/// dated `day(i)` under one of three source labels.
fn written(store: &Store, part: &Partition, name: &str, sizes: &[usize]) {
    for (i, size) in sizes.iter().enumerate() {
        let status = format!("{i}:{}", "s".repeat(*size));
        let entity = json!({"name": name, "type": "machine", "attributes": {"status": status}});
        let body = json!({"date": day(i), "source": format!("probe {}", i % 3), "facts": {"entities": [entity]}});
        verb(store, &caller(part, second(i)), "remember", &body).unwrap();
    }
}

/// Every page of `part`'s export at `max_bytes` (and `limit`), each within the bound unless it is
/// one record of one write.
fn pages_at(store: &Store, part: &Partition, at: (usize, usize)) -> Vec<Vec<Value>> {
    pages_within(store, part, at, |r| r["attribute_writes"].as_array().is_some_and(|w| w.len() == 1))
}

/// The records of entity `name` across `pages`, in order.
fn entity_records(pages: &[Vec<Value>], name: &str) -> Vec<Value> {
    pages.concat().into_iter().filter(|r| r["kind"] == "entity" && r["name"] == name).collect()
}

/// The first characters of every write the records carry, in order (each names its index).
fn write_heads(records: &[Value]) -> Vec<String> {
    let writes = records.iter().flat_map(|r| r["attribute_writes"].as_array().cloned().unwrap_or_default());
    writes.map(|w| w["attributes"]["status"].as_str().unwrap().split(':').next().unwrap().to_owned()).collect()
}

/// What a reader sees of entity `name` written `count` times: its status read now, at every
/// write's date and the day before, and as of every write's moment.
fn seen(store: &Store, part: &Partition, name: &str, count: usize) -> Vec<Value> {
    let read = |extra: Value| {
        let mut body = json!({"subject": name});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let r = verb(store, &caller(part, 10_000_000), "recall", &body).unwrap();
        let status = r["subject"]["attributes"]["status"].as_str().map(|s| s.split(':').next().unwrap().to_owned());
        json!([extra, status])
    };
    let mut out = vec![read(json!({}))];
    for i in 0..count {
        out.push(read(json!({"valid_at": day(i)})));
        out.push(read(json!({"as_of": second(i) + 500})));
    }
    out
}

/// Imports `pages` into `part` one call each; the replies.
fn import_each(store: &Store, part: &Partition, pages: &[Vec<Value>]) -> Vec<Value> {
    pages.iter().map(|p| verb(store, &caller(part, 20_000_000), "import", &json!({"records": p})).unwrap()).collect()
}

#[test]
fn an_entity_written_often_is_split_within_the_page_bound_and_imports_page_by_page() {
    let (_dir, store, part) = fresh();
    written(&store, &part, "Build server", &[400; 60]);
    written(&store, &part, "Cache", &[10, 10]);
    let bound = 4 * 1024;
    let pages = pages_at(&store, &part, (500, bound));
    let big = entity_records(&pages, "Build server");
    assert!(big.len() >= 6, "60 writes of 400 bytes in 4 KiB records: {}", big.len());
    // In order, every write once; each record's markers count the writes before it.
    assert_eq!(write_heads(&big), (0..60).map(|i| i.to_string()).collect::<Vec<_>>());
    let mut before = 0;
    for (i, r) in big.iter().enumerate() {
        assert!(serde_json::to_vec(r).unwrap().len() <= bound);
        assert_eq!(r.get("continued"), (i + 1 < big.len()).then_some(&json!(true)), "record {i}");
        assert_eq!(r.get("follows"), (i > 0).then(|| json!(before)).as_ref(), "record {i}");
        assert_eq!((&r["name"], &r["attributes"]), (&big[0]["name"], &big[0]["attributes"]));
        before += r["attribute_writes"].as_array().unwrap().len();
    }
    let small = entity_records(&pages, "Cache");
    assert_eq!((small.len(), small[0].get("continued")), (1, None), "an entity that fits is one record");
    let copy = Partition::new("local", "u1", "copy").unwrap();
    for reply in import_each(&store, &copy, &pages) {
        assert_eq!(reply["skipped"], json!([]), "{reply}");
    }
    assert_eq!(seen(&store, &copy, "Build server", 60), seen(&store, &part, "Build server", 60));
    assert_eq!(write_heads(&entity_records(&pages_at(&store, &copy, (500, bound)), "Build server")), write_heads(&big));
    // Twice is once: nothing is replayed again.
    for reply in import_each(&store, &copy, &pages) {
        assert_eq!(reply["imported"]["entities"], 0, "{reply}");
    }
    assert_eq!(write_heads(&entity_records(&pages_at(&store, &copy, (500, bound)), "Build server")), write_heads(&big));
    // One record a page (`limit` 1): each page stops between two records of the entity.
    let one = pages_at(&store, &part, (1, bound));
    assert!(one.iter().all(|p| p.len() == 1));
    assert_eq!(entity_records(&one, "Build server"), big);
    assert!(store.check().unwrap().ok);
}

#[test]
fn pages_of_two_exports_cut_at_other_places_join_up() {
    let (_dir, store, part) = fresh();
    written(&store, &part, "Build server", &[300; 40]);
    let coarse = entity_records(&pages_at(&store, &part, (500, 6 * 1024)), "Build server");
    let fine = entity_records(&pages_at(&store, &part, (500, 2 * 1024)), "Build server");
    assert!(coarse.len() >= 2 && fine.len() > coarse.len());
    // The coarse export's first record, then every fine record: the writes the first holds
    // already are not replayed twice.
    let copy = Partition::new("local", "u1", "copy").unwrap();
    let mut pages = vec![vec![coarse[0].clone()]];
    pages.extend(fine.iter().map(|r| vec![r.clone()]));
    for reply in import_each(&store, &copy, &pages) {
        assert_eq!(reply["skipped"], json!([]), "{reply}");
    }
    let again = entity_records(&pages_at(&store, &copy, (500, 4 * 1024 * 1024)), "Build server");
    assert_eq!(write_heads(&again), (0..40).map(|i| i.to_string()).collect::<Vec<_>>());
    assert_eq!(seen(&store, &copy, "Build server", 40), seen(&store, &part, "Build server", 40));
}

#[test]
fn load_rebuilds_a_split_entity() {
    let (_dir, store, part) = fresh();
    written(&store, &part, "Build server", &[500; 30]);
    let records = pages_at(&store, &part, (500, 4 * 1024)).concat();
    assert!(entity_records(std::slice::from_ref(&records), "Build server").len() > 3);
    let (target, reply) = loaded(&store, &records, "loaded");
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    assert_eq!(seen(&store, &target, "Build server", 30), seen(&store, &part, "Build server", 30));
}

#[test]
fn a_record_whose_predecessor_has_not_come_is_skipped_naming_the_gap() {
    let (_dir, store, part) = fresh();
    written(&store, &part, "Build server", &[500; 20]);
    let big = entity_records(&pages_at(&store, &part, (500, 3 * 1024)), "Build server");
    assert!(big.len() >= 4, "{}", big.len());
    let copy = Partition::new("local", "u1", "copy").unwrap();
    let one = |r: &Value| import_each(&store, &copy, &[vec![r.clone()]]).remove(0);
    let reason = |reply: &Value| reply["skipped"][0]["reason"].as_str().unwrap_or_default().to_owned();
    let held = |i: usize| big[..i].iter().map(|r| r["attribute_writes"].as_array().unwrap().len()).sum::<usize>();
    // The second record first: nothing here, nothing stored.
    let reply = one(&big[1]);
    assert_eq!(
        reason(&reply),
        format!(
            "follows: this record continues the entity's attribute_writes after its first {}, but the copy holds 0 \
             of them: a record of the entity before this one has not been imported (import the export's pages in \
             order)",
            held(1)
        )
    );
    let recall = verb(&store, &caller(&copy, 20_000_000), "recall", &json!({"subject": "Build server"})).unwrap();
    assert_eq!(recall["state"], "nothing_stored", "{recall}");
    // The first, then the third: the copy holds the first's writes, the gap named.
    assert_eq!(one(&big[0])["skipped"], json!([]));
    let reply = one(&big[2]);
    assert!(reason(&reply).contains(&format!("but the copy holds {} of them", held(1))), "{reply}");
    // The rest in order: the same entity as the source's.
    for r in &big[1..] {
        assert_eq!(one(r)["skipped"], json!([]));
    }
    assert_eq!(seen(&store, &copy, "Build server", 20), seen(&store, &part, "Build server", 20));
    // A record of a split entity without its id cannot be joined to the others.
    let mut no_id = big[1].clone();
    no_id.as_object_mut().unwrap().remove("id");
    let other = Partition::new("local", "u1", "other").unwrap();
    let reply = verb(&store, &caller(&other, 20_000_000), "import", &json!({"records": [no_id]})).unwrap();
    assert!(reason(&reply).starts_with("follows: a record of an entity split over several needs"), "{reply}");
    let mut bad = big[1].clone();
    bad["follows"] = json!(0);
    let reply = verb(&store, &caller(&other, 20_000_000), "import", &json!({"records": [bad]})).unwrap();
    assert_eq!(reason(&reply), "follows: must be a whole number from 1");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    /// Whatever the number and sizes of an entity's writes and the page bound: every page fits
    /// (or is one write alone), an entity whose whole record fits a page is one record, and the
    /// pages imported one by one give the source's reads.
    #[test]
    fn split_entities_round_trip(
        sizes in prop::collection::vec(0usize..3_000, 1..16),
        bound in 1_024usize..20_000,
        limit in 1usize..6,
    ) {
        let (_dir, store, part) = fresh();
        written(&store, &part, "Build server", &sizes);
        written(&store, &part, "Cache", &[20, 20, 20]);
        let pages = pages_at(&store, &part, (limit, bound));
        let big = entity_records(&pages, "Build server");
        prop_assert_eq!(write_heads(&big), (0..sizes.len()).map(|i| i.to_string()).collect::<Vec<_>>());
        let whole = pages_at(&store, &part, (1, 4 * 1024 * 1024));
        let whole = entity_records(&whole, "Build server");
        prop_assert_eq!(whole.len(), 1);
        if serde_json::to_vec(&whole[0]).unwrap().len() + 2 <= bound {
            prop_assert_eq!(&big, &whole);
        }
        let copy = Partition::new("local", "u1", "copy").unwrap();
        for reply in import_each(&store, &copy, &pages) {
            prop_assert_eq!(&reply["skipped"], &json!([]));
        }
        prop_assert_eq!(seen(&store, &copy, "Build server", sizes.len()), seen(&store, &part, "Build server", sizes.len()));
    }
}
