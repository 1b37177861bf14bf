//! The attribute index (`attr_index.rs`) against the scan it replaced: recall by attribute answers
//! what a read of every entity answers (plain, `as_of`, `valid_at`; changed, dated, case-folded,
//! numeric and nested values), over random histories of remember, forget and import/load; the
//! index files every pair a read can match and nothing of what was forgotten; a store written
//! before it builds it once and answers the same.

use super::attr_index::digest;
use super::attribute_time::{attributes_when, set_by};
use super::graph::{Entity, entities};
use super::part::Partition;
use super::records::decode;
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, export_pages, verb};
use super::trees::{ATTR, ATTR_OF};
use super::{When, valid};
use crate::history::{EVENT, Event};
use crate::store::Store;
use crate::text::fold;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The time of the reads: after every write of the tests.
const NOW: i64 = TODAY + 10_000_000;

/// Reads at: now, two moments of transaction time, and three instants of valid time (before,
/// between and after the dates the writes carry).
const WHENS: [(Option<i64>, Option<&str>); 6] = [
    (None, None),
    (Some(TODAY + 3_500), None),
    (Some(TODAY + 1_000), None),
    (None, Some("2021-06-01")),
    (None, Some("2025-01-01")),
    (None, Some("2031-01-01")),
];

fn when_of((as_of, valid_at): (Option<i64>, Option<&str>)) -> (Value, When) {
    let mut body = json!({});
    if let Some(t) = as_of {
        body["as_of"] = json!(t);
    }
    if let Some(v) = valid_at {
        body["valid_at"] = json!(v);
    }
    (body, When::of_request(as_of, valid_at.and_then(valid::instant), NOW))
}

/// Who recall by `key` holding `value` names (the subject, then its other matches) and the
/// subject's attributes as it shows them.
fn recalled(store: &Store, part: &Partition, key: &str, value: &Value, when: &Value) -> (Vec<String>, Value) {
    // Every match listed (`other_matches` holds at most `k`), to compare with the oracle's.
    let mut body = json!({"attribute": {"key": key, "value": value}, "k": crate::knowledge::limits::MAX_RECALL_K});
    body.as_object_mut().unwrap().extend(when.as_object().unwrap().clone());
    let r = verb(store, &caller(part, NOW), "recall", &body).unwrap();
    if r["state"] == json!("nothing_stored") {
        return (Vec::new(), Value::Null);
    }
    assert_eq!(r["state"], json!("answered"), "{r}");
    let mut names = vec![r["subject"]["name"].as_str().unwrap().to_owned()];
    for other in r["other_matches"].as_array().into_iter().flatten() {
        names.push(other["name"].as_str().unwrap().to_owned());
    }
    (names, r["subject"]["attributes"].clone())
}

/// The oracle: every entity of `part` read, matched by its attributes at `when` as recall
/// compares them (strings case-folded, other values equal), in id order.
fn scanned(store: &Store, part: &Partition, key: &str, value: &Value, when: &When) -> (Vec<String>, Value) {
    let snap = store.snapshot().unwrap();
    let mut found: Vec<Entity> = Vec::new();
    for e in entities(&snap, part).unwrap() {
        if when.as_of.is_some_and(|t| e.recorded_at > t) {
            continue;
        }
        let attributes = attributes_when(&snap, part, &e, when).unwrap();
        let same = |v: &Value| match (v, value) {
            (Value::String(a), Value::String(b)) => fold(a) == fold(b),
            (a, b) => a == b,
        };
        if attributes.get(key.trim()).is_some_and(same) {
            found.push(Entity { attributes, ..e });
        }
    }
    let shown = found.first().map_or(Value::Null, |e| Value::Object(e.attributes.clone()));
    (found.into_iter().map(|e| e.name).collect(), shown)
}

/// Recall by every key and value at every moment answers as the scan does.
fn same_answers(store: &Store, part: &Partition, keys: &[&str], values: &[Value]) -> Result<(), TestCaseError> {
    for when in WHENS {
        let (body, w) = when_of(when);
        for key in keys {
            for value in values {
                let got = recalled(store, part, key, value, &body);
                prop_assert_eq!(got, scanned(store, part, key, value, &w), "{} = {} at {:?}", key, value, when);
            }
        }
    }
    Ok(())
}

/// A partition's `ATTR` keys and `ATTR_OF` entries, the partition prefix taken off.
type Entries = (BTreeSet<Vec<u8>>, BTreeMap<Vec<u8>, Vec<u8>>);

