//! The tally (`tally.rs`) against a full scan of the records it counts, over random histories of
//! every write path that changes a count: remember (entities with types, relations, text), relate
//! with and without `replaces` (ends and restores), forget by subject, fact, source, passage and
//! all, import of an export into another scope and a bulk load of it into an empty one. And a
//! store written before the tally (its keys and marker taken out) gets the same status once built.

use super::graph::{Entity, Relation};
use super::part::Partition;
use super::records::decode;
use super::tally::{TALLY, totals};
use super::testing::fresh;
use super::testing_api::{caller, export_pages, verb};
use super::trees::{DOC, ENT, PSG, REL};
use super::{Ontology, ontology};
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::text::fold;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// What a scan of every record of `part` counts: totals, and per folded type its count and the
/// spellings seen.
#[derive(Debug, Default, PartialEq)]
struct Scanned {
    entities: u64,
    relations: u64,
    documents: u64,
    passages: u64,
    entity_types: BTreeMap<String, u64>,
    relation_types: BTreeMap<String, u64>,
}

/// The oracle: every entity, relation, document and passage of `part` read and counted, as
/// `ontology` did before the tally.
fn scanned(snap: &Snapshot, part: &Partition) -> Scanned {
    let mut out = Scanned::default();
    for item in snap.prefix(ENT, part.prefix()).unwrap() {
        let e: Entity = decode(&item.unwrap().1, "entity").unwrap();
        out.entities += 1;
        for t in &e.types {
            *out.entity_types.entry(fold(t)).or_default() += 1;
        }
    }
    for item in snap.prefix(REL, part.prefix()).unwrap() {
        let r: Relation = decode(&item.unwrap().1, "relation").unwrap();
        if r.ended_at.is_none() {
            out.relations += 1;
            *out.relation_types.entry(fold(&r.rel_type)).or_default() += 1;
        }
    }
    out.documents = snap.prefix(DOC, part.prefix()).unwrap().count() as u64;
    out.passages = snap.prefix(PSG, part.prefix()).unwrap().count() as u64;
    out
}

/// The tally's view of `part` in the oracle's shape.
fn tallied(snap: &Snapshot, part: &Partition) -> Scanned {
    let o: Ontology = ontology(snap, part).unwrap();
    let t = totals(snap, part).unwrap();
    let by_fold = |list: &[super::TypeCount]| list.iter().map(|t| (fold(&t.spelling), t.count)).collect();
    Scanned {
        entities: o.entities,
        relations: o.relations,
        documents: t.documents,
        passages: t.passages,
        entity_types: by_fold(&o.entity_types),
        relation_types: by_fold(&o.relation_types),
    }
}

fn check(store: &Store, part: &Partition, at: &str) -> Result<(), TestCaseError> {
    let snap = store.snapshot().unwrap();
    let (want, got) = (scanned(&snap, part), tallied(&snap, part));
    prop_assert_eq!(&got, &want, "tally of {:?} after {}", part.parts().2, at);
    // Each type listed once (its spellings fold equal), in the order status promises.
    let o = ontology(&snap, part).unwrap();
    for list in [&o.entity_types, &o.relation_types] {
        prop_assert!(list.iter().all(|t| t.count > 0));
        prop_assert!(list.windows(2).all(|w| (w[1].count, &w[0].spelling) < (w[0].count, &w[1].spelling)));
    }
    Ok(())
}

const NAMES: [&str; 5] = ["Priya Raman", "Acme", "Berlin", "Jonas Weber", "Globex"];
/// Types in several spellings of one fold, so the first-spelling rule is exercised.
const ENTITY_TYPES: [&str; 4] = ["Person", "person", "Company", "CITY"];
const REL_TYPES: [&str; 4] = ["works_at", "Works_At", "located_in", "knows"];
const LABELS: [&str; 2] = ["mail", "chat"];

#[derive(Debug, Clone)]
enum Step {
    /// Entities (name, type) and relations (from, to, type) in one call, with a text naming the
    /// first entity when `text`.
    Remember {
        entities: Vec<(usize, usize)>,
        relations: Vec<(usize, usize, usize)>,
        label: usize,
        text: bool,
    },
    Relate {
        a: usize,
        b: usize,
        t: usize,
        replaces: bool,
        label: usize,
    },
    ForgetSubject(usize),
    ForgetFact(usize, usize, usize),
    ForgetSource(usize),
    /// The passage form: the document with the `n`th smallest id, if any.
    ForgetPassage(usize),
    ForgetAll,
    /// Export the scope and import it into the second scope.
    Import,
    /// Export the scope and load it into a fresh scope.
    Load,
}

