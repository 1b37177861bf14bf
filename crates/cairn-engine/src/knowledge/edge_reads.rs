//! The relations stored between two entities, read from the adjacency lists (`k.adj`, keyed by
//! one end, then direction and type) without reading a hub's whole list: of the two lists that
//! can hold them (the first end's outbound, the second's inbound, of one type or of all), the
//! shorter is read, a growing stretch of each at a time, so the work is the shorter list's
//! however many facts the other end has. Writing read this way first (reading a company's whole
//! `employs` list for each edge written to it made a hub's edges quadratic to write); then an
//! audit found `memory_history {fact}` reading every fact of its `from` end, record by record, a
//! latency cliff at a hub of 200k facts. The key layout needs nothing more for this: no index
//! was added (knowledge-keys.md, "Facts between two ends"). Read by a write transaction
//! (`relate`, `remember`, `forget`, `import`) or a snapshot (`memory_history`). The facts of one
//! type between two ends are read in the shape the caller needs: a writer planning from them reads
//! each as its light `EdgeView` (`edge_view.rs`), a fact said again many times keeping a version
//! per revision, each with the attribute writes known then.

use super::edge_view::Edge;
use super::graph::{self, Relation};
use super::part::Partition;
use super::past_adjacency;
use super::records::decode;
use super::trees::{ADJ, ADJ_PAST, IN, OUT, REL, adj_prefix, adj_type_prefix, rel_key, trailing_id};
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;
use crate::write::WriteTxn;
use serde::de::DeserializeOwned;

/// The first stretch of a list read; each next one is eight times longer.
const FIRST_STRETCH: usize = 16;

/// An adjacency entry: the relation id its key ends with, and its value.
type Entry = (u64, Vec<u8>);

/// The reads the relations between two entities take.
pub(crate) trait Reads {
    /// The entries (relation id, value) under the adjacency `prefix` of `tree` (`k.adj` or
    /// `k.adj_past`), in key order, when there are at most `max`.
    fn entries_within(&mut self, tree: &str, prefix: &[u8], max: usize) -> Result<Option<Vec<Entry>>>;
    /// The stored bytes of relation `id`.
    fn relation(&mut self, part: &Partition, id: u64) -> Result<Option<Vec<u8>>>;
    /// The stored name of entity `id` (empty when it is gone).
    fn name(&mut self, part: &Partition, id: u64) -> Result<String>;

    /// The relation ids under the adjacency `prefix`, the copies filed apart included
    /// (`past_adjacency.rs`), in id order, when there are at most `max`.
    fn ids_within(&mut self, prefix: &[u8], max: usize) -> Result<Option<Vec<u64>>> {
        let Some(facts) = self.entries_within(ADJ, prefix, max)? else { return Ok(None) };
        let Some(copies) = self.entries_within(ADJ_PAST, prefix, max - facts.len())? else { return Ok(None) };
        let mut ids: Vec<u64> = facts.into_iter().chain(copies).map(|(id, _)| id).collect();
        if ids.len() > max {
            return Ok(None);
        }
        // Under a type prefix keys sort as ids do; the two trees' lists interleave.
        ids.sort_unstable();
        Ok(Some(ids))
    }
}

impl Reads for WriteTxn<'_> {
    fn entries_within(&mut self, tree: &str, prefix: &[u8], max: usize) -> Result<Option<Vec<Entry>>> {
        let Some(entries) = self.prefix_within(tree, prefix, max)? else { return Ok(None) };
        entries.into_iter().map(|(k, v)| Ok((trailing_id(&k)?, v))).collect::<Result<_>>().map(Some)
    }

    fn relation(&mut self, part: &Partition, id: u64) -> Result<Option<Vec<u8>>> {
        self.get(REL, &rel_key(part, id))
    }

    fn name(&mut self, part: &Partition, id: u64) -> Result<String> {
        Ok(graph::entity_in(self, part, id)?.map(|e| e.name).unwrap_or_default())
    }
}

impl Reads for &Snapshot {
    fn entries_within(&mut self, tree: &str, prefix: &[u8], max: usize) -> Result<Option<Vec<Entry>>> {
        let mut entries = Vec::new();
        self.scan_prefix(tree, prefix, |k, v| {
            entries.push((trailing_id(k)?, v.to_vec()));
            Ok(entries.len() <= max)
        })?;
        Ok((entries.len() <= max).then_some(entries))
    }

