//! The source index (`source_index.rs`) against the records it files: over random remembers
//! (texts, facts and attributes, with a label or none), relates (restating, replacing), forgets of a source,
//! a subject and a document, imports and loads, every partition's entries are exactly those its
//! document and relation records and history events call for; and `forget {source}` through the index does what the
//! scan of the scope it replaced does, to the last key of the store.

use super::forget::{Outcome, forget_source};
use super::graph::Relation;
use super::part::Partition;
use super::records::decode;
use super::source_index::{document_key, event_key, relation_keys};
use super::source_of;
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, export_pages, verb};
use super::trees::{DOC, REL, SOURCES};
use crate::error::Error;
use crate::history::{EVENT, Event};
use crate::store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

const NAMES: [&str; 4] = ["Kai Moss", "Vera Lynx", "Acme", "Oslo"];
const LABELS: [&str; 3] = ["crm", "wiki", "memo.txt"];

#[derive(Debug, Clone)]
enum Step {
    /// A text (one of a few, so some are stored once), stating a fact or none, under a label or
    /// none.
    Remember {
        text: usize,
        fact: Option<(usize, usize)>,
        label: Option<usize>,
    },
    /// An entity's attribute (one of two values, so some are said again), under a label or none.
    Attribute {
        entity: usize,
        value: usize,
        label: Option<usize>,
    },
    Relate {
        from: usize,
        to: usize,
        label: Option<usize>,
        replaces: bool,
    },
    ForgetSource(usize),
    ForgetSubject(usize),
    /// The `n`th stored document of the scope, if any.
    ForgetPassage(usize),
    /// Export the scope and import it into the second scope.
    Import,
    /// Export the scope and load it into a fresh scope.
    Load,
}

fn step() -> impl Strategy<Value = Step> {
    let n = || 0..NAMES.len();
    // Two ends apart (a fact joining an entity to itself is refused).
    let ends = || (n(), 1..NAMES.len()).prop_map(|(from, by)| (from, (from + by) % NAMES.len()));
    let label = || prop::option::of(0..LABELS.len());
    prop_oneof![
        4 => (0..5usize, prop::option::of(ends()), label())
            .prop_map(|(text, fact, label)| Step::Remember { text, fact, label }),
        3 => (n(), 0..2usize, label()).prop_map(|(entity, value, label)| Step::Attribute { entity, value, label }),
        4 => (ends(), label(), any::<bool>())
            .prop_map(|((from, to), label, replaces)| Step::Relate { from, to, label, replaces }),
        2 => (0..LABELS.len()).prop_map(Step::ForgetSource),
        1 => n().prop_map(Step::ForgetSubject),
        1 => (0..4usize).prop_map(Step::ForgetPassage),
        1 => Just(Step::Import),
        1 => Just(Step::Load),
    ]
}

/// `part`'s entries as stored (the marker aside).
fn filed(store: &Store, part: &Partition) -> BTreeSet<Vec<u8>> {
    let snap = store.snapshot().unwrap();
    snap.prefix(SOURCES, part.prefix()).unwrap().map(|item| item.unwrap().0).collect()
}

/// The entries `part`'s document and relation records and history events call for.
fn called_for(store: &Store, part: &Partition) -> BTreeSet<Vec<u8>> {
    let snap = store.snapshot().unwrap();
    let mut keys = BTreeSet::new();
    for item in snap.prefix(DOC, part.prefix()).unwrap() {
        keys.extend(document_key(part, &decode(&item.unwrap().1, "document").unwrap()));
    }
    for item in snap.prefix(REL, part.prefix()).unwrap() {
        let rel: Relation = decode(&item.unwrap().1, "relation").unwrap();
        keys.extend(relation_keys(part, &rel));
    }
    for item in snap.prefix(EVENT, part.prefix()).unwrap() {
        let event: Event = decode(&item.unwrap().1, "history event").unwrap();
        keys.extend(source_of(&event).map(|label| event_key(part, label, event.seq)));
    }
    keys
}

fn doc_ids(store: &Store, part: &Partition) -> Vec<u64> {
    let snap = store.snapshot().unwrap();
    let at = part.prefix().len();
    snap.prefix(DOC, part.prefix())
        .unwrap()
        .map(|item| u64::from_be_bytes(item.unwrap().0[at..].try_into().unwrap()))
        .collect()
}

fn ok(reply: &Value) {
    assert!(reply.get("error").is_none(), "{reply}");
}