/// `part`'s entries (see `Entries`).
fn entries(store: &Store, part: &Partition) -> Entries {
    let snap = store.snapshot().unwrap();
    let at = part.prefix().len();
    let by_value = snap.prefix(ATTR, part.prefix()).unwrap().map(|item| item.unwrap().0[at..].to_vec()).collect();
    let by_entity = snap
        .prefix(ATTR_OF, part.prefix())
        .unwrap()
        .map(|item| {
            let (k, v) = item.unwrap();
            (k[at..].to_vec(), v)
        })
        .collect();
    (by_value, by_entity)
}

/// The index of `part` files every pair each stored entity's record holds and each pair its
/// history set (what a read at any moment can match), each under both trees, and nothing for an
/// entity or a key that is gone.
fn check_index(store: &Store, part: &Partition) -> Result<(), TestCaseError> {
    let (by_value, by_entity) = entries(store, part);
    let snap = store.snapshot().unwrap();
    let stored: BTreeMap<u64, Entity> = entities(&snap, part).unwrap().into_iter().map(|e| (e.id, e)).collect();
    prop_assert_eq!(by_value.len(), by_entity.len(), "one entry each way");
    for (key, made_for) in &by_entity {
        let (id, d) = (u64::from_be_bytes(key[..8].try_into().unwrap()), &key[8..]);
        prop_assert!(by_value.contains(&[d, &id.to_be_bytes()].concat()), "entity {} lacks its twin", id);
        let made_for = String::from_utf8(made_for.clone()).unwrap();
        let holds = stored.get(&id).is_some_and(|e| e.attributes.contains_key(&made_for));
        prop_assert!(holds, "an entry of entity {} for {:?}, which it no longer holds", id, made_for);
    }
    let filed = |id: u64, k: &String, v: &Value| by_value.contains(&[&digest(k, v)[..], &id.to_be_bytes()].concat());
    for e in stored.values() {
        for (k, v) in &e.attributes {
            prop_assert!(filed(e.id, k, v), "{}'s {} = {} is not filed", e.name, k, v);
        }
    }
    for item in snap.prefix(EVENT, part.prefix()).unwrap() {
        let event: Event = decode(&item.unwrap().1, "event").unwrap();
        let Some((id, set)) = set_by(&event).filter(|(id, _)| stored.contains_key(id)) else { continue };
        for (k, v) in &set {
            prop_assert!(filed(id, k, v), "{} = {} set by event {} is not filed", k, v, event.seq);
        }
    }
    Ok(())
}

/// Takes the index and its marker out, as a store written before it has neither.
fn drop_index(store: &Store) {
    store
        .write(|tx| {
            tx.delete_prefix(ATTR, &[])?;
            tx.delete_prefix(ATTR_OF, &[])
        })
        .unwrap();
    store.forget_marks();
    assert!(!super::attr_index_build::built(store).unwrap());
}

const NAMES: [&str; 4] = ["Kai Moss", "Vera Lynx", "Acme", "Oslo"];
const KEYS: [&str; 2] = ["role", "tag"];
const DATES: [Option<&str>; 3] = [None, Some("2022-01-01"), Some("2030-01-01")];

/// Values that compare equal in several spellings (case, accents, a float's zero, object key
/// order) and values that look alike but do not (an integer and a float, a nested string's case).
fn values() -> Vec<Value> {
    vec![
        json!("Intern"),
        json!("INTERN"),
        json!("Ïntern"),
        json!("lead"),
        json!(1),
        json!(1.0),
        json!(0.0),
        json!(-0.0),
        json!({"a": 1, "b": ["x", 2]}),
        json!({"b": ["x", 2], "a": 1}),
        json!({"a": 1, "b": ["X", 2]}),
        json!([2, "x"]),
        json!(null),
        json!(true),
    ]
}

#[derive(Debug, Clone)]
enum Step {
    Remember {
        entity: usize,
        key: usize,
        value: usize,
        date: usize,
    },
    ForgetAttribute(usize, usize),
    ForgetSubject(usize),
    /// Export the scope and import it into the second scope.
    Import,
    /// Export the scope without its dated writes (as an export written before them) and load it
    /// into a fresh scope: the load's own sorted runs.
    Load,
}

fn step() -> impl Strategy<Value = Step> {
    let n = 0..NAMES.len();
    prop_oneof![
        6 => (n.clone(), 0..KEYS.len(), 0..values().len(), 0..DATES.len())
            .prop_map(|(entity, key, value, date)| Step::Remember { entity, key, value, date }),
        1 => (n.clone(), 0..KEYS.len()).prop_map(|(e, k)| Step::ForgetAttribute(e, k)),
        1 => n.prop_map(Step::ForgetSubject),
        1 => Just(Step::Import),
        1 => Just(Step::Load),
    ]
}