    fn relation(&mut self, part: &Partition, id: u64) -> Result<Option<Vec<u8>>> {
        self.get(REL, &rel_key(part, id))
    }

    fn name(&mut self, part: &Partition, id: u64) -> Result<String> {
        Ok(graph::entity_by_id(self, part, id)?.map(|e| e.name).unwrap_or_default())
    }
}

/// The relations stored from `from` to `to` under the folded type `folded_type` (as their
/// adjacency keys hold it), live and ended, earlier versions included, in id order, each read as
/// a `T`: a whole `Relation` or its `EdgeView`.
pub(crate) fn of_type<T: Edge + DeserializeOwned>(
    r: &mut impl Reads,
    part: &Partition,
    (from, to): (u64, u64),
    folded_type: &str,
) -> Result<Vec<T>> {
    let lists = [adj_type_prefix(part, from, OUT, folded_type), adj_type_prefix(part, to, IN, folded_type)];
    let ids = shorter(r, &lists, usize::MAX)?.unwrap_or_default();
    // The shorter list holds the relations from its end to other entities too.
    Ok(records::<T>(r, part, ids)?.into_iter().filter(|rel| rel.ends() == (from, to)).collect())
}

/// `of_type` of the facts alone: the records filed in `k.adj` (not the copies filed apart,
/// `past_adjacency.rs`), each with the bound of its copies its entry holds.
pub(crate) fn facts_of_type<T: Edge + DeserializeOwned>(
    r: &mut impl Reads,
    part: &Partition,
    (from, to): (u64, u64),
    folded_type: &str,
) -> Result<Vec<(T, Option<i64>)>> {
    let lists = [adj_type_prefix(part, from, OUT, folded_type), adj_type_prefix(part, to, IN, folded_type)];
    let mut max = FIRST_STRETCH;
    let entries = loop {
        if let Some(found) = lists.iter().find_map(|list| r.entries_within(ADJ, list, max).transpose()) {
            break found?;
        }
        max = max.saturating_mul(8);
    };
    let mut out = Vec::new();
    for (id, value) in entries {
        let rel: T = record(r, part, id)?;
        if rel.ends() == (from, to) {
            out.push((rel, past_adjacency::bound_of(&value)?));
        }
    }
    Ok(out)
}

/// The relations stored between `a` and `b`, either way and of any type, in id order; `None` when
/// both entities have more than `most` relations.
pub(crate) fn any_type(
    r: &mut impl Reads,
    part: &Partition,
    (a, b): (u64, u64),
    most: usize,
) -> Result<Option<Vec<Relation>>> {
    let Some(mut ids) = shorter(r, &[adj_prefix(part, a), adj_prefix(part, b)], most)? else { return Ok(None) };
    // An entity's list holds each relation once per direction: a relation from it to itself twice.
    ids.sort_unstable();
    ids.dedup();
    let joins = |rel: &Relation| (rel.from, rel.to) == (a, b) || (rel.from, rel.to) == (b, a);
    Ok(Some(records::<Relation>(r, part, ids)?.into_iter().filter(joins).collect()))
}

/// The relation ids under whichever of two adjacency `lists` holds fewer; `None` when both hold
/// more than `most`. Each is read up to a stretch, the other then up to the same, the stretch
/// growing eightfold, so no more than about twenty times the shorter list is read.
fn shorter(r: &mut impl Reads, lists: &[Vec<u8>; 2], most: usize) -> Result<Option<Vec<u64>>> {
    let mut max = FIRST_STRETCH.min(most);
    loop {
        for list in lists {
            if let Some(ids) = r.ids_within(list, max)? {
                return Ok(Some(ids));
            }
        }
        if max == most {
            return Ok(None);
        }
        max = max.saturating_mul(8).min(most);
    }
}

/// The relations `ids` name, each read as a `T`.
fn records<T: DeserializeOwned>(r: &mut impl Reads, part: &Partition, ids: Vec<u64>) -> Result<Vec<T>> {
    ids.into_iter().map(|id| record(r, part, id)).collect()
}

/// Relation `id` read as a `T`; an index entry without its relation is corruption.
fn record<T: DeserializeOwned>(r: &mut impl Reads, part: &Partition, id: u64) -> Result<T> {
    let bytes =
        r.relation(part, id)?.ok_or_else(|| Error::corrupt(None, format!("relation {id} is indexed but missing")))?;
    decode(&bytes, "relation")
}
