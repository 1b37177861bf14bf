//! The adjacency of the copies a fact keeps of itself under other ids: an earlier version
//! (`version_of`, kept when a re-assertion revised it) and an earlier life (kept when a restore
//! brought the fact back). They are filed in `k.adj_past`, keyed as `k.adj` is, so every reader
//! of a list (neighbours, history, forget, export) reads both trees, a read without `as_of` only
//! when a copy may show (`present_adjacency.rs`), and a `relate` plan reads
//! `k.adj` alone: a fact revised or restored thousands of times (an agent's status, its current
//! task) kept a copy per revision in the list the plan read, each record decoded on every call
//! (6,013 pages a call at 2,000 revisions).
//!
//! Why the plan may skip them (`may_need_past` says when it may not): no rule reads an earlier
//! version (`relate_plan::read_against`). An earlier life C of fact F (same ends and type) is
//! ended, and F's own record stays in `k.adj` with, as its value, the bound of its copies: the
//! largest start or end (ms) of any of them (`bound`). For an assertion starting at `s` no earlier
//! than that bound, C is over at `s` and started before it: it is not true there, not newer, not
//! ended by `replaces`; it could only be the life a restore brings back, and F outranks it there
//! (`relate_plan::latest`: F was ended no sooner, recorded no sooner, and has the smaller id)
//! whenever F is over too, while an F true at `s` is itself the answer. So C can count only when
//! F starts after `s`, or when a plain assertion gives an end and no start (it is read against
//! every start then): the plan then reads both trees, as it did before.
//!
//! A store written before this tree filed every copy in `k.adj` with an empty value: each is read
//! by the plan as a fact of its own, as before, which plans the same. Its earlier versions are
//! moved here once (`past_adjacency_build.rs`); its earlier lives cannot be told from facts and stay.

use super::graph::Relation;
use super::part::Partition;
use super::trees::{ADJ, ADJ_PAST, IN, OUT, adj_key, adj_type_prefix};
use crate::error::{Error, Result};
use crate::text::fold;
use crate::write::WriteTxn;

/// The adjacency type of a stored record: its own type folded.
fn own_type(rel: &Relation) -> String {
    fold(rel.rel_type.trim())
}

/// Both adjacency keys of `rel`.
fn keys(part: &Partition, rel: &Relation) -> [Vec<u8>; 2] {
    let t = own_type(rel);
    [adj_key(part, rel.from, OUT, &t, rel.id), adj_key(part, rel.to, IN, &t, rel.id)]
}

/// The latest start or end (ms) of an ended copy, as the store reads it now: an assertion
/// starting at or after it finds the copy over. A copy's end never moves later.
fn bound(copy: &Relation) -> i64 {
    let end = copy.valid_end(None).unwrap_or(i64::MAX);
    copy.valid_start().map_or(end, |start| start.max(end))
}

/// The bound an adjacency value holds: `None` for the empty value of a fact that keeps no copy here.
pub(crate) fn bound_of(value: &[u8]) -> Result<Option<i64>> {
    match value.len() {
        0 => Ok(None),
        8 => Ok(Some(i64::from_be_bytes(value.try_into().expect("8 bytes")))),
        _ => Err(Error::corrupt(None, "an adjacency value is neither empty nor a bound")),
    }
}

/// Files `copy`, an earlier version of a fact, in `k.adj_past`.
pub(crate) fn file_version(tx: &mut WriteTxn<'_>, part: &Partition, copy: &Relation) -> Result<()> {
    file_in(tx, part, copy, ADJ_PAST)
}

fn file_in(tx: &mut WriteTxn<'_>, part: &Partition, rel: &Relation, tree: &str) -> Result<()> {
    for key in keys(part, rel) {
        tx.put(tree, &key, &[])?;
    }
    Ok(())
}

/// Files `copy`, the earlier life of a fact a restore keeps (`old` as it was stored, `fact` as it
/// is now), in `k.adj_past`, and the fact in `k.adj` with its bound raised to the copy's. A
/// restored copy (a plan reads copies when they may count) becomes a fact: its keys move from
/// `k.adj_past`. A fact whose ends the restore changed (an assertion from an entity to itself,
/// which no verb makes, reaches every edge of its subject) no longer outranks its lives where
/// they are listed: they are filed as facts, as a store written before filed them.
pub(crate) fn file_life(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (old, fact): (&Relation, &Relation),
    copy: &Relation,
) -> Result<()> {
    let pair = |rel: &Relation| (rel.from, rel.to, own_type(rel));
    if pair(fact) != pair(copy) {
        file_in(tx, part, copy, ADJ)?;
        reinstate_lives(tx, part, old)?;
        for key in keys(part, old) {
            if tx.delete(ADJ_PAST, &key)? {
                tx.put(ADJ, &key, &[])?;
            }
        }
        return Ok(());
    }
    file_version(tx, part, copy)?;
    for key in keys(part, fact) {
        tx.delete(ADJ_PAST, &key)?;
        let held = match tx.get(ADJ, &key)? {
            Some(value) => bound_of(&value)?,
            None => None,
        };
        let raised = held.map_or(bound(copy), |b| b.max(bound(copy)));
        tx.put(ADJ, &key, &raised.to_be_bytes())?;
    }
    Ok(())
}

/// Removes `rel`'s adjacency entries from both trees. A fact that kept earlier lives here takes
/// them back into `k.adj` first (as facts of their own, read by every plan): without the fact
/// that outranked them, one may be the life a restore brings back. Forgetting a fact removes
/// its copies too; forgetting a source may leave them.
pub(crate) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, rel: &Relation) -> Result<()> {
    let [out, _] = keys(part, rel);
    if tx.get(ADJ, &out)?.is_some_and(|v| !v.is_empty()) {
        reinstate_lives(tx, part, rel)?;
    }
    for key in keys(part, rel) {
        tx.delete(ADJ, &key)?;
        tx.delete(ADJ_PAST, &key)?;
    }
    Ok(())
}

/// Moves the earlier lives of `fact` (the records in `k.adj_past` with its ends and type that are
/// no earlier version) into `k.adj`.
fn reinstate_lives(tx: &mut WriteTxn<'_>, part: &Partition, fact: &Relation) -> Result<()> {
    let prefix = adj_type_prefix(part, fact.from, OUT, &own_type(fact));
    for (key, _) in tx.prefix(ADJ_PAST, &prefix)? {
        let id = super::trees::trailing_id(&key)?;
        let Some(copy) = super::graph::relation_in(tx, part, id)? else { continue };
        if copy.version_of.is_none() && (copy.from, copy.to) == (fact.from, fact.to) && copy.id != fact.id {
            for key in keys(part, &copy) {
                tx.delete(ADJ_PAST, &key)?;
                tx.put(ADJ, &key, &[])?;
            }
        }
    }
    Ok(())
}