/// Runs `steps`, checking the index of every partition written after each; returns them.
fn run(store: &Store, part: &Partition, steps: &[Step]) -> Result<Vec<Partition>, TestCaseError> {
    let imported = Partition::new("local", "u1", "imported").unwrap();
    let mut written = vec![part.clone(), imported.clone()];
    for (i, s) in steps.iter().enumerate() {
        let now = TODAY + 1_000 * (i64::try_from(i).unwrap() + 1);
        let who = caller(part, now);
        let labelled = |mut body: Value, label: Option<usize>| {
            if let Some(l) = label {
                body["source"] = json!(LABELS[l]);
            }
            body
        };
        match s.clone() {
            Step::Remember { text, fact, label } => {
                let mut body =
                    json!({"content": format!("Memo {text}: {} met {}.", NAMES[text % 4], NAMES[(text + 1) % 4])});
                if let Some((from, to)) = fact {
                    body["facts"] =
                        json!({"relations": [{"source": NAMES[from], "target": NAMES[to], "type": "knows"}]});
                }
                ok(&verb(store, &who, "remember", &labelled(body, label)).unwrap());
            }
            Step::Attribute { entity, value, label } => {
                let role = ["lead", "intern"][value];
                let e = json!({"name": NAMES[entity], "attributes": {"role": role}});
                ok(&verb(store, &who, "remember", &labelled(json!({"facts": {"entities": [e]}}), label)).unwrap());
            }
            Step::Relate { from, to, label, replaces } => {
                let body = json!({"from": NAMES[from], "to": NAMES[to], "type": "knows", "replaces": replaces,
                                  "attributes": {"since": format!("{}", 2000 + i)}});
                ok(&verb(store, &who, "relate", &labelled(body, label)).unwrap());
            }
            Step::ForgetSource(l) => {
                verb(store, &who, "forget", &json!({"source": LABELS[l]})).unwrap();
            }
            Step::ForgetSubject(n) => {
                verb(store, &who, "forget", &json!({"subject": NAMES[n]})).unwrap();
            }
            Step::ForgetPassage(n) => {
                if let Some(id) = doc_ids(store, part).get(n) {
                    ok(&verb(store, &who, "forget", &json!({"passage": id.to_string()})).unwrap());
                }
            }
            Step::Import => {
                let records = export_pages(store, part, 50).concat();
                ok(&verb(store, &caller(&imported, now), "import", &json!({ "records": records })).unwrap());
            }
            Step::Load => {
                let records = export_pages(store, part, 50).concat();
                let lines: Vec<String> = records.iter().map(Value::to_string).collect();
                let loaded = Partition::new("local", "u1", &format!("load{i}")).unwrap();
                super::api::call(store, "load", &caller(&loaded, now), lines.join("\n").as_bytes()).unwrap();
                written.push(loaded);
            }
        }
        for p in &written {
            prop_assert_eq!(filed(store, p), called_for(store, p), "{:?} after step {}: {:?}", p, i, s);
        }
    }
    Ok(written)
}

/// A key of the store: its tree, key and value.
type Entry = (String, Vec<u8>, Vec<u8>);

/// What `forget_source` of `label` answers and leaves in every tree of the store, the index's
/// marker taken out first (`scan`: the readers scan the scope) or not; the write is then rolled
/// back.
fn forgotten(store: &Store, part: &Partition, label: &'static str, scan: bool) -> (Outcome, Vec<Entry>) {
    let out = Arc::new(Mutex::new(None));
    let (into, part) = (out.clone(), part.clone());
    let rolled_back = store.write(move |tx| {
        if scan {
            tx.delete(SOURCES, &[])?;
        }
        let outcome = forget_source(tx, &part, label, TODAY + 1_000_000)?;
        let mut left = Vec::new();
        for tree in tx.tree_names() {
            for (k, v) in tx.prefix(&tree, &[])? {
                if !(tree == SOURCES && k.is_empty()) {
                    left.push((tree.clone(), k, v));
                }
            }
        }
        *into.lock().unwrap() = Some((outcome, left));
        Err::<(), _>(Error::InvalidArgument("rolled back".into()))
    });
    assert!(rolled_back.is_err());
    out.lock().unwrap().take().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn the_source_index_files_what_the_records_call_for(steps in prop::collection::vec(step(), 1..20)) {
        let (_dir, store, part) = fresh();
        let written = run(&store, &part, &steps)?;
        // Taken out and built again, as for a store written before it: the same entries.
        store.write(|tx| tx.delete_prefix(SOURCES, &[])).unwrap();
        store.forget_marks();
        verb(&store, &caller(&part, TODAY + 900_000), "status", &json!({})).unwrap();
        for p in &written {
            prop_assert_eq!(filed(&store, p), called_for(&store, p));
        }
        // Forgetting each label through the index does what the scan of the scope does.
        for p in &written[..2] {
            for label in LABELS {
                let (by_scan, by_index) = (forgotten(&store, p, label, true), forgotten(&store, p, label, false));
                prop_assert_eq!(&by_scan.0, &by_index.0, "{}", label);
                prop_assert!(by_scan.1 == by_index.1, "{} leaves another store", label);
            }
        }
    }
}