/// Runs `steps`; returns the partitions written.
fn run(store: &Store, part: &Partition, steps: &[Step]) -> Result<Vec<Partition>, TestCaseError> {
    let imported = Partition::new("local", "u1", "imported").unwrap();
    let mut written = vec![part.clone(), imported.clone()];
    for (i, s) in steps.iter().enumerate() {
        let now = TODAY + 1_000 * (i64::try_from(i).unwrap() + 1);
        let who = caller(part, now);
        match s.clone() {
            Step::Remember { entity, key, value, date } => {
                let e = json!({"name": NAMES[entity], "attributes": {KEYS[key]: values()[value]}});
                let mut body = json!({"facts": {"entities": [e]}});
                if let Some(d) = DATES[date] {
                    body["date"] = json!(d);
                }
                verb(store, &who, "remember", &body).unwrap();
            }
            Step::ForgetAttribute(e, k) => {
                verb(store, &who, "forget", &json!({"attribute": {"subject": NAMES[e], "key": KEYS[k]}})).unwrap();
            }
            Step::ForgetSubject(e) => {
                verb(store, &who, "forget", &json!({"subject": NAMES[e]})).unwrap();
            }
            Step::Import => {
                let records = export_pages(store, part, 50).concat();
                verb(store, &caller(&imported, now), "import", &json!({ "records": records })).unwrap();
            }
            Step::Load => {
                let mut records = export_pages(store, part, 50).concat();
                records.iter_mut().filter_map(Value::as_object_mut).for_each(|r| {
                    r.remove("attribute_writes");
                });
                let lines: Vec<String> = records.iter().map(Value::to_string).collect();
                let loaded = Partition::new("local", "u1", &format!("load{i}")).unwrap();
                super::api::call(store, "load", &caller(&loaded, now), lines.join("\n").as_bytes()).unwrap();
                written.push(loaded);
            }
        }
        for p in &written {
            check_index(store, p)?;
        }
    }
    Ok(written)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn recall_by_attribute_answers_as_a_scan_of_every_entity(steps in prop::collection::vec(step(), 1..16)) {
        let (_dir, store, part) = fresh();
        let written = run(&store, &part, &steps)?;
        let imported = &written[1];
        for p in [&part, imported] {
            same_answers(&store, p, &KEYS, &values())?;
        }
        // Built again from the records and history alone, as for a store written before the
        // index: every pair still filed, nothing more than the writers filed, the same answers.
        let before: Vec<_> = written.iter().map(|p| entries(&store, p)).collect();
        drop_index(&store);
        verb(&store, &caller(&part, NOW), "status", &json!({})).unwrap();
        // A store holding no entity has nothing to file and stays unmarked.
        let holds = store.snapshot().unwrap().prefix(super::trees::ENT, &[]).unwrap().next().is_some();
        prop_assert_eq!(super::attr_index_build::built(&store).unwrap(), holds);
        for (p, (by_value, _)) in written.iter().zip(&before) {
            check_index(&store, p)?;
            prop_assert!(entries(&store, p).0.is_subset(by_value), "the build files what the writers did not");
        }
        same_answers(&store, &part, &KEYS, &values())?;
    }
}

fn remember(store: &Store, part: &Partition, now: i64, entities: &Value, date: Option<&str>) {
    let mut body = json!({"facts": {"entities": entities}});
    if let Some(d) = date {
        body["date"] = json!(d);
    }
    let reply = verb(store, &caller(part, now), "remember", &body).unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
}

#[test]
fn values_equal_as_recall_compares_them_share_a_digest_and_others_do_not() {
    let d = digest;
    assert_eq!(d("city", &json!("Berlin")), d("city", &json!("BERLIN")));
    assert_eq!(d("n", &json!(0.0)), d("n", &json!(-0.0)));
    assert_eq!(d("m", &json!({"a": 1, "b": [1, "x"]})), d("m", &json!({"b": [1, "x"], "a": 1})));
    for (a, b) in [
        (("city", json!("Berlin")), ("town", json!("Berlin"))),
        (("n", json!(1)), ("n", json!(1.0))),
        (("n", json!(0)), ("n", json!(0.0))),
        (("n", json!(1)), ("n", json!("1"))),
        (("m", json!({"a": "X"})), ("m", json!({"a": "x"}))),
        (("m", json!([1, 2])), ("m", json!([2, 1]))),
        (("m", json!(["ab"])), ("m", json!(["a", "b"]))),
        (("m", json!(null)), ("m", json!(false))),
    ] {
        assert_ne!(d(a.0, &a.1), d(b.0, &b.1), "{a:?} and {b:?}");
    }
}

