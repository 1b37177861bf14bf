//! The reach index (`reach_index.rs`): reads of now through it answer exactly as reads of the
//! whole adjacency lists do, after any sequence of writes; the index agrees with the records
//! (`Store::check`); and a subject's ended edges cost a read of now nothing. Pages are the
//! store's count (`Store::pages_read`), never a clock.

use super::reach_index_build;
use super::recall::{When, live_neighbours};
use super::testing::{assertion, call, caller, fresh};
use super::trees::REACH;
use super::{Assertion, Partition, entity_by_name, forget_subject, relate};
use crate::store::{Store, StoreOptions};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const NAMES: [&str; 4] = ["Build", "Passing", "Failing", "Acme"];
const TYPES: [&str; 3] = ["has_status", "employs", "married_to"];

/// An instant `years` after 2020-01-01 (ms).
fn year(years: u8) -> i64 {
    super::valid::instant(&format!("{}-01-01", 2020 + u32::from(years))).unwrap()
}

#[derive(Debug, Clone)]
enum Step {
    /// from, to, type, `replaces`, `valid_from` and `valid_to` in years from 2020.
    Relate(usize, usize, usize, bool, Option<u8>, Option<u8>),
    Forget(usize),
}

fn step() -> impl Strategy<Value = Step> {
    let year = || prop::option::of(0..8u8);
    prop_oneof![
        6 => (0..NAMES.len(), 0..NAMES.len(), 0..TYPES.len(), any::<bool>(), year(), year())
            .prop_map(|(a, b, t, r, from, to)| Step::Relate(a, b, t, r, from, to)),
        1 => (0..NAMES.len()).prop_map(Step::Forget),
    ]
}

/// Runs `step` at `now` (ms) on `store`; what it answered, for comparison.
fn run(store: &Store, part: &Partition, step: &Step, now: i64) -> String {
    let p = part.clone();
    match *step {
        // Every verb refuses a relation from an entity to itself.
        Step::Relate(a, b, ..) if a == b => String::new(),
        Step::Relate(a, b, t, replaces, from, to) => {
            let mut attrs = Map::new();
            for (key, y) in [("valid_from", from), ("valid_to", to)] {
                if let Some(y) = y {
                    attrs.insert(key.into(), Value::String(format!("{}-01-01", 2020 + u32::from(y))));
                }
            }
            let done = store.write(move |tx| {
                relate(tx, &p, Assertion { replaces, ..assertion(NAMES[a], NAMES[b], TYPES[t], &attrs, "a") }, now)
            });
            // The transaction number is left out: the indexed store had one more, its build.
            format!("{:?}", done.map(|(related, _)| related))
        }
        Step::Forget(n) => {
            format!("{:?}", store.write(move |tx| forget_subject(tx, &p, NAMES[n], now)).map(|(f, _)| f))
        }
    }
}

