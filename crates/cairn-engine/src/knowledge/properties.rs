//! Property tests over random sequences of knowledge writes: a forgotten subject never comes back
//! through recall, context or full text unless it is asserted again, and every derived fact rests
//! on stored relations the read sees and holds exactly where all of them hold.

use super::recall::sees;
use super::testing::{assertion, fresh};
use super::trees::REL;
use super::valid::{bound, instant};
use super::{
    Derived, Forgot, ItemKind, Partition, Recall, Relation, Rule, When, context, entity_by_name, forget_subject,
    recall, relate, remember_text,
};
use crate::fts;
use crate::snapshot::Snapshot;
use proptest::prelude::*;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt::Write as _;

const NAMES: [&str; 5] = ["Priya Raman", "Acme", "Berlin", "Jonas Weber", "Globex"];
const TYPES: [&str; 4] = ["works_at", "located_in", "parent_of", "married_to"];

/// A relation's valid interval in years from 2020 (`valid_from`, `valid_to`), either end open.
type Years = (Option<u8>, Option<u8>);

#[derive(Debug, Clone)]
enum Step {
    Relate(usize, usize, usize, bool, Years),
    Remember(Vec<usize>, u8),
    Forget(usize),
}

fn years() -> impl Strategy<Value = Years> {
    (prop::option::of(0..5u8), prop::option::of(0..5u8)).prop_map(|(from, to)| match (from, to) {
        (Some(a), Some(b)) if b < a => (Some(b), Some(a)),
        other => other,
    })
}

fn interval((from, to): Years) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, year) in [("valid_from", from), ("valid_to", to)] {
        if let Some(y) = year {
            out.insert(key.into(), Value::String(format!("{}-01-01", 2020 + u32::from(y))));
        }
    }
    out
}

/// The version of stored fact `id` a read at `when` sees, as it reads it (`live_neighbours`).
fn seen_by(snap: &Snapshot, part: &Partition, id: u64, when: &When) -> Option<Relation> {
    snap.prefix(REL, part.prefix())
        .unwrap()
        .map(|item| serde_json::from_slice::<Relation>(&item.unwrap().1).unwrap())
        .find(|r| (r.id == id || r.version_of == Some(id)) && sees(r, when))
        .map(|mut r| {
            r.valid_to = r.valid_to_at(when.as_of).map(str::to_owned);
            r.ended_at = r.ended_at.filter(|&end| when.as_of.is_none_or(|t| end <= t));
            r
        })
}

