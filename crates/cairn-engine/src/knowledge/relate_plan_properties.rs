//! Property tests of `relate`'s plan over light views (`edge_view.rs`): over random histories of
//! a subject's edges (live, ended, shortened, mirrored, earlier versions, to itself, with
//! attributes and provenance the view skips), a view decoded from a stored record reads as the
//! whole record does now, and the plans of `replaces` and of a plain assertion made from the
//! views, read whole, are the plans made from the whole records, down to the attributes they give
//! the assertion. The second test stores its histories by `relate` calls and reads a fact's
//! versions as `relate` does (`fact_readings::stored_versions`), as views and as whole records.

use super::edge_view::{Edge, EdgeView};
use super::fact_readings::stored_versions;
use super::graph::{self, Assertion, Relation, Shortened, Source};
use super::records::{decode, encode};
use super::relate_plan::{Plan, plain, replace_in_valid_time};
use super::testing::{TODAY, fresh};
use super::valid::instant;
use crate::error::Error;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const SUBJECT: u64 = 1;
/// Spellings a stored or asserted bound may have: none, dates, an instant, and text that is no
/// date (read as unbounded).
pub(super) const BOUNDS: [Option<&str>; 6] =
    [None, Some("2020-01-01"), Some("2021-06-15"), Some("2022-01-01T12:00:00Z"), Some("2023-01-01"), Some("someday")];

fn bound(i: usize) -> Option<String> {
    BOUNDS[i].map(str::to_owned)
}

fn ms(date: &str) -> i64 {
    instant(date).unwrap()
}

/// Transaction times around the bounds (`ended_at`, `recorded_at`, the call's `now`).
fn time(i: usize) -> i64 {
    [ms("2019-01-01"), ms("2021-01-01"), ms("2022-01-01T12:00:00Z"), ms("2024-01-01")][i]
}

type Drawn = (u64, bool, usize, usize, Option<usize>, usize, Option<usize>, Option<u64>);

/// A stored edge of the subject's: to `target` (stored from it when `mirrored`; the subject itself
/// when `target` is 1), an earlier version of fact `version_of` when drawn, its bounds and times
/// drawn from the lists above, and fields the view skips.
fn edge(id: u64, (target, mirrored, from, to, ended, recorded, shortened, version_of): Drawn) -> Relation {
    let (a, b) = if mirrored { (target, SUBJECT) } else { (SUBJECT, target) };
    let mut attributes = Map::new();
    attributes.insert("note".into(), json!({"nested": [1, "two", {"three": null}], "text": "a \"quoted\" note"}));
    Relation {
        id,
        from: a,
        to: b,
        rel_type: if mirrored { "Parent_Of".into() } else { "child_of".into() },
        attributes,
        valid_from: bound(from),
        valid_to: bound(to),
        recorded_at: time(recorded),
        ended_at: ended.map(time),
        source: Source::Document { doc_id: id * 7, label: Some("notes".into()) },
        agent: "claude".into(),
        shortened: shortened.map(|i| Shortened { valid_to: bound(i) }),
        source_date: Some("2020-02-02".into()),
        version_of,
        attribute_writes: Vec::new(),
        writes_in: None,
        writes: None,
        also: Vec::new(),
    }
}

/// The plan made from the views of `records`' stored bytes, each edge it names read whole.
fn from_views<P>(records: &[Relation], plan: impl FnOnce(Vec<EdgeView>) -> P) -> P {
    let views = records.iter().map(|r| decode::<EdgeView>(&encode(r), "relation").unwrap()).collect();
    plan(views)
}

fn whole(records: &[Relation]) -> impl FnMut(EdgeView) -> crate::error::Result<Relation> + '_ {
    |view| Ok(records.iter().find(|r| r.id == view.id).unwrap().clone())
}

