//! Property test of the adjacency a read without `as_of` takes (`present_adjacency.rs`): over
//! random histories of `relate` calls (revisions, restores, `replaces`, starts and ends in the
//! past, facts said from the other end, attributes), at instants before, inside and after them,
//! the records a recall or a context's walk reads leaving out the copies filed apart are the ones
//! it sees reading both trees (the read before, kept here as the reference), in the same order;
//! and the recall and context replies are those of the same store with every copy filed in `k.adj`
//! (as a store written before `k.adj_past` files them).

use super::graph::{Direction, adjacency, entity_by_name, neighbour, neighbours};
use super::past_adjacency_tests::as_written_before;
use super::present_adjacency::adjacency_at;
use super::recall::{When, live_neighbours, seen_at, sees};
use super::relate_plan_properties::{BOUNDS, TARGETS, call, relate_all};
use super::testing::{self, TODAY, fresh};
use super::trees::{IN, OUT, adj_prefix, adj_type_prefix};
use super::valid::instant;
use crate::snapshot::Snapshot;
use crate::store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};

const DAY: i64 = 86_400_000;

/// The instants read at: the drawn bounds, and days around the calls (one a day from `TODAY`).
fn instants() -> Vec<i64> {
    let days = [-1, 0, 3, 10, 20, 40].map(|d| TODAY + d * DAY);
    BOUNDS.iter().flatten().filter_map(|b| instant(b)).chain(days).collect()
}

/// The reads without `as_of`: a plain read at each instant, `valid_at` each instant read later,
/// and an engine caller's read of the live relations.
fn whens() -> Vec<When> {
    let late = Some(TODAY + 40 * DAY);
    let plain = instants().into_iter().map(|t| When { as_of: None, valid_at: None, now: Some(t) });
    let valid = instants().into_iter().map(move |t| When { as_of: None, valid_at: Some(t), now: late });
    plain.chain(valid).chain([When::default()]).collect()
}

/// The edges of `list` a read at `when` sees, in list order.
fn seen(snap: &Snapshot, list: Vec<(u64, Direction)>, when: &When) -> Vec<(u64, Direction)> {
    let part = testing::caller(0).part;
    let sees_edge =
        |&(id, d): &(u64, Direction)| neighbour(snap, &part, id, d).unwrap().is_some_and(|n| sees(&n.relation, when));
    list.into_iter().filter(sees_edge).collect()
}

/// The replies of the recalls and contexts on the history's entities at each instant.
fn replies(store: &Store) -> Vec<Value> {
    let mut out = Vec::new();
    for now in instants() {
        let at = testing::caller(now);
        for name in TARGETS {
            out.push(testing::call(store, &at, "recall", &json!({"subject": name, "k": 100})).unwrap());
        }
        out.push(
            testing::call(store, &at, "recall", &json!({"subject": "Subject", "valid_at": "2021-06-15"})).unwrap(),
        );
        for question in ["What about Subject?", "Is Subject the child of Ana?", "Bruno and Chen and Subject?"] {
            out.push(testing::call(store, &at, "context", &json!({"question": question, "hops": 2})).unwrap());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_present_read_without_the_copies_sees_what_it_saw_with_them(calls in prop::collection::vec(call(), 1..24)) {
        let (_dir, store, part) = fresh();
        let written = part.clone();
        store.write(move |tx| {
            relate_all(tx, &written, &calls);
            Ok(())
        }).unwrap();
        let snap = store.snapshot().unwrap();
        for name in TARGETS {
            let Some(entity) = entity_by_name(&snap, &part, name).unwrap().map(|e| e.id) else { continue };
            let mut prefixes = vec![adj_prefix(&part, entity)];
            for (dir, rel_type) in [(OUT, "child_of"), (IN, "child_of"), (OUT, "parent_of"), (IN, "parent_of")] {
                prefixes.push(adj_type_prefix(&part, entity, dir, rel_type));
            }
            for when in whens() {
                let every: Vec<_> = neighbours(&snap, &part, entity).unwrap().into_iter()
                    .filter_map(|n| seen_at(&snap, &part, n, &when).unwrap()).collect();
                prop_assert_eq!(live_neighbours(&snap, &part, entity, &when).unwrap(), every, "{} at {:?}", name, when);
                for prefix in &prefixes {
                    let both = adjacency(&snap, &part, entity, prefix).unwrap();
                    let read = adjacency_at(&snap, &part, entity, prefix, &when).unwrap();
                    // Fewer records, in the order of both trees': a walk ranking them keeps the same.
                    prop_assert!(read.iter().all(|e| both.contains(e)));
                    prop_assert!(read.windows(2).all(|w| both.iter().position(|e| *e == w[0]) < both.iter().position(|e| *e == w[1])));
                    prop_assert_eq!(seen(&snap, read, &when), seen(&snap, both, &when));
                }
            }
        }
        let filed_apart = replies(&store);
        as_written_before(&store);
        prop_assert_eq!(replies(&store), filed_apart);
    }
}
