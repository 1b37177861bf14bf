//! Property test of `relate`'s plan over light views (`edge_view.rs`): over random histories of a
//! subject's edges (live, ended, shortened, mirrored, with attributes and provenance the view
//! skips), a view decoded from a stored record reads as the whole record does now, and the plans
//! of `replaces` and of a plain assertion made from the views, read whole, are the plans made
//! from the whole records, down to the attributes they give the assertion.

use super::edge_view::{Edge, EdgeView};
use super::graph::{Relation, Shortened, Source};
use super::records::{decode, encode};
use super::relate_plan::{Plan, plain, replace_in_valid_time};
use super::valid::instant;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const SUBJECT: u64 = 1;
/// Spellings a stored or asserted bound may have: none, dates, an instant, and text that is no
/// date (read as unbounded).
const BOUNDS: [Option<&str>; 6] =
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

type Drawn = (u64, bool, usize, usize, Option<usize>, usize, Option<usize>);

/// A stored edge of the subject's: to `target` (stored from it when `mirrored`), its bounds and
/// times drawn from the lists above, and fields the view skips.
fn edge(id: u64, (target, mirrored, from, to, ended, recorded, shortened): Drawn) -> Relation {
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
        version_of: None,
        attribute_writes: Vec::new(),
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
        2..5u64,
        any::<bool>(),
        0..BOUNDS.len(),
        0..BOUNDS.len(),
        prop::option::of(0..4usize),
        0..4usize,
        prop::option::of(0..BOUNDS.len()),
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