fn drawn() -> impl Strategy<Value = Drawn> {
    (
        1..5u64,
        any::<bool>(),
        0..BOUNDS.len(),
        0..BOUNDS.len(),
        prop::option::of(0..4usize),
        0..4usize,
        prop::option::of(0..BOUNDS.len()),
        prop::option::weighted(0.2, 10..18u64),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_plan_from_views_is_the_plan_from_whole_records(
        edges in prop::collection::vec(drawn(), 0..8),
        (to, from, until, now) in (2..6u64, 0..BOUNDS.len(), 0..BOUNDS.len(), 0..4usize),
    ) {
        let records: Vec<Relation> = edges.into_iter().enumerate().map(|(i, d)| edge(10 + i as u64, d)).collect();
        let now = time(now);
        for rel in &records {
            let view = decode::<EdgeView>(&encode(rel), "relation").unwrap();
            prop_assert_eq!((view.id, view.from, view.to, view.version_of), (rel.id, rel.from, rel.to, rel.version_of));
            prop_assert_eq!(&view.rel_type, &rel.rel_type);
            for e in [&view as &dyn ReadNow, rel as &dyn ReadNow] {
                prop_assert_eq!(e.start_now(), rel.valid_start());
                prop_assert_eq!(e.end_now(), rel.valid_end(None));
                for at in (0..4).map(time).chain(BOUNDS.iter().flatten().filter_map(|b| instant(b))) {
                    prop_assert_eq!(e.true_now(at), rel.valid_at(at, None));
                }
            }
        }
        let mut asserted = Map::new();
        asserted.extend(bound(from).map(|b| ("valid_from".to_owned(), Value::String(b))));
        asserted.extend(bound(until).map(|b| ("valid_to".to_owned(), Value::String(b))));

        let (mut mine, mut theirs) = (asserted.clone(), asserted.clone());
        let want: Plan<Relation> = replace_in_valid_time(&mut mine, records.clone(), to, now);
        let got = from_views(&records, |v| replace_in_valid_time(&mut theirs, v, to, now)).read_whole(whole(&records)).unwrap();
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(&theirs, &mine);

        let (mut mine, mut theirs) = (asserted.clone(), asserted);
        let want = plain(&mut mine, records.clone(), to, now).map_err(|e| e.to_string());
        let got = from_views(&records, |v| plain(&mut theirs, v, to, now))
            .and_then(|p| p.read_whole(whole(&records)))
            .map_err(|e| e.to_string());
        prop_assert_eq!(got, want);
        prop_assert_eq!(theirs, mine);
    }
}

/// `Edge`'s reading of time, object safe, so a view and a whole record are checked alike.
trait ReadNow {
    fn start_now(&self) -> Option<i64>;
    fn end_now(&self) -> Option<i64>;
    fn true_now(&self, at: i64) -> bool;
}

impl<T: Edge> ReadNow for T {
    fn start_now(&self) -> Option<i64> {
        self.start()
    }
    fn end_now(&self) -> Option<i64> {
        self.end()
    }
    fn true_now(&self, at: i64) -> bool {
        self.true_at(at)
    }
}

/// One `relate` call of a stored history, at day `day` after `TODAY`: from the subject to target
/// `to` (from `to` to the subject under the mirror type when `mirrored`; to itself when `to` is
/// 0), with `replaces`, a start and an end (indices into `BOUNDS`) and an attribute value when
/// drawn (said again with a new value, a fact keeps the version known before).
pub(super) type Call = (u64, bool, bool, Option<usize>, Option<usize>, Option<u8>);

pub(super) const TARGETS: [&str; 4] = ["Subject", "Ana", "Bruno", "Chen"];

pub(super) fn call() -> impl Strategy<Value = Call> {
    (
        0..4u64,
        any::<bool>(),
        prop::bool::weighted(0.3),
        prop::option::of(0..BOUNDS.len()),
        prop::option::weighted(0.3, 0..BOUNDS.len()),
        prop::option::of(0..3u8),
    )
}

/// Stores `calls` about "Subject", one a day from `TODAY`, each a `relate` (a refused one, an end
/// before its start, is part of the history like any other).
pub(super) fn relate_all(tx: &mut crate::write::WriteTxn<'_>, part: &crate::knowledge::Partition, calls: &[Call]) {
    const DAY: i64 = 86_400_000;
    for (day, &(to, mirrored, replaces, start, end, value)) in (0_i64..).zip(calls) {
        let attributes = attributes(start, end, value);
        let target = TARGETS[to as usize];
        let (a, b, rel_type) =
            if mirrored { (target, "Subject", "parent_of") } else { ("Subject", target, "child_of") };
        let source = Source::Asserted { label: None };
        let asserted = Assertion {
            from: a,
            to: b,
            rel_type,
            attributes: &attributes,
            source,
            agent: "claude",
            replaces,
            date: None,
        };
        let _ = graph::relate(tx, part, asserted, TODAY + day * DAY);
    }
}

/// Attributes of a call or assertion: a start, an end and a `task` value, each when drawn.
pub(super) fn attributes(from: Option<usize>, to: Option<usize>, task: Option<u8>) -> Map<String, Value> {
    let mut out = Map::new();
    out.extend(from.and_then(bound).map(|b| ("valid_from".to_owned(), Value::String(b))));
    out.extend(to.and_then(bound).map(|b| ("valid_to".to_owned(), Value::String(b))));
    out.extend(task.map(|t| ("task".to_owned(), json!(format!("task {t}")))));
    out
}

/// What a plan reads of an edge, with the attributes it gives the assertion, or its refusal.
type Planned = Result<(Plan<Relation>, Map<String, Value>), String>;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_plan_from_stored_views_is_the_plan_from_stored_records(
        calls in prop::collection::vec(call(), 1..24),
        (from, until, task, now) in (prop::option::of(0..BOUNDS.len()), prop::option::of(0..BOUNDS.len()), prop::option::of(0..3u8), 0..40i64),
    ) {
        const DAY: i64 = 86_400_000;
        let (_dir, store, part) = fresh();
        let ((views, wholes, plans), _) = store.write(move |tx| {
            relate_all(tx, &part, &calls);
            let id = |tx: &mut crate::write::WriteTxn<'_>, name: &str| -> crate::error::Result<u64> {
                Ok(graph::entity_by_name_in(tx, &part, name)?.map_or(u64::MAX, |e| e.id))
            };
            let subject = id(tx, "Subject")?;
            let (mut views, mut wholes, mut plans) = (Vec::new(), Vec::new(), Vec::new());
            for name in TARGETS {
                let to = id(tx, name)?;
                let seen: Vec<EdgeView> = stored_versions(tx, &part, (subject, to), "child_of")?;
                let whole: Vec<Relation> = stored_versions(tx, &part, (subject, to), "child_of")?;
                let asked = attributes(from, until, task);
                let now = TODAY + now * DAY;
                let planned = |plan: crate::error::Result<Plan<Relation>>, given: Map<String, Value>| -> Planned {
                    plan.map(|p| (p, given)).map_err(|e| e.to_string())
                };
                let (mut mine, mut theirs) = (asked.clone(), asked);
                let want = plain(&mut mine, whole.clone(), to, now);
                let got = plain(&mut theirs, seen.clone(), to, now).and_then(|p| {
                    p.read_whole(|v| graph::relation_in(tx, &part, v.id)?.ok_or_else(|| Error::corrupt(None, format!("relation {} is missing", v.id))))
                });
                plans.push((planned(got, theirs), planned(want, mine)));
                views.push(seen);
                wholes.push(whole);
            }
            Ok((views, wholes, plans))
        }).unwrap();
        for (seen, whole) in views.iter().zip(&wholes) {
            prop_assert_eq!(seen.len(), whole.len());
            for (view, rel) in seen.iter().zip(whole) {
                prop_assert_eq!((view.id, view.from, view.to, view.version_of), (rel.id, rel.from, rel.to, rel.version_of));
                prop_assert_eq!((&view.rel_type, &view.valid_from, &view.valid_to), (&rel.rel_type, &rel.valid_from, &rel.valid_to));
                prop_assert_eq!((view.recorded_at, view.ended_at), (rel.recorded_at, rel.ended_at));
            }
        }
        for (got, want) in plans {
            prop_assert_eq!(got, want);
        }
    }
}
