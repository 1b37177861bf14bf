//! The reach index: each entity's edges filed by how far their valid time reaches, so a read of
//! what is true now (`recall`'s plain reading, `relate … replaces` from now) skips the ended ones
//! without reading them. A subject whose relation is replaced again and again (a build's status,
//! a project's owner) keeps every ended edge for `as_of` and `valid_at` reads; reading and
//! decoding them all made each recall and each `replaces` of it slower with every change (10.5 ms
//! a recall and 10 ms a `replaces` at 3,000 ended edges).
//!
//! `REACH` files each edge at both ends, like `k.adj`, with its reach (`reach`) between its type
//! and its id: `part | entity | direction | folded type \0 | reach | relation id`. Within one
//! entity's edges of one type one way, the edges true at or after an instant are the ones whose
//! reach is past it: one range of keys. Earlier versions of a revised fact are not filed (no read
//! of now sees them). Every writer of a relation record refiles it in the same transaction
//! (`refile`); a store written before the index gets it built once (`reach_index_build.rs`), and
//! until then the readers read the whole adjacency list, as before.

use super::edge_view::Edge;
use super::graph::{Direction, Relation};
use super::part::Partition;
use super::trees::{IN, OUT, REACH, trailing_id};
use crate::error::{Error, Result};
use crate::key_text::fit;
use crate::snapshot::Snapshot;
use crate::text::fold;
use crate::write::WriteTxn;
use std::borrow::Cow;
use std::ops::Bound;

/// The index's tree, named in `Store::check`'s report.
pub(crate) const TREE: &str = REACH;

/// Bytes after a key's group (`reach`, relation id).
const TAIL: usize = 16;

/// The latest instant (ms) an edge's valid interval names, as a key orders it: its end as the
/// store reads it now (`valid_to`, else when it was ended; unbounded: the greatest key), or its
/// start when that is later (an interval stored backwards still reads as newer news to a
/// `replaces` before its start). A read at instant `t` sees only edges whose end is past `t`, and
/// a `replaces` from `t` reads only those and the ones starting after `t`: both are the edges
/// whose reach is past `t`.
pub(crate) fn reach<T: Edge>(edge: &T) -> u64 {
    reach_of(edge.start(), edge.end())
}

/// `reach` of an edge valid from `start` to `end` (ms; `None`: unbounded), its end read as
/// `Edge::end` reads it.
pub(crate) fn reach_of(start: Option<i64>, end: Option<i64>) -> u64 {
    end.map_or(u64::MAX, |end| ordered(end.max(start.unwrap_or(i64::MIN))))
}

/// `ms` as a big-endian key orders it: the sign bit flipped, so earlier instants sort first.
fn ordered(ms: i64) -> u64 {
    ms.cast_unsigned() ^ (1 << 63)
}

/// Key bytes besides the partition and the type.
const FIXED: usize = 8 + 1 + 1 + TAIL;

/// A folded type as `REACH` keys hold it (`key_text::fit`, with room for the reach).
fn keyed_type<'a>(part: &Partition, folded_type: &'a str) -> Cow<'a, [u8]> {
    fit(folded_type, part.prefix().len() + FIXED)
}

/// Whether `REACH` keys hold a folded type of `len` bytes whole, so they sort as the types do.
pub(crate) fn holds_whole(part: &Partition, len: usize) -> bool {
    crate::key_text::fits(len, part.prefix().len() + FIXED)
}

/// `part | entity | direction | folded type \0`: one entity's edges of one type one way.
pub(crate) fn group(part: &Partition, entity: u64, dir: u8, folded_type: &str) -> Vec<u8> {
    part.key(&[&entity.to_be_bytes(), &[dir], &keyed_type(part, folded_type), b"\0"])
}

/// The key of relation `id` in `group`, filed at `reach`.
pub(crate) fn key(group: &[u8], reach: u64, id: u64) -> Vec<u8> {
    [group, &reach.to_be_bytes(), &id.to_be_bytes()].concat()
}

