//! A hub's recall reads each of its facts' type as the rules read it once, and hands the chains
//! only its facts of a transitive type (`derived_of`): the derived facts are the ones the previous
//! reading gave, which handed the chains every fact of the subject, whole, for each type walked.
//! Over random hubs (mixed types and spellings, chains through the hub and past it, intervals),
//! and through the verb: the reply's facts, their order, `omitted` and every page of the cursor.

use super::{When, derived_of, live_neighbours, transitive_side};
use crate::error::Result;
use crate::knowledge::derive::{self, Derived};
use crate::knowledge::graph::{Direction, Neighbour, Relation, entity_by_name};
use crate::knowledge::testing::{call, caller, fresh};
use crate::knowledge::{Partition, wire};
use crate::snapshot::Snapshot;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::HashSet;

const T: i64 = 1_790_000_000_000;
const OTHERS: [&str; 6] = ["Ann", "Berlin", "Acme", "Room 4", "Europe", "Kai"];
/// Transitive types in several spellings, inverse and symmetric ones, and plain ones.
const TYPES: [&str; 10] =
    ["located_in", "partOf", "part of", "Contained-In", "parent_of", "childOf", "married_to", "owns", "knows", "likes"];

/// One relation: which end the hub is (or neither), the other end(s), the type, its valid years.
type Edge = (u8, usize, usize, usize, Option<(u8, u8)>);

fn edge() -> impl Strategy<Value = Edge> {
    (0..3u8, 0..OTHERS.len(), 0..OTHERS.len(), 0..TYPES.len(), prop::option::of((0..4u8, 1..4u8)))
}

/// The derived facts of a recall before its derived facts were read once per fact: each chain given every
/// fact of the subject's side, whole, and each fact's rule key read wherever it was needed.
fn previous_derived(
    snap: &Snapshot,
    part: &Partition,
    (subject, facts): (u64, &[Neighbour]),
    when: &When,
) -> Result<Vec<Derived>> {
    let side = |entity: u64, direction: Direction| -> Result<Vec<Relation>> {
        if entity == subject {
            return Ok(facts.iter().filter(|n| n.direction == direction).map(|n| n.relation.clone()).collect());
        }
        transitive_side(snap, part, entity, direction, when)
    };
    let mut derived = derive::around(subject, facts);
    derived.extend(derive::chains(subject, |e| side(e, Direction::Outbound))?);
    derived.extend(derive::chains_into(subject, |e| side(e, Direction::Inbound))?);
    let mut stated: HashSet<(u64, u64, String)> =
        facts.iter().map(|n| (n.relation.from, n.relation.to, derive::rule_key(&n.relation.rel_type))).collect();
    derived.retain(|d| stated.insert((d.from, d.to, derive::rule_key(&d.rel_type))));
    Ok(derived)
}

/// Each fact of a reply by what it says.
fn said(facts: &[Value]) -> Vec<String> {
    facts
        .iter()
        .map(|f| format!("{} {} {} {} {}", f["id"], f["subject"], f["relation"], f["object"], f["derived"]))
        .collect()
}

fn writes(edges: &[Edge]) -> Vec<Value> {
    edges
        .iter()
        .filter(|(hub, a, b, _, _)| *hub < 2 || a != b)
        .map(|&(hub, a, b, t, years)| {
            let (from, to) = match hub {
                0 => ("Hub", OTHERS[a]),
                1 => (OTHERS[a], "Hub"),
                _ => (OTHERS[a], OTHERS[b]),
            };
            let attributes = years.map_or_else(
                || json!({}),
                |(from, len)| json!({"valid_from": format!("{}-01-01", 2020 + u16::from(from)), "valid_to": format!("{}-01-01", 2020 + u16::from(from + len))}),
            );
            json!({"source": from, "target": to, "type": TYPES[t], "attributes": attributes})
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn a_hubs_recall_answers_as_the_previous_reading_did(
        batches in prop::collection::vec(prop::collection::vec(edge(), 1..24), 1..4),
        k in 1..9usize,
    ) {
        let (_dir, store, part) = fresh();
        for (i, batch) in batches.iter().enumerate() {
            // Several facts in one call share their time: their order is by id.
            let body = json!({"facts": {"relations": writes(batch)}});
            call(&store, &caller(T + i64::try_from(i).unwrap()), "remember", &body).unwrap();
        }
        let snap = store.snapshot().unwrap();
        let Some(hub) = entity_by_name(&snap, &part, "Hub").unwrap() else { return Ok(()) };
        // Read as the verb reads now: what is true now, some facts' years long past.
        let now = caller(T + 100);
        let when = When::of_request(None, None, now.now);
        let facts = live_neighbours(&snap, &part, hub.id, &when).unwrap();
        let expected = previous_derived(&snap, &part, (hub.id, &facts), &when).unwrap();
        let mut unbounded = usize::MAX;
        prop_assert_eq!(&derived_of(&snap, &part, hub.id, &facts, &when, &mut unbounded).unwrap(), &expected);

        // Through the verb: its own facts newest first (ties by id, newest first), then the
        // derived ones; the pages of `k` concatenate to the one page of them all.
        let all = call(&store, &now, "recall", &json!({"subject": "Hub", "k": 1000})).unwrap();
        let listed = all["facts"].as_array().unwrap();
        let mut ranked: Vec<&Relation> = facts.iter().map(|n| &n.relation).collect();
        ranked.sort_by(|a, b| b.recorded_at.cmp(&a.recorded_at).then(b.id.cmp(&a.id)));
        let ids: Vec<Value> = ranked.iter().map(|r| wire::id(r.id)).collect();
        prop_assert_eq!(listed.iter().take(ids.len()).map(|f| f["id"].clone()).collect::<Vec<_>>(), ids);
        prop_assert_eq!(listed.len(), facts.len() + expected.len());
        let (mut paged, mut cursor, mut left) = (Vec::new(), Value::Null, listed.len());
        loop {
            let body = json!({"subject": "Hub", "k": k, "cursor": cursor});
            let page = call(&store, &now, "recall", &body).unwrap();
            let shown = page["facts"].as_array().unwrap();
            left -= shown.len();
            prop_assert_eq!(&page["omitted"], &json!(left));
            paged.extend(shown.iter().cloned());
            cursor = page["next"].clone();
            if cursor.is_null() {
                break;
            }
        }
        prop_assert_eq!(said(&paged), said(listed));
    }
}
