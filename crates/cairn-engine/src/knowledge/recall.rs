//! Recall of one subject: find the entity a name means (exact, case-folded, a whole word of a
//! longer name, a near spelling — each saying how it matched), then every live relation touching
//! it, from both ends. Nothing is invented: a name that matches nothing is `NothingStored`, with
//! "did you mean" suggestions drawn from the same partition only.

use super::derive::{self, Derived};
use super::fact_attribute_time;
use super::graph::{self, Direction, Entity, Neighbour, neighbour};
use super::part::Partition;
use super::present_adjacency::adjacency_at;
use super::trees::{IN, OUT, adj_prefix, adj_type_prefix};
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;
use crate::text::{LookupOptions, MatchKind, NameIndex};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

/// How many "did you mean" names a miss offers (DESIGN.md §2: up to three).
pub const SUGGESTIONS: usize = 3;

/// Adds to `meant` the `names` it lacks, in order, until it holds `SUGGESTIONS`.
pub(crate) fn add_suggestions(meant: &mut Vec<String>, names: impl IntoIterator<Item = String>) {
    for name in names {
        if meant.len() == SUGGESTIONS {
            return;
        }
        if !meant.contains(&name) {
            meant.push(name);
        }
    }
}

/// Which moment a recall reads: `as_of` (transaction time, ms: what the store knew then) and
/// `valid_at` (valid time, ms: what was true then). A request that names neither reads what is
/// known now about what is true now: `now` (the call's time) stands for `valid_at`. All unset
/// (engine callers): the live relations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct When {
    pub as_of: Option<i64>,
    pub valid_at: Option<i64>,
    /// The call's time, read as `valid_at` when neither `as_of` nor `valid_at` is given.
    pub now: Option<i64>,
}

impl When {
    /// The moment a request names (`as_of`, `valid_at`), read at `now`: a plain read (neither
    /// given) means now in both times.
    #[must_use]
    pub fn of_request(as_of: Option<i64>, valid_at: Option<i64>, now: i64) -> When {
        When { as_of, valid_at, now: Some(now) }
    }

    /// The valid-time instant relations are read at: `valid_at`, else now for a plain read.
    /// An explicit `as_of` alone keeps its transaction-time reading (the edges live then).
    #[must_use]
    pub fn valid_instant(&self) -> Option<i64> {
        self.valid_at.or(self.now.filter(|_| self.as_of.is_none()))
    }
}

/// The answer to a recall.
#[derive(Debug, Clone, PartialEq)]
pub enum Recall {
    /// The subject was found: its entity, how its name matched, its live relations, and what
    /// follows from them (symmetric, inverse, transitive).
    Answered { subject: Entity, matched: MatchKind, facts: Vec<Neighbour>, derived: Vec<Derived> },
    /// No stored entity matches; names of this partition that are near.
    NothingStored { did_you_mean: Vec<String> },
}

/// Recalls `subject` in `part` as of `snap`. The first match wins (exact before case-folded
/// before word-of-name before near; ties by shorter name, then id).
pub fn recall(snap: &Snapshot, part: &Partition, subject: &str, when: &When) -> Result<Recall> {
    let entities = graph::entities(snap, part)?;
    let index = NameIndex::new(entities.iter().map(|e| (e.id, e.name.as_str())));
    let best = index.lookup(subject, LookupOptions { prefix: false, limit: 1, as_name: false }).into_iter().next();
    let Some(best) = best else {
        return Ok(Recall::NothingStored { did_you_mean: index.did_you_mean(subject, SUGGESTIONS) });
    };
    let subject = entities
        .into_iter()
        .find(|e| e.id == best.id)
        .ok_or_else(|| Error::corrupt(None, format!("entity {} vanished during recall", best.id)))?;
    let (facts, derived) = facts_of(snap, part, subject.id, when)?;
    Ok(Recall::Answered { subject, matched: best.how, facts, derived })
}

/// The relations touching `subject` that `when` sees, and what follows from them.
pub(crate) fn facts_of(
    snap: &Snapshot,
    part: &Partition,
    subject: u64,
    when: &When,
) -> Result<(Vec<Neighbour>, Vec<Derived>)> {
    let facts = live_neighbours(snap, part, subject, when)?;
    // One subject's recall follows every chain (at most `MAX_LINKS` links of each type).
    let mut unbounded = usize::MAX;
    let derived = derived_of(snap, part, subject, &facts, when, &mut unbounded)?;
    Ok((facts, derived))
}