/// Checks `d`, derived by a read at `when`: every fact it rests on is stored and seen by that
/// read, and it holds exactly where all of them hold (the latest start, the earliest end; for a
/// chain a non-empty interval; the read's instant in it), known since the last of them was
/// recorded.
fn check_derived(snap: &Snapshot, part: &Partition, d: &Derived, when: &When) -> Result<(), TestCaseError> {
    let mut basis = Vec::new();
    for id in &d.basis {
        let rel = seen_by(snap, part, *id, when);
        prop_assert!(rel.is_some(), "derived fact {d:?} rests on relation {id}, not stored or not seen at {when:?}");
        basis.extend(rel);
    }
    if when == &When::default() {
        prop_assert!(basis.iter().all(|r| r.ended_at.is_none()), "a live read derives from live facts: {d:?}");
    }
    let start = basis.iter().filter_map(Relation::valid_start).max();
    let end = basis.iter().filter_map(|r| r.valid_end(None)).min();
    let shown = (d.span.valid_from.as_deref().and_then(bound), d.span.valid_to.as_deref().and_then(bound));
    prop_assert_eq!(shown, (start, end), "{:?} is not the meet of {:?}", d, basis);
    // A chain holds somewhere (a single fact's reading has its interval, empty or not).
    if let (Some(from), Some(to), Rule::Transitive) = (start, end, d.rule) {
        prop_assert!(from < to, "derived from facts never true together: {d:?}");
    }
    if let Some(at) = when.valid_instant() {
        prop_assert!(start.is_none_or(|s| s <= at) && end.is_none_or(|e| at < e), "{d:?} does not hold at {at}");
    }
    prop_assert_eq!(Some(d.span.recorded_at), basis.iter().map(|r| r.recorded_at).max(), "{:?}", d);
    Ok(())
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..NAMES.len(), 0..NAMES.len(), 0..TYPES.len(), any::<bool>(), years())
            .prop_map(|(a, b, t, r, y)| Step::Relate(a, b, t, r, y)),
        (prop::collection::vec(0..NAMES.len(), 1..3), any::<u8>()).prop_map(|(n, w)| Step::Remember(n, w)),
        (0..NAMES.len()).prop_map(Step::Forget),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn forgotten_stays_forgotten_and_derived_facts_rest_on_stored_ones(steps in prop::collection::vec(step(), 1..20)) {
        let (_dir, store, part) = fresh();
        // Forgotten entities (until asserted again), and forgotten names no stored text mentions
        // any more (until a new text does: that is new memory, not a leftover).
        let mut gone: BTreeSet<usize> = BTreeSet::new();
        let mut unquoted: BTreeSet<usize> = BTreeSet::new();
        for (i, s) in steps.into_iter().enumerate() {
            let now = i64::try_from(i).unwrap() + 1;
            let p = part.clone();
            match s {
                Step::Relate(a, b, t, replaces, years) if a != b => {
                    let attrs = interval(years);
                    store.write(move |tx| relate(tx, &p, super::Assertion { replaces, ..assertion(NAMES[a], NAMES[b], TYPES[t], &attrs, "a") }, now)).unwrap();
                    for n in [a, b] {
                        gone.remove(&n);
                        unquoted.remove(&n);
                    }
                }
                Step::Relate(..) => {}
                Step::Remember(names, w) => {
                    for n in &names {
                        unquoted.remove(n);
                    }
                    let text = names.iter().fold(String::new(), |mut t, &n| {
                        let _ = write!(t, "{} met the team about plan{w}. ", NAMES[n]);
                        t
                    });
                    store.write(move |tx| remember_text(tx, &p, &text, None, None, now)).unwrap();
                }
                Step::Forget(n) => {
                    let (f, _) = store.write(move |tx| forget_subject(tx, &p, NAMES[n], now)).unwrap();
                    if matches!(f, Forgot::Forgotten { .. }) {
                        gone.insert(n);
                        unquoted.insert(n);
                    }
                }
            }
            let snap = store.snapshot().unwrap();
            for &n in &gone {
                prop_assert!(entity_by_name(&snap, &part, NAMES[n]).unwrap().is_none(), "{} came back", NAMES[n]);
                let c = context(&snap, &part, NAMES[n], 2, 20).unwrap();
                prop_assert!(c.seeds.is_empty(), "{} seeds a context", NAMES[n]);
            }
            for &n in &unquoted {
                let c = context(&snap, &part, NAMES[n], 2, 20).unwrap();
                for item in &c.items {
                    prop_assert!(!item.text.contains(NAMES[n]), "{} is quoted: {}", NAMES[n], item.text);
                }
                prop_assert!(fts::search(&snap, part.raw(), NAMES[n], 20).unwrap().is_empty(), "full text still finds {}", NAMES[n]);
            }
            // Every derived fact, shown by context or recall, read live, at a valid instant, as of
            // an earlier write, or both.
            let mid = (now + 1) / 2;
            let at = |year: &str| instant(&format!("{year}-06-01"));
            let whens = [
                When::default(),
                When { valid_at: at("2019"), ..When::default() },
                When { valid_at: at("2021"), ..When::default() },
                When { valid_at: at("2023"), ..When::default() },
                When { valid_at: at("2025"), ..When::default() },
                When { as_of: Some(mid), ..When::default() },
                When { as_of: Some(mid), valid_at: at("2022"), ..When::default() },
            ];
            for name in NAMES {
                let context_derived: Vec<Derived> = context(&snap, &part, name, 2, 20)
                    .unwrap()
                    .items
                    .into_iter()
                    .filter_map(|i| match i.kind { ItemKind::Derived { fact } => Some(fact), _ => None })
                    .collect();
                for d in &context_derived {
                    check_derived(&snap, &part, d, &When::default())?;
                }
                for when in &whens {
                    let mut derived = Vec::new();
                    if let Recall::Answered { subject, derived: recalled, .. } = recall(&snap, &part, name, when).unwrap() {
                        derived.extend(recalled);
                        let own = std::collections::HashMap::from([(subject.id, super::recall::live_neighbours(&snap, &part, subject.id, when).unwrap())]);
                        derived.extend(super::context_derived::from_seeds(&snap, &part, &[subject.id], &own, when).unwrap().into_iter().map(|(d, _)| d));
                    }
                    for d in &derived {
                        check_derived(&snap, &part, d, when)?;
                    }
                }
            }
        }
        prop_assert!(store.check().unwrap().ok);
    }
}