/// The keys `rel` is filed under: one at each end; none for an earlier version of a fact.
pub(crate) fn keys(part: &Partition, rel: &Relation) -> Vec<Vec<u8>> {
    if rel.version_of.is_some() {
        return Vec::new();
    }
    let folded = fold(rel.rel_type.trim());
    [(rel.from, OUT), (rel.to, IN)]
        .into_iter()
        .map(|(entity, dir)| key(&group(part, entity, dir, &folded), reach(rel), rel.id))
        .collect()
}

/// Files a relation record written in `tx` as `after` (`None`: removed) where it was filed as
/// `before` (`None`: new).
pub(crate) fn refile(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    before: Option<&Relation>,
    after: Option<&Relation>,
) -> Result<()> {
    let (old, new) =
        (before.map(|r| keys(part, r)).unwrap_or_default(), after.map(|r| keys(part, r)).unwrap_or_default());
    for key in old.iter().filter(|k| !new.contains(k)) {
        tx.delete(REACH, key)?;
    }
    for key in new.iter().filter(|k| !old.contains(k)) {
        tx.put(REACH, key, &[])?;
    }
    Ok(())
}

/// Whether the index is complete (its marker, the empty key, is there), as `tx` sees it.
pub(crate) fn built_in(tx: &mut WriteTxn<'_>) -> Result<bool> {
    Ok(tx.get(REACH, &[])?.is_some())
}

/// Whether the index is complete in `snap`.
pub(crate) fn built(snap: &Snapshot) -> Result<bool> {
    Ok(snap.get(REACH, &[])?.is_some())
}

/// The key a group's edges reaching past `at` start from.
fn past(group: &[u8], at: i64) -> Vec<u8> {
    [group, &ordered(at.saturating_add(1)).to_be_bytes()].concat()
}

/// The greatest key a group can hold.
fn last(group: &[u8]) -> Vec<u8> {
    [group, &[0xFF; TAIL]].concat()
}

/// The ids of the edges in `group` (see `group`) whose reach is past `at`, in id order, as `tx`
/// sees them.
pub(crate) fn reaching_in(tx: &mut WriteTxn<'_>, group: &[u8], at: i64) -> Result<Vec<u64>> {
    let (from, to) = (past(group, at), last(group));
    let mut ids = tx
        .range(REACH, Bound::Included(&from), Bound::Included(&to))?
        .iter()
        .map(|(k, _)| trailing_id(k))
        .collect::<Result<Vec<_>>>()?;
    ids.sort_unstable();
    Ok(ids)
}

/// The edges of `entity` whose reach is past `at`, each id with which end `entity` is, as `snap`
/// sees them, in no particular order. Reads two ranges of keys per type and direction the entity
/// has edges of, and no relation.
pub(crate) fn reaching(snap: &Snapshot, part: &Partition, entity: u64, at: i64) -> Result<Vec<(u64, Direction)>> {
    let prefix = part.key(&[&entity.to_be_bytes()]);
    let mut out = Vec::new();
    let mut start = prefix.clone();
    loop {
        // The next group: the one of the first key at or past `start`.
        let mut next = None;
        snap.scan_from(REACH, &start, &prefix, |key, _| {
            next = Some(key.to_vec());
            Ok(false)
        })?;
        let Some(key) = next else { return Ok(out) };
        let group = key.get(..key.len().saturating_sub(TAIL)).filter(|g| g.len() > prefix.len()).ok_or_else(short)?;
        let direction = match group[prefix.len()] {
            OUT => Direction::Outbound,
            IN => Direction::Inbound,
            _ => return Err(Error::corrupt(None, "a reach index key has no direction")),
        };
        snap.scan_from(REACH, &past(group, at), group, |key, _| {
            out.push((trailing_id(key)?, direction));
            Ok(true)
        })?;
        // Past every key of this group: no group is the start of another (a type kept whole
        // holds no control character; one kept by digest has its head, `LONG`, then a digest of
        // fixed length).
        start = [last(group).as_slice(), &[0]].concat();
    }
}

fn short() -> Error {
    Error::corrupt(None, "a reach index key is too short")
}
