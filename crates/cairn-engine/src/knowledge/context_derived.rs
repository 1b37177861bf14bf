//! Derived facts in a context: what follows from the seeds' relations (their symmetric and
//! inverse readings and the transitive chains from and into them, `derive`), read at the
//! context's moment, and their place in the graph channel beside the stored facts they rest on.

use super::context::{Item, ItemKind};
use super::derive::Derived;
use super::graph::Neighbour;
use super::part::Partition;
use super::recall::{When, derived_of};
use crate::error::Result;
use crate::snapshot::Snapshot;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The most entities whose relations one context reads to follow chains from its seeds (shared by
/// all seeds), so a hub or a type word seeding fifty entities cannot make a context unbounded.
pub const MAX_DERIVE_READS: usize = 256;
/// The most derived facts one context collects.
pub const MAX_DERIVED: usize = 100;

/// The derived facts around `seeds`, in seed order, each with the seed it was read from and each
/// reading once (a chain between two seeds is found from both ends), resting on `own`: each
/// seed's relations the walk kept (`context_walk`), so a hub's thousands of edges are not read
/// again here. A reading that is stored is not derived (`derived_of`).
pub(super) fn from_seeds(
    snap: &Snapshot,
    part: &Partition,
    seeds: &[u64],
    own: &HashMap<u64, Vec<Neighbour>>,
    when: &When,
) -> Result<Vec<(Derived, u64)>> {
    let mut reads = MAX_DERIVE_READS;
    let mut seen: HashSet<(u64, u64, String)> = HashSet::new();
    let mut out = Vec::new();
    for &seed in seeds {
        let facts = own.get(&seed).map_or(&[][..], Vec::as_slice);
        for d in derived_of(snap, part, seed, facts, when, &mut reads)? {
            if out.len() == MAX_DERIVED {
                return Ok(out);
            }
            if seen.insert((d.from, d.to, super::derive::rule_key(&d.rel_type))) {
                out.push((d, seed));
            }
        }
    }
    Ok(out)
}

/// The graph channel's order: the stored facts as the walk ranked them, each derived chain placed
/// right after the last of the stored facts it rests on, or right before the first of them when
/// it covers more of the question's content terms (`wanted`) than each of them does (`Room 4
/// part_of Main Hall` answers "Is Room 4 part of Main Hall?" better than either link). So a
/// derived fact never outranks what it rests on unless it answers better, and then only just. A
/// symmetric or inverse reading that answers no better than its one stored fact comes after every
/// stored fact, and one whose basis the walk did not reach (hops, the fact cap) last. `terms`
/// gives an item's matching terms.
pub(super) fn place(
    stored: Vec<Item>,
    derived: Vec<Item>,
    wanted: &BTreeSet<String>,
    terms: impl Fn(&str) -> BTreeSet<String>,
) -> Vec<Item> {
    let covers = |item: &Item| terms(&item.text).iter().filter(|t| wanted.contains(*t)).count();
    let at: HashMap<u64, usize> = stored
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match &item.kind {
            ItemKind::Fact { relation, .. } => Some((relation.id, i)),
            _ => None,
        })
        .collect();
    let cover: Vec<usize> = stored.iter().map(covers).collect();
    // Sort keys: (stored position, 0 before it / 1 itself / 2 after it, order among equals).
    let mut keyed: Vec<((usize, u8, usize), Item)> =
        stored.into_iter().enumerate().map(|(i, item)| ((i, 1, 0), item)).collect();
    let last = keyed.len();
    for (j, item) in derived.into_iter().enumerate() {
        let ItemKind::Derived { fact, .. } = &item.kind else { continue };
        let basis: Vec<usize> = fact.basis.iter().filter_map(|id| at.get(id).copied()).collect();
        let key = match (basis.iter().min(), basis.iter().max()) {
            (Some(&first), Some(&end)) => {
                let better = basis.iter().all(|&i| covers(&item) > cover[i]);
                if better {
                    (first, 0, j)
                } else if fact.basis.len() == 1 {
                    // The other end's reading of one stored fact, answering no better, says what
                    // that fact says: it does not take a place from another fact (a hub's every
                    // `employs` would otherwise bring its `employed_by` right after it).
                    (last, 1, j)
                } else {
                    (end, 2, j)
                }
            }
            _ => (last, 2, j),
        };
        keyed.push((key, item));
    }
    keyed.sort_by_key(|(key, _)| *key);
    keyed.into_iter().map(|(_, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::{TODAY, assert_citations_slice, call, caller, fresh};
    use serde_json::{Value, json};

    /// Room 4 `part_of` Wing B (recorded at 10), Wing B `part_of` Main Hall (at 20), each said in a
    /// memo; Ann Lee `married_to` Bob Stone and Jonas Weber manages Priya Raman (at 30).
    fn hall() -> (tempfile::TempDir, crate::store::Store, crate::knowledge::Partition) {
        let (dir, store, part) = fresh();
        for (at, content, from, to, rel) in [
            (10, "Room 4 is part of Wing B.", "Room 4", "Wing B", "part_of"),
            (20, "Wing B is part of Main Hall.", "Wing B", "Main Hall", "part_of"),
            (30, "Ann Lee is married to Bob Stone.", "Ann Lee", "Bob Stone", "married_to"),
            (30, "Jonas Weber manages Priya Raman.", "Jonas Weber", "Priya Raman", "manages"),
        ] {
            let body = json!({"content": content, "source": "memo",
                "facts": {"relations": [{"source": from, "target": to, "type": rel}]}});
            call(&store, &caller(at), "remember", &body).unwrap();
        }
        (dir, store, part)
    }

    fn context(store: &crate::store::Store, body: &Value) -> Value {
        call(store, &caller(100), "context", body).unwrap()
    }

    fn items(c: &Value) -> Vec<Value> {
        c["items"].as_array().unwrap().clone()
    }

    /// The position of the item reading `text`, and the item.
    fn find(c: &Value, text: &str) -> (usize, Value) {
        let all = items(c);
        let at = all.iter().position(|i| i["text"] == json!(text)).unwrap_or_else(|| panic!("no {text:?} in {c}"));
        (at, all[at].clone())
    }

    #[test]
    fn a_chain_grounds_what_neither_link_answers() {
        let (_dir, store, part) = hall();
        let c = context(&store, &json!({"question": "Is Room 4 part of Main Hall?"}));
        assert_eq!(c["grounding"], json!({"verdict": "grounded", "uncovered": []}), "{c}");
        let (at, d) = find(&c, "Room 4 part_of Main Hall");
        let (first, link1) = find(&c, "Room 4 part_of Wing B");
        let (second, link2) = find(&c, "Wing B part_of Main Hall");
        assert_eq!(
            (d["kind"].clone(), d["derived"].clone(), d["rule"].clone()),
            (json!("fact"), json!(true), json!("transitive"))
        );
        assert_eq!((d["id"].clone(), d["direction"].clone()), (Value::Null, json!("derived")));
        assert_eq!(d["rests_on"], json!([link1["id"], link2["id"]]), "the stored facts, in chain order");
        assert_eq!(d["citation"], link1["citation"], "cited by the first fact it rests on");
        assert_eq!(d["citation"]["span"]["text"], json!("Room 4 is part of Wing B."));
        assert_eq!(d["channels"], json!(["relation", "graph"]), "its type is the question's word \"part\"");
        assert_eq!(d["found_by"]["hops"], json!(2));
        assert!(at < first && at < second, "it covers the question better than either link: {c}");
        assert!(c["coverage"]["derived"].as_u64().unwrap() >= 1, "{c}");
        assert_citations_slice(&store, &part, &c);
        // k bounds it with everything else; no traversal, no derivation.
        assert_eq!(items(&context(&store, &json!({"question": "Is Room 4 part of Main Hall?", "k": 1}))).len(), 1);
        let flat = context(&store, &json!({"question": "Is Room 4 part of Main Hall?", "hops": 0}));
        assert!(items(&flat).iter().all(|i| i["derived"].is_null()), "{flat}");
        assert_eq!(flat["coverage"]["derived"], json!(0));
    }

    #[test]
    fn symmetric_and_inverse_readings_rank_after_what_they_rest_on() {
        let (_dir, store, _part) = hall();
        let c = context(&store, &json!({"question": "Who is Bob Stone married to?"}));
        let (at, d) = find(&c, "Bob Stone married_to Ann Lee");
        let (stored, fact) = find(&c, "Ann Lee married_to Bob Stone");
        assert_eq!((d["rule"].clone(), d["rests_on"].clone()), (json!("symmetric"), json!([fact["id"]])));
        assert!(stored < at, "it says no more than the stored fact: {c}");
        assert_eq!(c["grounding"]["verdict"], json!("grounded"));
        let c = context(&store, &json!({"question": "Who is Priya Raman managed by?"}));
        let (at, d) = find(&c, "Priya Raman managed_by Jonas Weber");
        let (stored, fact) = find(&c, "Jonas Weber manages Priya Raman");
        assert_eq!((d["rule"].clone(), d["rests_on"].clone()), (json!("inverse"), json!([fact["id"]])));
        assert_eq!(d["seed"], json!("Priya Raman"));
        assert!(stored < at, "{c}");
    }

    #[test]
    fn as_of_before_a_link_derives_nothing_from_it() {
        let (_dir, store, _part) = hall();
        let c = context(&store, &json!({"question": "Is Room 4 part of Main Hall?", "as_of": 15}));
        assert!(items(&c).iter().all(|i| i["derived"].is_null()), "{c}");
        assert_eq!(c["coverage"]["derived"], json!(0));
        find(&c, "Room 4 part_of Wing B");
        assert_eq!(c["grounding"]["verdict"], json!("related"), "{c}");
        let later = context(&store, &json!({"question": "Is Room 4 part of Main Hall?", "as_of": 20}));
        find(&later, "Room 4 part_of Main Hall");
    }

    #[test]
    fn a_derived_item_holds_where_its_chain_holds() {
        let (_dir, store, _part) = fresh();
        for (from, to, date) in [("Room 4", "Wing B", "2020-01-01"), ("Wing B", "Main Hall", "2023-01-01")] {
            let body = json!({"from": from, "to": to, "type": "part_of", "date": date});
            call(&store, &caller(TODAY - 1_000), "relate", &body).unwrap();
        }
        let c = call(&store, &caller(TODAY), "context", &json!({"question": "Is Room 4 part of Main Hall?"})).unwrap();
        let (_, d) = find(&c, "Room 4 part_of Main Hall");
        assert_eq!((&d["valid_from"], &d["valid_to"]), (&json!("2023-01-01"), &Value::Null), "{d}");
        let then = json!({"question": "Is Room 4 part of Main Hall?", "valid_at": "2021-06-01"});
        let c = call(&store, &caller(TODAY), "context", &then).unwrap();
        assert!(items(&c).iter().all(|i| i["derived"].is_null()), "Main Hall held no wing in 2021: {c}");
    }

    #[test]
    fn valid_at_derives_from_the_facts_true_then() {
        let (_dir, store, _part) = fresh();
        let body = json!({"from": "Jonas Weber", "to": "Kai Moss", "type": "manages",
            "attributes": {"valid_from": "2030-01-01"}});
        call(&store, &caller(TODAY - 1_000), "relate", &body).unwrap();
        let derived = |extra: Value| -> Vec<String> {
            let mut body = json!({"question": "Who manages Kai Moss?"});
            body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let c = call(&store, &caller(TODAY), "context", &body).unwrap();
            items(&c)
                .iter()
                .filter(|i| i["derived"] == json!(true))
                .map(|i| i["text"].as_str().unwrap().to_owned())
                .collect()
        };
        assert!(derived(json!({})).is_empty(), "not true yet, so nothing follows from it");
        assert_eq!(derived(json!({"valid_at": "2030-06-01"})), vec!["Kai Moss managed_by Jonas Weber".to_owned()]);
    }
}