/// What follows from `facts`, the relations touching `subject` that `when` sees: their
/// symmetric and inverse readings and the transitive chains from and into `subject`, each chain
/// over relations `when` sees. Chains read the relations of at most `reads` entities besides
/// `subject` (nearest first; the count left is written back, so several subjects can share one
/// budget), so a hub cannot make a read unbounded; past that, chains are not followed further.
pub(crate) fn derived_of(
    snap: &Snapshot,
    part: &Partition,
    subject: u64,
    facts: &[Neighbour],
    when: &When,
    reads: &mut usize,
) -> Result<Vec<Derived>> {
    // Each fact's type as the rules read it, once: at a hub of thousands of facts the chains
    // asked for the subject's whole side once per transitive type and direction, each a clone
    // and a `rule_key` of every fact (a quarter of a hub's recall, measured).
    let keys: Vec<String> = facts.iter().map(|n| derive::rule_key(&n.relation.rel_type)).collect();
    // Only the subject's facts of a transitive type start or end a chain (`derive::walk` skips
    // the others), so they alone are its sides.
    let own = |direction: Direction| -> Vec<graph::Relation> {
        let chained =
            |(n, key): &(&Neighbour, &String)| n.direction == direction && derive::TRANSITIVE.contains(&key.as_str());
        facts.iter().zip(&keys).filter(chained).map(|(n, _)| n.relation.clone()).collect()
    };
    let (outbound, inbound) = (own(Direction::Outbound), own(Direction::Inbound));
    let mut seen: HashMap<(u64, Direction), Vec<graph::Relation>> = HashMap::new();
    let mut side = |entity: u64, direction: Direction| -> Result<Vec<graph::Relation>> {
        if entity == subject {
            return Ok(if direction == Direction::Outbound { outbound.clone() } else { inbound.clone() });
        }
        match seen.entry((entity, direction)) {
            Entry::Occupied(known) => Ok(known.get().clone()),
            Entry::Vacant(_) if *reads == 0 => Ok(Vec::new()),
            Entry::Vacant(slot) => {
                *reads -= 1;
                Ok(slot.insert(transitive_side(snap, part, entity, direction, when)?).clone())
            }
        }
    };
    let mut derived = derive::around(subject, facts);
    derived.extend(derive::chains(subject, |e| side(e, Direction::Outbound))?);
    derived.extend(derive::chains_into(subject, |e| side(e, Direction::Inbound))?);
    // A derived reading that is also stored (both directions of a symmetric type, say) is shown
    // once, as the stored fact.
    let mut stated: HashSet<(u64, u64, String)> =
        facts.iter().zip(keys).map(|(n, key)| (n.relation.from, n.relation.to, key)).collect();
    derived.retain(|d| stated.insert((d.from, d.to, derive::rule_key(&d.rel_type))));
    Ok(derived)
}

/// The relations of a transitive type (`derive::TRANSITIVE`) on one side of `entity` that `when`
/// sees: all a chain can follow, read by type from the adjacency keys, so a chain passing a hub
/// reads its few `part_of` edges, not its thousands of others.
fn transitive_side(
    snap: &Snapshot,
    part: &Partition,
    entity: u64,
    direction: Direction,
    when: &When,
) -> Result<Vec<graph::Relation>> {
    let dir = if direction == Direction::Outbound { OUT } else { IN };
    let mut out = Vec::new();
    // `derive::walk` keeps the relations whose spelling reads as the type (`rule_key`).
    for rel_type in derive::TRANSITIVE.iter().flat_map(|t| derive::camel_and_spellings(t)) {
        for (rel_id, d) in adjacency_at(snap, part, entity, &adj_type_prefix(part, entity, dir, &rel_type), when)? {
            if let Some(n) =
                neighbour(snap, part, rel_id, d)?.map(|n| seen_at(snap, part, n, when)).transpose()?.flatten()
            {
                out.push(n.relation);
            }
        }
    }
    Ok(out)
}

