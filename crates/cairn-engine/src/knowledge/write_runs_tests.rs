//! An entity or a fact too large for one page (`write_runs.rs`): exported as several records,
//! each a run of its attribute writes within the page bound; they import one page at a time (and
//! through `load`) into the same reads at every valid time and moment (a fact's earlier versions,
//! which count its writes, included); twice is once; a record whose predecessor has not come is
//! skipped naming the gap; one that fits an empty page is never split; a random property over
//! sizes and bounds. Each test runs for an entity and for a fact.

use super::Partition;
use super::testing::fresh;
use super::testing_api::{caller, loaded, pages_within, verb};
use crate::store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};

/// What is written often: an entity's `status` (`remember`, under one of three source labels),
/// or the `status` of a fact from it to Cache (`relate`, each time a new version).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Of {
    Entity,
    Fact,
}

const BOTH: [Of; 2] = [Of::Entity, Of::Fact];

impl Of {
    fn kind(self) -> &'static str {
        match self {
            Of::Entity => "entity",
            Of::Fact => "fact",
        }
    }

    /// The count an import reply gives records of this kind under.
    fn counted(self) -> &'static str {
        match self {
            Of::Entity => "entities",
            Of::Fact => "facts",
        }
    }

    /// Writes `name`'s status `sizes.len()` times, the `i`th about `sizes[i]` bytes dated
    /// `day(i)` at `second(i)`.
    fn written(self, store: &Store, part: &Partition, name: &str, sizes: &[usize]) {
        for (i, size) in sizes.iter().enumerate() {
            let status = format!("{i}:{}", "s".repeat(*size));
            let (verb_name, body) = match self {
                Of::Entity => {
                    let entity = json!({"name": name, "type": "machine", "attributes": {"status": status}});
                    (
                        "remember",
                        json!({"date": day(i), "source": format!("probe {}", i % 3), "facts": {"entities": [entity]}}),
                    )
                }
                Of::Fact => {
                    let attributes = json!({"status": status});
                    (
                        "relate",
                        json!({"from": name, "to": "Cache", "type": "uses", "attributes": attributes, "date": day(i)}),
                    )
                }
            };
            verb(store, &caller(part, second(i)), verb_name, &body).unwrap();
        }
    }

    /// The records of `name` (an entity's, or its live fact's: versions left out) across
    /// `pages`, in order.
    fn records(self, pages: &[Vec<Value>], name: &str) -> Vec<Value> {
        let of = |r: &Value| match self {
            Of::Entity => r["kind"] == "entity" && r["name"] == name,
            Of::Fact => r["kind"] == "fact" && r["from_name"] == name && r.get("version_of").is_none(),
        };
        pages.concat().into_iter().filter(of).collect()
    }

    /// The status a recall of `name` shows: the entity's, or its fact's.
    fn status(self, recall: &Value) -> Option<String> {
        let attributes = match self {
            Of::Entity => &recall["subject"]["attributes"],
            Of::Fact => {
                let facts = recall["facts"].as_array()?;
                &facts.iter().find(|f| f["relation"] == "uses")?["attributes"]
            }
        };
        attributes["status"].as_str().map(|s| s.split(':').next().unwrap().to_owned())
    }
}

/// The time of the `i`th write (from 0): one second apart, from 1 s.
fn second(i: usize) -> i64 {
    1_000 * (i64::try_from(i).unwrap() + 1)
}

/// The date the `i`th write says it became true: day `i` of 2020 on (wrapping after 28 days into
/// the next month, so the dates stay real).
fn day(i: usize) -> String {
    format!("{}-{:02}-{:02}", 2020 + i / 336, i / 28 % 12 + 1, i % 28 + 1)
}

/// Every page of `part`'s export at `(limit, max_bytes)`, each within the bound unless it is one
/// record of one write or none (a fact said once, or a version counting its fact's writes, whose
/// own attributes may pass a small page).
fn pages_at(store: &Store, part: &Partition, at: (usize, usize)) -> Vec<Vec<Value>> {
    pages_within(store, part, at, |r| r["attribute_writes"].as_array().is_none_or(|w| w.len() <= 1))
}

