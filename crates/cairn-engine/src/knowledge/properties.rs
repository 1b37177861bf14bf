//! Property tests over random sequences of knowledge writes: a forgotten subject never comes back
//! through recall, context or full text unless it is asserted again, and every derived fact rests
//! on stored, live relations.

use super::testing::{assertion, fresh};
use super::trees::REL;
use super::{
    Derived, Forgot, ItemKind, Recall, Relation, When, context, entity_by_name, forget_subject, recall, relate,
    remember_text,
};
use crate::fts;
use proptest::prelude::*;
use serde_json::Map;
use std::collections::BTreeSet;
use std::fmt::Write as _;

const NAMES: [&str; 5] = ["Priya Raman", "Acme", "Berlin", "Jonas Weber", "Globex"];
const TYPES: [&str; 4] = ["works_at", "located_in", "parent_of", "married_to"];

#[derive(Debug, Clone)]
enum Step {
    Relate(usize, usize, usize, bool),
    Remember(Vec<usize>, u8),
    Forget(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..NAMES.len(), 0..NAMES.len(), 0..TYPES.len(), any::<bool>())
            .prop_map(|(a, b, t, r)| Step::Relate(a, b, t, r)),
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
                Step::Relate(a, b, t, replaces) if a != b => {
                    store.write(move |tx| relate(tx, &p, super::Assertion { replaces, ..assertion(NAMES[a], NAMES[b], TYPES[t], &Map::new(), "a") }, now)).unwrap();
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
            // Every derived fact, shown by context or recall.
            for name in NAMES {
                let mut derived: Vec<Derived> = context(&snap, &part, name, 2, 20)
                    .unwrap()
                    .items
                    .into_iter()
                    .filter_map(|i| match i.kind { ItemKind::Derived { fact } => Some(fact), _ => None })
                    .collect();
                if let Recall::Answered { derived: recalled, .. } = recall(&snap, &part, name, &When::default()).unwrap() {
                    derived.extend(recalled);
                }
                for d in derived {
                    for id in &d.basis {
                        let bytes = snap.get(REL, &part.key(&[&id.to_be_bytes()])).unwrap();
                        prop_assert!(bytes.is_some(), "derived fact rests on missing relation {id}");
                        let rel: Relation = serde_json::from_slice(&bytes.unwrap()).unwrap();
                        prop_assert!(rel.ended_at.is_none(), "derived fact rests on ended relation {id}");
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