/// The relations touching `entity` that `when` sees: with a valid instant (`valid_at`, or now
/// for a plain read), every edge recorded by `as_of` (or ever) whose valid time holds that
/// instant, live or ended (an ended edge is history, true over its interval: stored as older
/// news, it may be true today); with `as_of` alone, the edges live at that time. Each as the
/// store knew it at `as_of`: an earlier version of a fact revised since reads as that fact (its
/// id), not yet ended, with its attributes as true at the valid instant (`fact_attribute_time`).
/// The copies a fact keeps of itself are read only when the read may see one (`present_adjacency.rs`).
pub(crate) fn live_neighbours(snap: &Snapshot, part: &Partition, entity: u64, when: &When) -> Result<Vec<Neighbour>> {
    let mut out = Vec::new();
    for (rel_id, direction) in adjacency_at(snap, part, entity, &adj_prefix(part, entity), when)? {
        if let Some(n) = neighbour(snap, part, rel_id, direction)? {
            out.extend(seen_at(snap, part, n, when)?);
        }
    }
    Ok(out)
}

/// `n` as a read at `when` sees it (see `live_neighbours`), or `None` when it does not.
pub(crate) fn seen_at(snap: &Snapshot, part: &Partition, mut n: Neighbour, when: &When) -> Result<Option<Neighbour>> {
    if !sees(&n.relation, when) {
        return Ok(None);
    }
    fact_attribute_time::WritesIn::fill(snap, part, &mut n.relation, Some(when))?;
    // Read as of a moment, an edge ended later was not ended (nor shortened) yet.
    n.relation.valid_to = n.relation.valid_to_at(when.as_of).map(str::to_owned);
    n.relation.ended_at = n.relation.ended_at.filter(|&end| when.as_of.is_none_or(|t| end <= t));
    if let Some(fact) = n.relation.version_of.take() {
        n.relation.id = fact;
    }
    fact_attribute_time::read_at(&mut n.relation, when);
    Ok(Some(n))
}

/// Whether a read at `when` sees `rel` (see `live_neighbours`).
pub(crate) fn sees(rel: &graph::Relation, when: &When) -> bool {
    if !rel.current_at(when.as_of) {
        return false;
    }
    match (when.as_of, when.valid_instant()) {
        (None, None) => rel.ended_at.is_none(),
        (Some(t), None) => rel.known_at(t),
        (as_of, Some(at)) => as_of.is_none_or(|t| rel.recorded_at <= t) && rel.valid_at(at, as_of),
    }
}