#[test]
fn many_entities_holding_one_value_are_all_found_in_id_order() {
    let (_dir, store, part) = fresh();
    let people: Vec<Value> = (0..300)
        .map(|i| {
            let team = ["Infra", "INFRA", "web"][i % 3];
            json!({"name": format!("Person {i}"), "attributes": {"team": team, "no": i}})
        })
        .collect();
    remember(&store, &part, TODAY, &json!(people), None);
    let (names, shown) = recalled(&store, &part, "team", &json!("infra"), &json!({}));
    assert_eq!(names.len(), 200);
    assert_eq!(names[..3], ["Person 0", "Person 1", "Person 3"]);
    assert_eq!(shown, json!({"team": "Infra", "no": 0}));
    assert_eq!((names, shown), scanned(&store, &part, "team", &json!("infra"), &When::of_request(None, None, NOW)));
    assert_eq!(recalled(&store, &part, " no ", &json!(7), &json!({})).0, ["Person 7"], "the key is trimmed");
    assert_eq!(recalled(&store, &part, "no", &json!(7.0), &json!({})).0, Vec::<String>::new(), "7.0 is not 7");
}

#[test]
fn changed_and_dated_values_are_matched_at_their_moment() {
    let (_dir, store, part) = fresh();
    let kai = |role: &str| json!([{"name": "Kai Moss", "attributes": {"role": role}}]);
    remember(&store, &part, TODAY + 1_000, &kai("intern"), Some("2022-01-01"));
    remember(&store, &part, TODAY + 2_000, &kai("engineer"), Some("2024-01-01"));
    remember(&store, &part, TODAY + 3_000, &kai("lead"), Some("2030-01-01"));
    let nested = json!([{"name": "Vera Lynx", "attributes": {"role": {"title": "Engineer", "level": [2, 3]}}}]);
    remember(&store, &part, TODAY + 4_000, &nested, None);
    let roles = [json!("Intern"), json!("ENGINEER"), json!("lead"), json!({"level": [2, 3], "title": "Engineer"})];
    same_answers(&store, &part, &["role"], &roles).unwrap();
    let at = |value: &Value, when: Value| recalled(&store, &part, "role", value, &when).0;
    assert_eq!(at(&roles[1], json!({})), ["Kai Moss"], "the engineer until 2030");
    assert_eq!(at(&roles[2], json!({})), Vec::<String>::new(), "lead only from 2030");
    assert_eq!(at(&roles[2], json!({"valid_at": "2031-01-01"})), ["Kai Moss"]);
    assert_eq!(at(&roles[0], json!({"valid_at": "2023-01-01"})), ["Kai Moss"]);
    assert_eq!(at(&roles[0], json!({"as_of": TODAY + 1_500})), ["Kai Moss"]);
    assert_eq!(at(&roles[3], json!({})), ["Vera Lynx"], "a nested value, its keys in another order");
    assert_eq!(at(&roles[3], json!({"as_of": TODAY + 3_500})), Vec::<String>::new(), "not known yet");
    assert_eq!(entries(&store, &part).0.len(), 4, "each value Kai's role ever had, and Vera's");
}

/// How many index entries of `part` (both trees) are entity `id`'s.
fn entries_of(store: &Store, part: &Partition, id: u64) -> usize {
    let (by_value, by_entity) = entries(store, part);
    let id = id.to_be_bytes();
    by_value.iter().filter(|k| k.ends_with(&id)).count() + by_entity.keys().filter(|k| k.starts_with(&id)).count()
}

fn id_of(store: &Store, part: &Partition, name: &str) -> u64 {
    super::entity_by_name(&store.snapshot().unwrap(), part, name).unwrap().unwrap().id
}