/// Words for generated texts: accents, emoji, CJK and combining marks, so code-point offsets
/// differ from byte and UTF-16 offsets.
const WORDS: [&str; 8] = ["met", "Zoë", "🎉", "東京", "e\u{301}té", "the", "plan", "Ünal"];

fn sentence() -> impl Strategy<Value = (usize, usize, Vec<usize>)> {
    (0..NAMES.len(), 0..NAMES.len(), prop::collection::vec(0..WORDS.len(), 0..6))
}

fn iso_ms_of(v: &serde_json::Value) -> Option<i64> {
    // Times in replies are `1970-01-01T00:00:00.mmmZ` here (the test clock is small).
    let s = v.as_str()?;
    let (secs, ms) = s.strip_prefix("1970-01-01T00:")?.strip_suffix('Z')?.split_once('.')?;
    let (m, s) = secs.split_once(':')?;
    Some(m.parse::<i64>().ok()? * 60_000 + s.parse::<i64>().ok()? * 1000 + ms.parse::<i64>().ok()?)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every citation a verb returns slices the stored document exactly, and a read `as_of`
    /// before a write never sees what it wrote.
    #[test]
    fn citations_slice_the_stored_text_and_as_of_hides_later_writes(
        calls in prop::collection::vec(prop::collection::vec(sentence(), 1..4), 1..6),
        probe in 0i64..8,
    ) {
        use super::testing::{assert_citations_slice, call, caller};
        use serde_json::json;
        let (_dir, store, part) = fresh();
        for (i, sentences) in calls.iter().enumerate() {
            let now = (i64::try_from(i).unwrap() + 1) * 1000;
            let mut text = String::new();
            let mut relations = Vec::new();
            for (a, b, words) in sentences {
                let filler: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
                let _ = write!(text, "{} {} {}. ", NAMES[*a], filler.join(" "), NAMES[*b]);
                if a != b {
                    relations.push(json!({"source": NAMES[*a], "target": NAMES[*b], "type": TYPES[(a + b) % TYPES.len()]}));
                }
            }
            let body = json!({"content": text, "source": format!("doc{i}"), "facts": {"relations": relations}});
            call(&store, &caller(now), "remember", &body).unwrap();
        }
        let as_of = probe * 1000 + 500;
        for name in NAMES {
            let r = call(&store, &caller(99_000), "recall", &json!({"subject": name})).unwrap();
            assert_citations_slice(&store, &part, &r);
            let c = call(&store, &caller(99_000), "context", &json!({"question": format!("what about {name}?")})).unwrap();
            assert_citations_slice(&store, &part, &c);
            let then = call(&store, &caller(99_000), "recall", &json!({"subject": name, "as_of": as_of})).unwrap();
            for f in then["facts"].as_array().unwrap() {
                prop_assert!(iso_ms_of(&f["recorded_at"]).unwrap() <= as_of, "as_of {as_of} saw {f}");
            }
            let ctx = call(&store, &caller(99_000), "context", &json!({"question": name, "as_of": as_of})).unwrap();
            for item in ctx["items"].as_array().unwrap() {
                let at = item.get("recorded_at").or_else(|| item["citation"]["source"].get("ingested_at"));
                if let Some(t) = at.and_then(iso_ms_of) {
                    prop_assert!(t <= as_of, "as_of {as_of} saw {item}");
                }
            }
            if as_of < 1000 {
                prop_assert_ne!(then["state"].clone(), json!("answered"), "nothing was known before the first write");
            }
        }
    }
}
