//! Property tests over random sequences of knowledge writes: a forgotten subject never comes back
//! through recall, context or full text unless it is asserted again, and every derived fact rests
//! on stored, live relations.

use super::testing::{assertion, fresh};
use super::trees::REL;
use super::{Forgot, Recall, Relation, When, context, entity_by_name, forget_subject, recall, relate, remember_text};
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
            for name in NAMES {
                if let Recall::Answered { derived, .. } = recall(&snap, &part, name, &When::default()).unwrap() {
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
        }
        prop_assert!(store.check().unwrap().ok);
    }
}
