//! The readings of one fact. A symmetric type reads both ways and an inverse pair each as the
//! other from the far end (`derive.rs`), so `Bruno married_to Ana` is the stored `Ana married_to
//! Bruno` and `Mei child_of Ana` the stored `Ana parent_of Mei`. Every verb that names a fact by
//! its ends reads it through here: `relate` (said again from the other end, it is the stored
//! fact), `forget {fact}` and `memory_history {fact}` (found by an audit: those two read only the
//! stored reading, and answered "not stored" for the reading `relate` had just called already
//! stored).

use super::derive::{camel_and_spellings, mirror, rule_key};
use super::edge_reads::{self, Reads};
use super::edge_view::Edge;
use super::part::Partition;
use crate::error::Result;
use crate::text::fold;
use serde::de::DeserializeOwned;

/// The folded types a fact of type `rel_type` (as spelled: `childOf` reads as `child_of`, which
/// its fold `childof` no longer says) is stored under from its other end: each spelling of its
/// mirror type (`parent_of`, `parent of`, `parent-of`, and `parentof`, the fold of `parentOf`);
/// none for a type that has no mirror. An edge found under one is a reading only when its own
/// spelling reads as the mirror (`is_mirror`): a lower-case `parentof` does not.
pub(crate) fn mirror_types(rel_type: &str) -> Vec<String> {
    mirror(rel_type).map(camel_and_spellings).unwrap_or_default()
}

/// Whether an edge stored as `stored_type`, found under a mirror spelling of `rel_type`, states a
/// fact of that type from its other end: its own spelling reads as the mirror type.
pub(crate) fn is_mirror(stored_type: &str, rel_type: &str) -> bool {
    mirror(rel_type).is_some_and(|m| rule_key(stored_type) == m)
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
/// once, read from the shorter of the lists that can hold them (`edge_reads.rs`): a hub's lists
/// run to thousands. Each is read as a `T`: a whole `Relation` or its `EdgeView`.
pub(crate) fn stored_versions<T: Edge + DeserializeOwned>(
    r: &mut impl Reads,
    part: &Partition,
    (from, to): (u64, u64),
    rel_type: &str,
) -> Result<Vec<T>> {
    let mut out: Vec<T> = edge_reads::of_type(r, part, (from, to), &fold(rel_type.trim()))?;
    for rel in mirrored::<T>(r, part, (from, to), rel_type)? {
        // A symmetric fact from an entity to itself is found by both reads.
        if !out.iter().any(|r| r.id() == rel.id()) {
            out.push(rel);
        }
    }
    Ok(out)
}

/// `stored_versions` of the facts alone, as a `relate` plan reads them: the records filed in
/// `k.adj`, each with the bound of the earlier lives it keeps apart (`past_adjacency.rs`), in the
/// order `stored_versions` lists them.
pub(crate) fn stored_facts<T: Edge + DeserializeOwned>(
    r: &mut impl Reads,
    part: &Partition,
    (from, to): (u64, u64),
    rel_type: &str,
) -> Result<Vec<(T, Option<i64>)>> {
    let mut out = edge_reads::facts_of_type::<T>(r, part, (from, to), &fold(rel_type.trim()))?;
    for mirrored in mirror_types(rel_type) {
        for (rel, bound) in edge_reads::facts_of_type::<T>(r, part, (to, from), &mirrored)? {
            if is_mirror(rel.rel_type(), rel_type) && !out.iter().any(|(r, _)| r.id() == rel.id()) {
                out.push((rel, bound));
            }
        }
    }
    Ok(out)
}

/// The records stored from `to` to `from` that state the fact `from -[rel_type]-> to` from its
/// other end: under a spelling of its mirror type that reads as it, each spelling's in id order.
pub(crate) fn mirrored<T: Edge + DeserializeOwned>(
    r: &mut impl Reads,
    part: &Partition,
    (from, to): (u64, u64),
    rel_type: &str,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for mirrored in mirror_types(rel_type) {
        let stated: Vec<T> = edge_reads::of_type(r, part, (to, from), &mirrored)?;
        out.extend(stated.into_iter().filter(|rel| is_mirror(rel.rel_type(), rel_type)));
    }
    Ok(out)
}