#[cfg(test)]
#[path = "recall_hub_tests.rs"]
mod hub_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::derive::Rule;
    use crate::knowledge::testing::{assertion, seeded_with};
    use crate::knowledge::{Assertion, relate};
    use crate::store::Store;
    use serde_json::Map;

    fn seeded() -> (tempfile::TempDir, Store, Partition) {
        seeded_with(|tx, p| {
            let none = Map::new();
            relate(tx, p, assertion("Priya Raman", "Acme", "works_at", &none, "claude"), 1)?;
            relate(tx, p, assertion("Jonas Weber", "Priya Raman", "manages", &none, "claude"), 2)?;
            Ok(())
        })
    }

    #[test]
    fn a_word_of_a_longer_name_recalls_both_directions() {
        let (_dir, store, part) = seeded();
        let snap = store.snapshot().unwrap();
        let Recall::Answered { subject, matched, facts, derived } =
            recall(&snap, &part, "Priya", &When::default()).unwrap()
        else {
            panic!("Priya should be found")
        };
        assert_eq!(subject.name, "Priya Raman");
        assert_eq!(matched, MatchKind::WordOfName);
        let kinds: Vec<(Direction, &str)> = facts.iter().map(|f| (f.direction, f.relation.rel_type.as_str())).collect();
        assert_eq!(kinds, vec![(Direction::Outbound, "works_at"), (Direction::Inbound, "manages")]);
        // Jonas manages Priya, so Priya is managed_by Jonas, resting on that stored relation.
        let managed: Vec<_> = derived.iter().filter(|d| d.rel_type == "managed_by").collect();
        assert_eq!(managed.len(), 1);
        assert_eq!(managed[0].rule, Rule::Inverse);
        let inbound = facts.iter().find(|f| f.direction == Direction::Inbound).unwrap();
        assert_eq!(managed[0].basis, vec![inbound.relation.id]);
        assert_eq!(managed[0].to, inbound.other);
    }

    #[test]
    fn as_of_and_valid_at_pick_the_facts_of_their_moment() {
        let (_dir, store, part) = seeded();
        let p = part.clone();
        store
            .write(move |tx| {
                let dated = serde_json::json!({"valid_from": "2025-06-01"}).as_object().cloned().unwrap_or_default();
                relate(
                    tx,
                    &p,
                    Assertion { replaces: true, ..assertion("Priya Raman", "Globex", "works_at", &dated, "claude") },
                    50,
                )
            })
            .unwrap();
        let snap = store.snapshot().unwrap();
        let employers = |when: When| -> Vec<String> {
            let Recall::Answered { facts, .. } = recall(&snap, &part, "Priya Raman", &when).unwrap() else {
                panic!("found")
            };
            facts.iter().filter(|f| f.relation.rel_type == "works_at").map(|f| f.relation.to.to_string()).collect()
        };
        let now = employers(When::default());
        let before = employers(When { as_of: Some(10), valid_at: None, now: None });
        assert_eq!(now.len(), 1);
        assert_eq!(before.len(), 1);
        assert_ne!(now, before, "as_of before the replacement sees the old employer");
        let at = |date: &str| When { as_of: None, valid_at: super::super::valid::instant(date), now: None };
        assert_eq!(employers(at("2025-01-01")), before, "the replaced employer was true until the new one started");
        assert_eq!(employers(at("2025-07-01")), now);
    }

    #[test]
    fn transitive_facts_rest_on_stored_relations() {
        let (_dir, store, part) = seeded();
        let p = part.clone();
        store
            .write(move |tx| {
                let none = Map::new();
                relate(tx, &p, assertion("Room 4", "Acme HQ", "located_in", &none, "a"), 3)?;
                relate(tx, &p, assertion("Acme HQ", "Berlin", "located_in", &none, "a"), 4)?;
                relate(tx, &p, assertion("Berlin", "Germany", "located_in", &none, "a"), 5)
            })
            .unwrap();
        let snap = store.snapshot().unwrap();
        let Recall::Answered { derived, .. } = recall(&snap, &part, "Room 4", &When::default()).unwrap() else {
            panic!("found")
        };
        assert_eq!(derived.len(), 2, "Berlin (2 links) and Germany (3 links): {derived:?}");
        assert!(derived.iter().all(|d| d.rule == Rule::Transitive));
        assert_eq!(derived.iter().map(|d| d.basis.len()).collect::<Vec<_>>(), vec![2, 3]);
        for d in &derived {
            for id in &d.basis {
                assert!(snap.get(super::super::trees::REL, &part.key(&[&id.to_be_bytes()])).unwrap().is_some());
            }
        }
    }

    #[test]
    fn exact_and_near_spellings_say_how_they_matched() {
        let (_dir, store, part) = seeded();
        let snap = store.snapshot().unwrap();
        for (query, how) in [("Acme", MatchKind::Exact), ("ACME", MatchKind::CaseFolded)] {
            let Recall::Answered { matched, .. } = recall(&snap, &part, query, &When::default()).unwrap() else {
                panic!("{query}")
            };
            assert_eq!(matched, how, "{query}");
        }
        let Recall::Answered { subject, matched, .. } = recall(&snap, &part, "Jonas Webber", &When::default()).unwrap()
        else {
            panic!("a near spelling should be found")
        };
        assert_eq!(subject.name, "Jonas Weber");
        assert!(matches!(matched, MatchKind::Near { distance: 1 }), "{matched:?}");
    }

    #[test]
    fn a_miss_invents_nothing_and_suggests_only_own_names() {
        let (_dir, store, part) = seeded();
        let other = Partition::new("local", "u2", "default").unwrap();
        let snap = store.snapshot().unwrap();
        assert_eq!(
            recall(&snap, &part, "Zanzibar", &When::default()).unwrap(),
            Recall::NothingStored { did_you_mean: vec![] }
        );
        assert_eq!(
            recall(&snap, &other, "Priya", &When::default()).unwrap(),
            Recall::NothingStored { did_you_mean: vec![] }
        );
        assert_eq!(
            recall(&snap, &other, "Acme", &When::default()).unwrap(),
            Recall::NothingStored { did_you_mean: vec![] }
        );
        assert_eq!(
            recall(&snap, &part, "Pri", &When::default()).unwrap(),
            Recall::NothingStored { did_you_mean: vec!["Priya Raman".to_owned()] }
        );
        assert_eq!(
            recall(&snap, &other, "Pri", &When::default()).unwrap(),
            Recall::NothingStored { did_you_mean: vec![] }
        );
        // "the" is a stop word: it never matches a name on its own.
        assert!(matches!(recall(&snap, &part, "the", &When::default()).unwrap(), Recall::NothingStored { .. }));
    }
}