#[test]
fn a_forgotten_subject_attribute_scope_or_user_leaves_no_entry() {
    let (_dir, store, part) = fresh();
    let other = Partition::new("local", "u1", "other").unwrap();
    let neighbour = Partition::new("local", "u2", "default").unwrap();
    let people = json!([{"name": "Kai Moss", "attributes": {"role": "intern", "team": "infra"}},
                        {"name": "Vera Lynx", "attributes": {"role": "lead"}}]);
    for p in [&part, &other, &neighbour] {
        remember(&store, p, TODAY + 1_000, &people, Some("2022-01-01"));
        remember(&store, p, TODAY + 2_000, &json!([{"name": "Kai Moss", "attributes": {"role": "engineer"}}]), None);
    }
    let (kai, vera) = (id_of(&store, &part, "Kai Moss"), id_of(&store, &part, "Vera Lynx"));
    assert_eq!((entries_of(&store, &part, kai), entries_of(&store, &part, vera)), (6, 2));

    let who = caller(&part, TODAY + 3_000);
    verb(&store, &who, "forget", &json!({"attribute": {"subject": "Kai Moss", "key": "role"}})).unwrap();
    assert_eq!(entries_of(&store, &part, kai), 2, "only the team is left");
    for (value, when) in [("intern", json!({"valid_at": "2023-01-01"})), ("engineer", json!({})), ("intern", json!({}))]
    {
        assert!(recalled(&store, &part, "role", &json!(value), &when).0.is_empty(), "{value} {when}");
    }
    assert_eq!(recalled(&store, &part, "team", &json!("infra"), &json!({})).0, ["Kai Moss"]);
    verb(&store, &who, "forget", &json!({"subject": "Vera Lynx"})).unwrap();
    assert_eq!(entries_of(&store, &part, vera), 0);
    assert!(recalled(&store, &part, "role", &json!("lead"), &json!({})).0.is_empty());
    check_index(&store, &part).unwrap();

    verb(&store, &who, "forget", &json!({"all": true})).unwrap();
    let (by_value, by_entity) = entries(&store, &part);
    assert!(by_value.is_empty() && by_entity.is_empty(), "a forgotten scope keeps no entry");
    assert_eq!(entries(&store, &other).0.len(), 4, "another scope keeps its entries");
    verb(&store, &caller(&other, TODAY + 4_000), "delete_user", &json!({})).unwrap();
    let (by_value, by_entity) = entries(&store, &other);
    assert!(by_value.is_empty() && by_entity.is_empty(), "a deleted user keeps no entry");
    assert_eq!(entries(&store, &neighbour).0.len(), 4, "another user keeps its entries");
    assert!(super::attr_index_build::built(&store).unwrap(), "the store's marker stays");
}

#[test]
fn a_store_written_before_the_index_builds_it_once_and_answers_the_same() {
    let (_dir, store, part) = fresh();
    let kai = |role: &str| json!([{"name": "Kai Moss", "attributes": {"role": role, "no": 7}}]);
    remember(&store, &part, TODAY + 1_000, &kai("intern"), Some("2022-01-01"));
    remember(&store, &part, TODAY + 2_000, &kai("engineer"), Some("2024-01-01"));
    let records = export_pages(&store, &part, 50).concat();
    let copy = Partition::new("local", "u1", "copy").unwrap();
    verb(&store, &caller(&copy, TODAY + 3_000), "import", &json!({ "records": records })).unwrap();
    let values = [json!("intern"), json!("Engineer"), json!(7)];
    let answers = |p: &Partition| -> Vec<(Vec<String>, Value)> {
        let mut out = Vec::new();
        for when in WHENS {
            for v in &values {
                out.push(recalled(&store, p, "role", v, &when_of(when).0));
                out.push(recalled(&store, p, "no", v, &when_of(when).0));
            }
        }
        out
    };
    // The copy's history starts at its import, so it answers `as_of` earlier moments otherwise.
    let before = (answers(&part), answers(&copy));
    assert!(before.1.iter().any(|(names, _)| !names.is_empty()), "{before:?}");
    let filed = (entries(&store, &part), entries(&store, &copy));
    drop_index(&store);
    assert_eq!((answers(&part), answers(&copy)), before, "the first verb built it, and the answers are the same");
    assert!(super::attr_index_build::built(&store).unwrap());
    assert_eq!((entries(&store, &part), entries(&store, &copy)), filed, "what the writers filed");
}

#[test]
fn a_store_holding_no_entity_is_not_written_by_its_first_verb() {
    let (_dir, store, part) = fresh();
    let before = store.snapshot().unwrap().txn();
    let reply = verb(&store, &caller(&part, NOW), "recall", &json!({"attribute": {"key": "role", "value": "x"}}));
    assert_eq!(reply.unwrap()["state"], json!("nothing_stored"));
    assert_eq!(store.snapshot().unwrap().txn(), before, "a read of an empty store writes nothing");
    assert!(!super::attr_index_build::built(&store).unwrap());
}