/// The first characters of every write the records carry, in order (each names its index).
fn write_heads(records: &[Value]) -> Vec<String> {
    let writes = records.iter().flat_map(|r| r["attribute_writes"].as_array().cloned().unwrap_or_default());
    writes.map(|w| w["attributes"]["status"].as_str().unwrap().split(':').next().unwrap().to_owned()).collect()
}

/// `0..n` as the heads of writes.
fn heads(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// What a reader sees of `name` written `count` times: its status read now, at every write's
/// date, as of every write's moment, and then at an earlier date.
fn seen(store: &Store, part: &Partition, (of, name): (Of, &str), count: usize) -> Vec<Value> {
    let read = |extra: Value| {
        let mut body = json!({"subject": name});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let r = verb(store, &caller(part, 10_000_000), "recall", &body).unwrap();
        json!([extra, of.status(&r)])
    };
    let mut out = vec![read(json!({}))];
    for i in 0..count {
        out.push(read(json!({"valid_at": day(i)})));
        out.push(read(json!({"as_of": second(i) + 500})));
        out.push(read(json!({"as_of": second(i) + 500, "valid_at": day(i / 2)})));
    }
    out
}

/// Imports `pages` into `part` one call each; the replies.
fn import_each(store: &Store, part: &Partition, pages: &[Vec<Value>]) -> Vec<Value> {
    pages.iter().map(|p| verb(store, &caller(part, 20_000_000), "import", &json!({"records": p})).unwrap()).collect()
}

#[test]
fn written_often_it_is_split_within_the_page_bound_and_imports_page_by_page() {
    for of in BOTH {
        let (_dir, store, part) = fresh();
        of.written(&store, &part, "Build server", &[400; 60]);
        of.written(&store, &part, "Proxy", &[10, 10]);
        let bound = 4 * 1024;
        let pages = pages_at(&store, &part, (500, bound));
        let big = of.records(&pages, "Build server");
        assert!(big.len() >= 6, "{of:?}: 60 writes of 400 bytes in 4 KiB records: {}", big.len());
        // In order, every write once; each record's markers count the writes before it.
        assert_eq!(write_heads(&big), heads(60));
        let mut before = 0;
        for (i, r) in big.iter().enumerate() {
            assert!(serde_json::to_vec(r).unwrap().len() <= bound);
            assert_eq!(r.get("continued"), (i + 1 < big.len()).then_some(&json!(true)), "{of:?} record {i}");
            assert_eq!(r.get("follows"), (i > 0).then(|| json!(before)).as_ref(), "{of:?} record {i}");
            assert_eq!((&r["id"], &r["attributes"]), (&big[0]["id"], &big[0]["attributes"]));
            before += r["attribute_writes"].as_array().unwrap().len();
        }
        let small = of.records(&pages, "Proxy");
        assert_eq!((small.len(), small[0].get("continued")), (1, None), "{of:?}: one that fits is one record");
        let copy = Partition::new("local", "u1", "copy").unwrap();
        for reply in import_each(&store, &copy, &pages) {
            assert_eq!(reply["skipped"], json!([]), "{reply}");
        }
        let reads = |p: &Partition| seen(&store, p, (of, "Build server"), 60);
        assert_eq!(reads(&copy), reads(&part), "{of:?}");
        let again = || pages_at(&store, &copy, (500, bound));
        assert_eq!(write_heads(&of.records(&again(), "Build server")), write_heads(&big));
        // Twice is once: nothing is replayed or stored again.
        for reply in import_each(&store, &copy, &pages) {
            assert_eq!(reply["imported"][of.counted()], 0, "{reply}");
        }
        let count = |pages: &[Vec<Value>]| pages.concat().iter().filter(|r| r["kind"] == of.kind()).count();
        assert_eq!(
            (write_heads(&of.records(&again(), "Build server")), count(&again())),
            (write_heads(&big), count(&pages))
        );
        // One record a page (`limit` 1): each page stops between two records (cut at other places
        // when the first no longer shares its page with records before it).
        let one = pages_at(&store, &part, (1, bound));
        assert!(one.iter().all(|p| p.len() == 1));
        assert_eq!(write_heads(&of.records(&one, "Build server")), write_heads(&big));
        if of == Of::Entity {
            assert_eq!(of.records(&one, "Build server"), big);
        }
        assert!(store.check().unwrap().ok);
    }
}

/// The `import` events of `part`'s history of the fact Build server `uses` Cache.
fn fact_imports(store: &Store, part: &Partition) -> usize {
    let body = json!({"fact": {"from": "Build server", "to": "Cache", "type": "uses"}, "limit": 100});
    let reply = crate::notes::api::call(store, "history", &caller(part, 30_000_000), &body.to_string().into_bytes());
    let reply: Value = serde_json::from_slice(&reply.unwrap()).unwrap();
    reply["events"].as_array().unwrap().iter().filter(|e| e["op"] == "import").count()
}

#[test]
fn each_record_of_a_split_fact_that_adds_writes_is_one_history_event() {
    // Found by a review: the records after the first added writes to the fact with no event, so
    // its history did not show every write import made (DESIGN: every write appends one event).
    let (_dir, store, part) = fresh();
    Of::Fact.written(&store, &part, "Build server", &[400; 20]);
    let pages = pages_at(&store, &part, (500, 4 * 1024));
    let live = Of::Fact.records(&pages, "Build server");
    assert!(live.len() >= 3, "split: {}", live.len());
    let all = pages.concat().iter().filter(|r| r["kind"] == "fact" && r["from_name"] == "Build server").count();
    let copy = Partition::new("local", "u1", "copy").unwrap();
    import_each(&store, &copy, &pages);
    // One event for each record stored or changed: every earlier version, and each of the live
    // fact's records; importing again changes nothing and records nothing.
    assert_eq!(fact_imports(&store, &copy), all);
    import_each(&store, &copy, &pages);
    assert_eq!(fact_imports(&store, &copy), all);
}

#[test]
fn pages_of_two_exports_cut_at_other_places_join_up() {
    for of in BOTH {
        let (_dir, store, part) = fresh();
        of.written(&store, &part, "Build server", &[300; 40]);
        let coarse = of.records(&pages_at(&store, &part, (500, 6 * 1024)), "Build server");
        let fine_pages = pages_at(&store, &part, (500, 2 * 1024));
        let fine = of.records(&fine_pages, "Build server");
        assert!(coarse.len() >= 2 && fine.len() > coarse.len());
        // The coarse export's first record, then every fine record, then the fine export's others
        // (a fact's ends and versions): the writes the first holds already are not replayed twice.
        let copy = Partition::new("local", "u1", "copy").unwrap();
        let mut pages = vec![vec![coarse[0].clone()]];
        pages.extend(fine.iter().map(|r| vec![r.clone()]));
        pages.push(fine_pages.concat().into_iter().filter(|r| !fine.contains(r) && r["kind"] != "header").collect());
        for reply in import_each(&store, &copy, &pages) {
            assert_eq!(reply["skipped"], json!([]), "{reply}");
        }
        let again = of.records(&pages_at(&store, &copy, (500, 4 * 1024 * 1024)), "Build server");
        assert_eq!(write_heads(&again), heads(40));
        let reads = |p: &Partition| seen(&store, p, (of, "Build server"), 40);
        assert_eq!(reads(&copy), reads(&part), "{of:?}");
    }
}

#[test]
fn load_rebuilds_it() {
    for of in BOTH {
        let (_dir, store, part) = fresh();
        of.written(&store, &part, "Build server", &[500; 30]);
        let records = pages_at(&store, &part, (500, 4 * 1024)).concat();
        assert!(of.records(std::slice::from_ref(&records), "Build server").len() > 3);
        let (target, reply) = loaded(&store, &records, "loaded");
        assert_eq!(reply["skipped"], json!([]), "{reply}");
        let reads = |p: &Partition| seen(&store, p, (of, "Build server"), 30);
        assert_eq!(reads(&target), reads(&part), "{of:?}");
    }
}

#[test]
fn a_record_whose_predecessor_has_not_come_is_skipped_naming_the_gap() {
    for of in BOTH {
        let (_dir, store, part) = fresh();
        of.written(&store, &part, "Build server", &[500; 20]);
        let all = pages_at(&store, &part, (500, 3 * 1024));
        let big = of.records(&all, "Build server");
        assert!(big.len() >= 4, "{}", big.len());
        let copy = Partition::new("local", "u1", "copy").unwrap();
        let one = |r: &Value| import_each(&store, &copy, &[vec![r.clone()]]).remove(0);
        let reason = |reply: &Value| reply["skipped"][0]["reason"].as_str().unwrap_or_default().to_owned();
        let held = |i: usize| big[..i].iter().map(|r| r["attribute_writes"].as_array().unwrap().len()).sum::<usize>();
        // The second record first: nothing here, nothing stored.
        let what = of.kind();
        assert_eq!(
            reason(&one(&big[1])),
            format!(
                "follows: this record continues the {what}'s attribute_writes after its first {}, but the copy holds \
                 0 of them: a record of the {what} before this one has not been imported (import the export's pages \
                 in order)",
                held(1)
            )
        );
        let recall = verb(&store, &caller(&copy, 20_000_000), "recall", &json!({"subject": "Build server"})).unwrap();
        assert_eq!(recall["state"], "nothing_stored", "{recall}");
        // The first, then the third: the copy holds the first's writes, the gap named.
        assert_eq!(one(&big[0])["skipped"], json!([]));
        let reply = one(&big[2]);
        assert!(reason(&reply).contains(&format!("but the copy holds {} of them", held(1))), "{reply}");
        // The rest in order, then the export's other records: the same as the source's.
        for r in &big[1..] {
            assert_eq!(one(r)["skipped"], json!([]));
        }
        let others: Vec<Value> = all.concat().into_iter().filter(|r| !big.contains(r)).collect();
        assert_eq!(import_each(&store, &copy, &[others]).remove(0)["skipped"], json!([]));
        let reads = |p: &Partition| seen(&store, p, (of, "Build server"), 20);
        assert_eq!(reads(&copy), reads(&part), "{of:?}");
        let other = Partition::new("local", "u1", "other").unwrap();
        let mut bad = big[1].clone();
        bad["follows"] = json!(0);
        let reply = verb(&store, &caller(&other, 20_000_000), "import", &json!({"records": [bad]})).unwrap();
        assert_eq!(reason(&reply), "follows: must be a whole number from 1");
        // A record of a split entity without its id cannot be joined to the others (a fact's
        // record always needs its id).
        let mut no_id = big[1].clone();
        no_id.as_object_mut().unwrap().remove("id");
        let reply = verb(&store, &caller(&other, 20_000_000), "import", &json!({"records": [no_id]})).unwrap();
        let expected = match of {
            Of::Entity => "follows: a record of an entity split over several needs",
            Of::Fact => "id: must be an id",
        };
        assert!(reason(&reply).starts_with(expected), "{reply}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    /// Whatever the number and sizes of the writes and the page bound: every page fits (or is
    /// one write alone), one whose whole record fits a page is one record, and the pages
    /// imported one by one give the source's reads.
    #[test]
    fn split_records_round_trip(
        sizes in prop::collection::vec(0usize..3_000, 1..16),
        bound in 1_024usize..20_000,
        limit in 1usize..6,
        fact in any::<bool>(),
    ) {
        let of = if fact { Of::Fact } else { Of::Entity };
        let (_dir, store, part) = fresh();
        of.written(&store, &part, "Build server", &sizes);
        of.written(&store, &part, "Proxy", &[20, 20, 20]);
        let pages = pages_at(&store, &part, (limit, bound));
        let big = of.records(&pages, "Build server");
        let whole = of.records(&pages_at(&store, &part, (1, 4 * 1024 * 1024)), "Build server");
        prop_assert_eq!(whole.len(), 1);
        prop_assert_eq!(write_heads(&big), write_heads(&whole));
        if serde_json::to_vec(&whole[0]).unwrap().len() + 2 <= bound {
            prop_assert_eq!(&big, &whole);
        }
        let copy = Partition::new("local", "u1", "copy").unwrap();
        for reply in import_each(&store, &copy, &pages) {
            prop_assert_eq!(&reply["skipped"], &json!([]));
        }
        let reads = |p: &Partition| seen(&store, p, (of, "Build server"), sizes.len());
        prop_assert_eq!(reads(&copy), reads(&part));
    }
}
