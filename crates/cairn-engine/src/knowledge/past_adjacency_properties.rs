//! Property test of the copies filed apart (`past_adjacency.rs`): over random histories of
//! `relate` calls (revisions, restores, `replaces`, starts and ends in the past, facts said from
//! the other end under the mirror type), the plan of a further assertion made from the facts
//! alone, reading the copies only when `may_need_past` says they may count, is the plan made
//! from every stored record, down to the attributes it gives the assertion and a refusal.

use super::graph::{self, Assertion, Relation, Source};
use super::relate_plan::Plan;
use super::relate_plan_properties::{BOUNDS, TARGETS, attributes, call, relate_all};
use super::testing::{TODAY, fresh};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// A plan, with the attributes it gives the assertion, or its refusal.
type Planned = Result<(Plan<Relation>, Map<String, Value>), String>;

const DAY: i64 = 86_400_000;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_plan_from_the_facts_is_the_plan_from_every_record(
        calls in prop::collection::vec(call(), 1..32),
        (from, until, task, now) in (prop::option::of(0..BOUNDS.len()), prop::option::of(0..BOUNDS.len()), prop::option::of(0..3u8), 0..48i64),
    ) {
        let (_dir, store, part) = fresh();
        let (plans, _) = store.write(move |tx| {
            relate_all(tx, &part, &calls);
            let id = |tx: &mut crate::write::WriteTxn<'_>, name: &str| -> crate::error::Result<u64> {
                Ok(graph::entity_by_name_in(tx, &part, name)?.map_or(u64::MAX, |e| e.id))
            };
            let subject = id(tx, "Subject")?;
            let mut plans: Vec<(Planned, Planned)> = Vec::new();
            for name in &TARGETS[1..] {
                let target = id(tx, name)?;
                for (ends, rel_type) in [((subject, target), "child_of"), ((target, subject), "parent_of")] {
                    for replaces in [false, true] {
                        let asked = attributes(from, until, task);
                        let a = Assertion { from: "", to: "", rel_type, attributes: &asked, source: Source::Asserted { label: None }, agent: "claude", replaces, date: None };
                        let now = TODAY + now * DAY;
                        let mut planned = |every: bool| -> Planned {
                            let mut given = asked.clone();
                            graph::planned(tx, &part, ends, (&a, now), &mut given, every).map(|p| (p, given)).map_err(|e| e.to_string())
                        };
                        let facts = planned(false);
                        plans.push((facts, planned(true)));
                    }
                }
            }
            Ok(plans)
        }).unwrap();
        for (facts, every) in plans {
            prop_assert_eq!(facts, every);
        }
    }
}
