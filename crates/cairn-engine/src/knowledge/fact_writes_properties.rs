//! Property test of a fact's attribute writes kept apart (`fact_writes.rs`): over random relate
//! histories of one subject (attributes said with and without a start, earlier starts, `replaces`
//! that end a fact and restore it), every record reads at every instant as its whole list folds
//! (a read past the last write takes the record's attributes instead: `Kept::present`), the write
//! a next call would append is the one the whole list gives, and the store answers recalls at any
//! `as_of`/`valid_at`, export and history as it does once rewritten the way a store written
//! before kept its lists (in its records) and moved out again: the old layout is the reference.

use super::fact_attribute_time::{WritesIn, read_at, with_write};
use super::fact_writes::{Kept, first};
use super::fact_writes_tests::{answers, to_old_layout};
use super::graph::Relation;
use super::recall::When;
use super::records::decode;
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, verb};
use super::trees::REL;
use super::valid::instant;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const DAY: i64 = 86_400_000;
/// Starts a call may state: none, dates before and among the calls' times.
const STARTS: [Option<&str>; 5] =
    [None, Some("2019-01-01"), Some("2020-06-01"), Some("2021-01-01"), Some("2024-06-01")];
const OBJECTS: [&str; 2] = ["Cairn", "Rust"];

/// One call: to which object, the status and lead it sets (if any), the start it states,
/// whether it `replaces`, and how many days after the call before it comes.
type Step = (usize, Option<u8>, Option<u8>, usize, bool, i64);

fn step() -> impl Strategy<Value = Step> {
    (
        0..OBJECTS.len(),
        prop::option::of(0..3u8),
        prop::option::weighted(0.3, 0..2u8),
        0..STARTS.len(),
        prop::bool::weighted(0.2),
        0..3i64,
    )
}

fn body((to, status, lead, start, replaces, _): &Step) -> Value {
    let mut attributes = Map::new();
    attributes.extend(status.map(|s| ("status".to_owned(), json!(format!("s{s}")))));
    attributes.extend(lead.map(|l| ("lead".to_owned(), json!(format!("l{l}")))));
    attributes.extend(STARTS[*start].map(|s| ("valid_from".to_owned(), json!(s))));
    json!({"from": "Ann", "to": OBJECTS[*to], "type": "works_on", "replaces": replaces, "attributes": attributes})
}

/// `rel` with its `Kept` saying nothing of order, so every read folds its whole list.
fn folding(rel: &Relation) -> Relation {
    Relation { writes: rel.writes.map(|k| Kept { last: None, ..k }), ..rel.clone() }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn writes_kept_apart_answer_as_the_whole_list_and_the_old_layout_do(
        steps in prop::collection::vec(step(), 1..12),
        copies in any::<bool>(),
    ) {
        let (_dir, store, part) = fresh();
        let mut now = TODAY - 40 * DAY;
        let mut times = vec![now - 1];
        for s in &steps {
            now += s.5 * DAY + 1;
            let reply = verb(&store, &caller(&part, now), "relate", &body(s)).unwrap();
            prop_assert!(reply.get("error").is_none(), "{}", reply);
            times.push(now);
        }
        let snap = store.snapshot().unwrap();
        let instants: Vec<i64> = times.iter().copied().chain(STARTS.iter().flatten().map(|s| instant(s).unwrap())).collect();
        for kv in snap.prefix(REL, part.prefix()).unwrap() {
            let rel: Relation = decode(&kv.unwrap().1, "relation").unwrap();
            for as_of in times.iter().copied().map(Some).chain([None]) {
                for valid_at in instants.iter().copied().map(Some).chain([None]) {
                    let when = When::of_request(as_of, valid_at, now);
                    let (mut fast, mut slow) = (rel.clone(), folding(&rel));
                    WritesIn::fill(&snap, &part, &mut fast, Some(&when)).unwrap();
                    WritesIn::fill(&snap, &part, &mut slow, Some(&when)).unwrap();
                    read_at(&mut fast, &when);
                    read_at(&mut slow, &when);
                    prop_assert_eq!(&fast.attributes, &slow.attributes, "record {} at {:?}", rel.id, when);
                }
            }
            if rel.ended_at.is_none() && rel.version_of.is_none() {
                let whole = first(&snap, &part, rel.id, u32::MAX).unwrap();
                for start in STARTS {
                    let mut sent = Map::new();
                    sent.insert("status".into(), json!("s1"));
                    sent.extend(start.map(|s| ("valid_from".to_owned(), json!(s))));
                    let mut list = || Ok(whole.clone());
                    let fast = with_write(&rel, &sent, now + 1, &mut list).unwrap();
                    let slow = with_write(&folding(&rel), &sent, now + 1, &mut list).unwrap();
                    prop_assert_eq!(fast, slow, "record {} from {:?}", rel.id, start);
                }
            }
        }
        let before = answers(&store, &part, &times);
        to_old_layout(&store, copies);
        prop_assert_eq!(answers(&store, &part, &times), before);
    }
}
