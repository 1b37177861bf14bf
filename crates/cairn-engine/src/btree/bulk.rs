//! Sorted insertion: merges a run of entries, sorted by key and distinct, into a tree in one pass.
//! Each page the run touches is decoded and written once, however many entries land in it,
//! where inserting them one by one would copy (and checksum) the root-to-leaf path per entry.

use super::{Bytes, Node, PageStore, Pieces, Value, child_slot, grow_root, store_split};
use crate::error::Result;
use crate::page::{NO_PAGE, PageId};

/// Puts every entry of `entries` (sorted by key, keys distinct) into the tree at `root`. Returns
/// the new root and the values that entries replaced (the caller frees them).
pub(crate) fn insert_sorted(
    tx: &mut impl PageStore,
    root: PageId,
    entries: Vec<(Bytes, Value)>,
) -> Result<(PageId, Vec<Value>)> {
    debug_assert!(entries.windows(2).all(|w| *w[0].0 < *w[1].0), "entries must be sorted and distinct");
    if entries.is_empty() {
        return Ok((root, Vec::new()));
    }
    let mut replaced = Vec::new();
    let pieces = if root == NO_PAGE {
        store_split(tx, None, Node::Leaf(entries), true)?
    } else {
        merge_at(tx, root, entries, &mut replaced)?
    };
    Ok((grow_root(tx, pieces)?, replaced))
}

/// Merges `entries` (all of which belong under page `id`) into the subtree at `id`; returns the
/// pages that replace it, as `insert_at` does.
fn merge_at(
    tx: &mut impl PageStore,
    id: PageId,
    entries: Vec<(Bytes, Value)>,
    replaced: &mut Vec<Value>,
) -> Result<Pieces> {
    let page = tx.page(id)?;
    match Node::decode(id, &page)? {
        Node::Leaf(old) => {
            // Entries that all come after the page's keys are an append: fill pages fully, as a
            // single append does.
            let append = old.last().is_none_or(|(k, _)| *entries[0].0 > **k);
            let merged = merge_entries(old, entries, replaced);
            store_split(tx, Some(id), Node::Leaf(merged), append)
        }
        Node::Branch(mut children) => {
            let runs = split_runs(&children, entries);
            let last_child = children.len() - 1;
            let append = runs.last().is_some_and(|(slot, _)| *slot == last_child);
            let mut changed = false;
            // From the back, so the slots of earlier runs stay valid as children are spliced in.
            for (slot, run) in runs.into_iter().rev() {
                let child = children[slot].1;
                let mut sub = merge_at(tx, child, run, replaced)?;
                if sub.len() == 1 && sub[0].1 == child {
                    // Rewritten in place: this branch still points at it.
                    continue;
                }
                changed = true;
                sub[0].0 = std::mem::take(&mut children[slot].0);
                children.splice(slot..=slot, sub);
            }
            if !changed {
                return Ok(vec![(Bytes::default(), id)]);
            }
            store_split(tx, Some(id), Node::Branch(children), append)
        }
    }
}

/// Cuts sorted `entries` into runs by the child of a branch each belongs under, in child order.
fn split_runs(children: &[(Bytes, PageId)], entries: Vec<(Bytes, Value)>) -> Vec<(usize, Vec<(Bytes, Value)>)> {
    let mut runs: Vec<(usize, Vec<(Bytes, Value)>)> = Vec::new();
    let mut slot = child_slot(children, &entries[0].0);
    let mut run = Vec::new();
    for entry in entries {
        // Keys ascend, so the slot only moves right: step past separators instead of searching.
        let mut next = slot;
        while next + 1 < children.len() && *children[next + 1].0 <= *entry.0 {
            next += 1;
        }
        if next != slot && !run.is_empty() {
            runs.push((slot, std::mem::take(&mut run)));
        }
        slot = next;
        run.push(entry);
    }
    runs.push((slot, run));
    runs
}

/// The union of two sorted entry lists; on equal keys the new entry wins and the old value goes
/// to `replaced`.
fn merge_entries(old: Vec<(Bytes, Value)>, new: Vec<(Bytes, Value)>, replaced: &mut Vec<Value>) -> Vec<(Bytes, Value)> {
    let mut out = Vec::with_capacity(old.len() + new.len());
    let mut old = old.into_iter().peekable();
    for entry in new {
        while let Some(o) = old.next_if(|(k, _)| **k < *entry.0) {
            out.push(o);
        }
        if let Some((_, v)) = old.next_if(|(k, _)| **k == *entry.0) {
            replaced.push(v);
        }
        out.push(entry);
    }
    out.extend(old);
    out
}
