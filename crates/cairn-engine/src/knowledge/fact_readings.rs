//! The readings of one fact. A symmetric type reads both ways and an inverse pair each as the
//! other from the far end (`derive.rs`), so `Bruno married_to Ana` is the stored `Ana married_to
//! Bruno` and `Mei child_of Ana` the stored `Ana parent_of Mei`. Every verb that names a fact by
//! its ends reads it through here: `relate` (said again from the other end, it is the stored
//! fact), `forget {fact}` and `memory_history {fact}` (found by an audit: those two read only the
//! stored reading, and answered "not stored" for the reading `relate` had just called already
//! stored).

use super::derive::{camel_and_spellings, mirror, rule_key};
use super::graph::{Direction, Neighbour, Relation, edges_between, indexed_relation};
use super::part::Partition;
use crate::error::Result;
use crate::text::fold;
use crate::write::WriteTxn;

/// The folded types a fact of type `rel_type` (as spelled: `childOf` reads as `child_of`, which
/// its fold `childof` no longer says) is stored under from its other end: each spelling of its
/// mirror type (`parent_of`, `parent of`, `parent-of`, and `parentof`, the fold of `parentOf`);
/// none for a type that has no mirror. An edge found under one is a reading only when its own
/// spelling reads as the mirror (`is_mirror`): a lower-case `parentof` does not.
pub(crate) fn mirror_types(rel_type: &str) -> Vec<String> {
    mirror(rel_type).map(camel_and_spellings).unwrap_or_default()
}

/// Whether `rel`, found under a mirror spelling of `rel_type`, states a fact of that type from
/// its other end: its own spelling reads as the mirror type.
pub(crate) fn is_mirror(rel: &Relation, rel_type: &str) -> bool {
    mirror(rel_type).is_some_and(|m| rule_key(&rel.rel_type) == m)
}

/// Whether `n`, a relation around the entity a fact `from -[rel_type]-> to` is asked from, states
/// that fact from its other end: stored from `to` to `from` under a mirror type.
pub(crate) fn states_from_other_end(n: &Neighbour, to: u64, rel_type: &str) -> bool {
    n.direction == Direction::Inbound
        && n.other == to
        && mirror_types(rel_type).contains(&fold(n.relation.rel_type.trim()))
        && is_mirror(&n.relation, rel_type)
}

/// The folded `(from, type, to)` readings of the fact asked as `from -[rel_type]-> to`: as asked,
/// then from its other end under each mirror type.
pub(crate) fn readings(from: &str, rel_type: &str, to: &str) -> Vec<(String, String, String)> {
    let (from, to) = (fold(from.trim()), fold(to.trim()));
    let mut out = vec![(from.clone(), fold(rel_type.trim()), to.clone())];
    out.extend(mirror_types(rel_type).into_iter().map(|mirrored| (to.clone(), mirrored, from.clone())));
    out
}

/// Every stored record of the fact `from -[rel_type]-> to` (entity ids; the type as spelled), in
/// every reading: the live one, ended lives and the earlier versions kept for `as_of` reads, each
/// once. Each adjacency list is read from the shorter end (`edges_between`): a hub's lists run to
/// thousands.
pub(crate) fn stored_versions(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (from, to): (u64, u64),
    rel_type: &str,
) -> Result<Vec<Relation>> {
    let mut reads = vec![((from, to), false, edges_between(tx, part, (from, to), &fold(rel_type.trim()))?)];
    for mirrored in mirror_types(rel_type) {
        reads.push(((to, from), true, edges_between(tx, part, (to, from), &mirrored)?));
    }
    let mut out: Vec<Relation> = Vec::new();
    for ((start, end), mirrored, keys) in reads {
        for (key, _) in keys {
            let rel = indexed_relation(tx, part, &key)?;
            // A list read from the shorter end holds edges to other ends too; a symmetric fact
            // from an entity to itself is found by both reads.
            let ends = rel.from == start && rel.to == end;
            if ends && (!mirrored || is_mirror(&rel, rel_type)) && !out.iter().any(|r| r.id == rel.id) {
                out.push(rel);
            }
        }
    }
    Ok(out)
}