fn step() -> impl Strategy<Value = Step> {
    let n = 0..NAMES.len();
    prop_oneof![
        4 => (
            prop::collection::vec((n.clone(), 0..ENTITY_TYPES.len()), 0..4),
            prop::collection::vec((n.clone(), n.clone(), 0..REL_TYPES.len()), 0..4),
            0..LABELS.len(),
            any::<bool>(),
        )
            .prop_map(|(entities, relations, label, text)| Step::Remember { entities, relations, label, text }),
        4 => (n.clone(), n.clone(), 0..REL_TYPES.len(), any::<bool>(), 0..LABELS.len())
            .prop_map(|(a, b, t, replaces, label)| Step::Relate { a, b, t, replaces, label }),
        1 => n.clone().prop_map(Step::ForgetSubject),
        1 => (n.clone(), n, 0..REL_TYPES.len()).prop_map(|(a, b, t)| Step::ForgetFact(a, b, t)),
        1 => (0..LABELS.len()).prop_map(Step::ForgetSource),
        1 => (0..3usize).prop_map(Step::ForgetPassage),
        1 => Just(Step::ForgetAll),
        1 => Just(Step::Import),
        1 => Just(Step::Load),
    ]
}

fn run(steps: &[Step]) -> Result<(), TestCaseError> {
    let (_dir, store, part) = fresh();
    let other = Partition::new("local", "u1", "imported").unwrap();
    for (i, s) in steps.iter().enumerate() {
        let now = 1_000 * (i64::try_from(i).unwrap() + 1);
        let who = caller(&part, now);
        let at = format!("step {i} {s:?}");
        match s.clone() {
            Step::Remember { entities, relations, label, text } => {
                let relations: Vec<Value> = relations
                    .into_iter()
                    .filter(|(a, b, _)| a != b)
                    .map(|(a, b, t)| json!({"source": NAMES[a], "target": NAMES[b], "type": REL_TYPES[t]}))
                    .collect();
                let first = entities.first().map(|&(n, _)| n);
                let entities: Vec<Value> =
                    entities.into_iter().map(|(n, t)| json!({"name": NAMES[n], "type": ENTITY_TYPES[t]})).collect();
                let mut body =
                    json!({"facts": {"entities": entities, "relations": relations}, "source": LABELS[label]});
                if text {
                    let who = first.map_or("Nobody", |n| NAMES[n]);
                    body["content"] = json!(format!("{who} wrote to us at step {i}. The weather was fine."));
                } else if body["facts"]["entities"].as_array().unwrap().is_empty() && relations_empty(&body) {
                    continue;
                }
                let reply = verb(&store, &who, "remember", &body).unwrap();
                prop_assert!(reply.get("error").is_none(), "{}", reply);
            }
            Step::Relate { a, b, t, replaces, label } if a != b => {
                let body = json!({"from": NAMES[a], "to": NAMES[b], "type": REL_TYPES[t], "replaces": replaces,
                    "source": LABELS[label]});
                verb(&store, &who, "relate", &body).unwrap();
            }
            Step::Relate { .. } => continue,
            Step::ForgetSubject(n) => {
                verb(&store, &who, "forget", &json!({"subject": NAMES[n]})).unwrap();
            }
            Step::ForgetFact(a, b, t) => {
                let fact = json!({"from": NAMES[a], "to": NAMES[b], "type": REL_TYPES[t]});
                verb(&store, &who, "forget", &json!({ "fact": fact })).unwrap();
            }
            Step::ForgetSource(l) => {
                verb(&store, &who, "forget", &json!({"source": LABELS[l]})).unwrap();
            }
            Step::ForgetPassage(n) => {
                let snap = store.snapshot().unwrap();
                let docs: Vec<u64> = snap
                    .prefix(DOC, part.prefix())
                    .unwrap()
                    .map(|item| super::trees::trailing_id(&item.unwrap().0).unwrap())
                    .collect();
                let Some(doc) = docs.get(n) else { continue };
                verb(&store, &who, "forget", &json!({"passage": doc.to_string()})).unwrap();
            }
            Step::ForgetAll => {
                verb(&store, &who, "forget", &json!({"all": true})).unwrap();
            }
            Step::Import => {
                let records = export_pages(&store, &part, 50).concat();
                let reply = verb(&store, &caller(&other, now), "import", &json!({ "records": records })).unwrap();
                prop_assert!(reply.get("error").is_none(), "{}", reply);
                check(&store, &other, &at)?;
            }
            Step::Load => {
                let records = export_pages(&store, &part, 50).concat();
                let lines: Vec<String> = records.iter().map(Value::to_string).collect();
                let loaded = Partition::new("local", "u1", &format!("load{i}")).unwrap();
                let body = lines.join("\n");
                super::api::call(&store, "load", &caller(&loaded, now), body.as_bytes()).unwrap();
                check(&store, &loaded, &at)?;
            }
        }
        check(&store, &part, &at)?;
    }
    Ok(())
}