/// What each name's relations read at every instant the steps name, and now, in `store`.
fn reads(store: &Store, part: &Partition, now: i64) -> Vec<String> {
    let snap = store.snapshot().unwrap();
    let mut out = Vec::new();
    for name in NAMES {
        let Some(e) = entity_by_name(&snap, part, name).unwrap() else { continue };
        let instants = (0..9).map(|y| When { valid_at: Some(year(y)), ..When::default() });
        for when in instants.chain([When::of_request(None, None, now), When::of_request(None, None, year(3))]) {
            out.push(format!("{name} {when:?}: {:?}", live_neighbours(&snap, part, e.id, &when).unwrap()));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Two stores take the same writes; one reads through the reach index, the other, never
    /// marked built, reads whole adjacency lists as before the index. Every `relate` (its plan
    /// read through the index under `replaces`) and every read of an instant answer alike, and
    /// the index holds exactly the keys the records call for.
    #[test]
    fn reads_through_the_index_answer_as_whole_lists_do(steps in prop::collection::vec(step(), 1..40)) {
        let (_a, indexed, part) = fresh();
        let (_b, whole, _) = fresh();
        indexed.write(reach_index_build::build).unwrap();
        for (i, s) in steps.iter().enumerate() {
            // Calls a year apart from 2020 on, so some dates given are past and some ahead.
            let now = year(0) + i64::try_from(i).unwrap() * 31_557_600_000 / 4;
            prop_assert_eq!(run(&indexed, &part, s, now), run(&whole, &part, s, now), "step {} {:?}", i, s);
            prop_assert_eq!(reads(&indexed, &part, now), reads(&whole, &part, now), "after step {} {:?}", i, s);
        }
        prop_assert!(whole.snapshot().unwrap().get(REACH, &[]).unwrap().is_none(), "never built");
        let report = indexed.check().unwrap();
        prop_assert!(report.ok, "{:?}", report.problems);
    }
}

/// A store whose reads are counted (no checkpoint while they are), where `Build`'s status was
/// replaced `changes` times, a day apart, and `Other`'s ten times.
fn replaced(changes: usize) -> (tempfile::TempDir, Store, i64) {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    let mut now = super::testing::TODAY;
    for (subject, n) in [("Build", changes), ("Other", 10)] {
        for i in 0..n {
            now += 86_400_000;
            let body =
                json!({"from": subject, "to": format!("{subject} status {i}"), "type": "has_status", "replaces": true});
            let reply = call(&store, &caller(now), "relate", &body).unwrap();
            assert!(reply.get("error").is_none(), "{reply}");
        }
    }
    (dir, store, now + 86_400_000)
}

/// The reply of `verb` with `body` at `now`, and the pages it read.
fn counted(store: &Store, verb: &str, body: &Value, now: i64) -> (Value, u64) {
    let before = store.pages_read();
    let reply = call(store, &caller(now), verb, body).unwrap();
    (reply, store.pages_read() - before)
}

#[test]
fn ended_edges_cost_a_read_of_now_and_a_replaces_nothing() {
    let (_dir, store, now) = replaced(1_500);
    let mut pages = Vec::new();
    for subject in ["Build", "Other"] {
        let (reply, recall) = counted(&store, "recall", &json!({"subject": subject}), now);
        assert_eq!(reply["facts"].as_array().unwrap().len(), 1, "{reply}");
        let body = json!({"from": subject, "to": "Done", "type": "has_status", "replaces": true});
        let (reply, replaces) = counted(&store, "relate", &body, now);
        assert_eq!(reply["ended"].as_array().unwrap().len(), 1, "{reply}");
        pages.push((subject, recall, replaces));
    }
    eprintln!("pages (subject, recall, replaces): {pages:?}");
    let [(_, build_recall, build_replaces), (_, other_recall, other_replaces)] = pages[..] else { unreachable!() };
    // Each of 1,500 ended edges read would cost pages of its own; a few deeper trees cost a few.
    assert!(
        build_recall <= other_recall + 10,
        "recall: {build_recall} pages at 1,500 ended edges, {other_recall} at 10"
    );
    assert!(build_replaces <= other_replaces + 10, "replaces: {build_replaces} pages, {other_replaces} at 10");
    // A read as of an earlier time still sees the history.
    let then = now - 86_400_000 * 1_000;
    let (reply, _) = counted(&store, "recall", &json!({"subject": "Build", "as_of": then}), now);
    assert_eq!(reply["facts"].as_array().unwrap().len(), 1, "{reply}");
    assert_ne!(reply["facts"][0]["object"], "Build status 1499", "{reply}");
}

#[test]
fn a_store_written_before_the_index_gets_it_built_once() {
    let (_dir, store, now) = replaced(20);
    // As a store written before the index: no key, no marker.
    store
        .write(|tx| {
            tx.delete_prefix(REACH, &[])?;
            Ok(())
        })
        .unwrap();
    assert!(store.check().unwrap().ok, "an index not built is not checked");
    let (reply, _) = counted(&store, "recall", &json!({"subject": "Build"}), now);
    assert_eq!(reply["facts"][0]["object"], "Build status 19", "{reply}");
    let snap = store.snapshot().unwrap();
    assert!(snap.get(REACH, &[]).unwrap().is_some(), "built by the verb");
    assert!(snap.prefix(REACH, &[0]).unwrap().next().is_some(), "filed");
    assert!(store.check().unwrap().ok);
    // A key lost or left over is reported.
    let stray = Partition::new("local", "u1", "default").unwrap().key(&[b"stray"]);
    store.write(move |tx| tx.put(REACH, &stray, &[])).unwrap();
    let report = store.check().unwrap();
    assert!(!report.ok && report.problems[0].what.contains("stray"), "{:?}", report.problems);
}