fn relations_empty(body: &Value) -> bool {
    body["facts"]["relations"].as_array().is_none_or(Vec::is_empty)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_tally_counts_what_a_full_scan_counts(steps in prop::collection::vec(step(), 1..24)) {
        run(&steps)?;
    }
}

/// Status of `part` as a caller sees it.
fn status(store: &Store, part: &Partition) -> Value {
    verb(store, &caller(part, 50_000), "status", &json!({})).unwrap()
}

#[test]
fn a_store_written_before_the_tally_gets_the_same_status_once_built() {
    let (_dir, store, part) = fresh();
    let who = caller(&part, 1_000);
    let facts = json!({
        "entities": [{"name": "Acme", "type": "Company"}, {"name": "Globex", "type": "company"},
                     {"name": "Priya", "type": "Person"}],
        "relations": [{"source": "Priya", "target": "Acme", "type": "works_at"},
                      {"source": "Acme", "target": "Berlin", "type": "located_in"}]});
    verb(&store, &who, "remember", &json!({"content": "Priya works at Acme. Acme is in Berlin.", "facts": facts}))
        .unwrap();
    let replaces = json!({"from": "Priya", "to": "Globex", "type": "Works_At", "replaces": true});
    verb(&store, &caller(&part, 2_000), "relate", &replaces).unwrap();
    let side = Partition::new("local", "u1", "side").unwrap();
    verb(&store, &caller(&side, 3_000), "relate", &json!({"from": "a", "to": "b", "type": "t"})).unwrap();
    let before = status(&store, &part);
    assert_eq!(before["scope"]["relations"], json!(2), "the ended works_at is not counted: {before}");

    // The layout of a store written before: no tally, no marker; and a stray count, as writes of
    // this version to such a store before its first verb would leave, which the build replaces.
    store
        .write(|tx| {
            tx.delete_prefix(TALLY, &[])?;
            let stray = super::tally::key(&Partition::new("local", "u1", "side").unwrap(), b'e', None);
            tx.put(TALLY, &stray, &[&7u64.to_be_bytes()[..], b""].concat())
        })
        .unwrap();
    store.forget_marks();
    assert!(!super::tally_build::built(&store).unwrap());
    let snap = store.snapshot().unwrap();
    assert_eq!(ontology(&snap, &part).unwrap().entities, 0, "status reads the tally, not the records");
    drop(snap);

    let after = status(&store, &part);
    assert!(super::tally_build::built(&store).unwrap());
    assert_eq!(after, before);
    let snap = store.snapshot().unwrap();
    for p in [&part, &side] {
        assert_eq!(tallied(&snap, p), scanned(&snap, p));
    }
}

#[test]
fn a_partition_emptied_or_forgotten_whole_keeps_no_count() {
    let (_dir, store, part) = fresh();
    let who = caller(&part, 1_000);
    let facts = json!({"entities": [{"name": "Acme", "type": "Company"}],
        "relations": [{"source": "Priya", "target": "Acme", "type": "works_at"}]});
    verb(&store, &who, "remember", &json!({"content": "Priya is at Acme.", "facts": facts})).unwrap();
    let keys = |store: &Store| store.snapshot().unwrap().prefix(TALLY, part.prefix()).unwrap().count();
    assert!(keys(&store) > 0);
    verb(&store, &who, "forget", &json!({"subject": "Priya"})).unwrap();
    verb(&store, &who, "forget", &json!({"subject": "Acme"})).unwrap();
    assert_eq!(keys(&store), 0, "counts that fall to zero are removed");
    verb(&store, &who, "relate", &json!({"from": "a", "to": "b", "type": "t"})).unwrap();
    verb(&store, &who, "forget", &json!({"all": true})).unwrap();
    assert_eq!(keys(&store), 0, "forget all takes the partition's counts");
    assert!(super::tally_build::built(&store).unwrap(), "the store's marker stays");
}

#[test]
fn a_store_holding_nothing_is_not_written_by_its_first_verb() {
    let (_dir, store, part) = fresh();
    let before = store.snapshot().unwrap().txn();
    let reply = verb(&store, &caller(&part, 1_000), "recall", &json!({"subject": "Acme"})).unwrap();
    assert_eq!(reply["state"], json!("nothing_stored"));
    assert_eq!(store.snapshot().unwrap().txn(), before, "a read of an empty store writes nothing");
    assert!(!super::tally_build::built(&store).unwrap());
}
