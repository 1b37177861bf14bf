//! Sorted insertion: merges a run of entries, sorted by key and distinct, into a tree in one pass.
//! Each page the run touches is decoded and written once, however many entries land in it,
//! where inserting them one by one would copy (and checksum) the root-to-leaf path per entry.

use super::insert::{add_cell, patch, room_for, set_child};
use super::{Bytes, Node, NodeView, PageStore, Pieces, Value, grow_root, store_split};
use crate::error::Result;
use crate::page::{NO_PAGE, Page, PageId};

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
    let view = NodeView::new(id, &page)?;
    if view.is_leaf() {
        if entries.len() <= FEW
            && let Some(edits) = leaf_edits(id, &page, &entries)?
        {
            let mut old = Vec::new();
            let moved = patch(tx, id, &page, |bytes| {
                for edit in edits {
                    match edit {
                        Edit::Add { key, value, slot, at } => add_cell(bytes, slot, at, key, value),
                        Edit::Overwrite { start, value, was } => {
                            bytes[start..start + value.len()].copy_from_slice(value);
                            old.push(was);
                        }
                    }
                }
            })?;
            replaced.extend(old);
            return Ok(vec![(Bytes::default(), moved)]);
        }
        let Node::Leaf(old) = Node::decode(id, &page)? else { unreachable!("checked to be a leaf") };
        // Entries that all come after the page's keys are an append: fill pages fully, as a
        // single append does.
        let append = old.last().is_none_or(|(k, _)| *entries[0].0 > **k);
        let merged = merge_entries(old, entries, replaced);
        return store_split(tx, Some(id), Node::Leaf(merged), append);
    }
    let runs = split_runs(&view, entries)?;
    let last_child = view.child_count() - 1;
    let append = runs.last().is_some_and(|(slot, _, _)| *slot == last_child);
    // Children that did not stay where they were, by slot (descending, as runs were visited).
    let mut moved: Vec<(usize, Pieces)> = Vec::new();
    for (slot, child, run) in runs.into_iter().rev() {
        let sub = merge_at(tx, child, run, replaced)?;
        if !(sub.len() == 1 && sub[0].1 == child) {
            moved.push((slot, sub));
        }
    }
    if moved.is_empty() {
        // Every child was rewritten in place: this branch still points at them.
        return Ok(vec![(Bytes::default(), id)]);
    }
    if moved.iter().all(|(_, sub)| sub.len() == 1) {
        // Children moved without splitting: only their pointers change.
        let at = patch(tx, id, &page, |bytes| {
            for (slot, sub) in &moved {
                set_child(bytes, *slot, sub[0].1);
            }
        })?;
        return Ok(vec![(Bytes::default(), at)]);
    }
    let Node::Branch(mut children) = Node::decode(id, &page)? else { unreachable!("checked to be a branch") };
    for (slot, mut sub) in moved {
        sub[0].0 = std::mem::take(&mut children[slot].0);
        children.splice(slot..=slot, sub);
    }
    store_split(tx, Some(id), Node::Branch(children), append)
}

/// A leaf taking at most this many entries of a run is edited in a copy of its page when every
/// entry fits (most leaves of a large tree take one or two keys of a batch spread over it).
const FEW: usize = 4;

/// One change to a leaf page, made without decoding it.
enum Edit<'e> {
    /// A new key: its cell goes at offset `at`, its slot at `slot`.
    Add { key: &'e [u8], value: &'e Value, slot: usize, at: usize },
    /// A stored key whose inline value is replaced by one of the same length at `start`.
    Overwrite { start: usize, value: &'e [u8], was: Value },
}

/// When every entry is a new key whose cell fits the free space left by the ones before it, or
/// a stored key getting an inline value of its value's length: the edits, in the order to make
/// them. `None` sends the caller to the decode-and-merge path.
fn leaf_edits<'e>(id: PageId, page: &Page, entries: &'e [(Bytes, Value)]) -> Result<Option<Vec<Edit<'e>>>> {
    let mut edits = Vec::with_capacity(entries.len());
    let mut scratch = page.to_vec();
    for (i, (key, value)) in entries.iter().enumerate() {
        let view = NodeView::new(id, &scratch)?;
        match view.search(key)? {
            Err(slot) => {
                let Some(at) = room_for(&view, key, value) else { return Ok(None) };
                // Later entries see this one's cell, so their slots and the free space stay exact.
                if i + 1 < entries.len() {
                    add_cell(&mut scratch, slot, at, key, value);
                }
                edits.push(Edit::Add { key, value, slot, at });
            }
            Ok(found) => {
                let Value::Inline(new) = value else { return Ok(None) };
                let Ok((start, len)) = view.value_span(found)? else { return Ok(None) };
                if len != new.len() {
                    return Ok(None);
                }
                edits.push(Edit::Overwrite { start, value: new, was: view.value(found)? });
            }
        }
    }
    Ok(Some(edits))
}

/// Entries of one child of a branch: its slot, its page and the entries.
type Run = (usize, PageId, Vec<(Bytes, Value)>);

/// Cuts sorted `entries` into runs by the child of branch `view` each belongs under, in child
/// order.
fn split_runs(view: &NodeView<'_>, entries: Vec<(Bytes, Value)>) -> Result<Vec<Run>> {
    let count = view.child_count();
    let mut runs = Vec::new();
    let mut slot = view.child_slot(&entries[0].0)?;
    let mut run = Vec::new();
    for entry in entries {
        // Keys ascend, so the slot only moves right: step past separators (child i + 1's is
        // key i) instead of searching.
        let mut next = slot;
        while next + 1 < count && view.key(next)? <= &*entry.0 {
            next += 1;
        }
        if next != slot && !run.is_empty() {
            runs.push((slot, view.child(slot)?, std::mem::take(&mut run)));
        }
        slot = next;
        run.push(entry);
    }
    runs.push((slot, view.child(slot)?, run));
    Ok(runs)
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

#[cfg(test)]
mod tests {
    use crate::{Store, StoreOptions};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn key(i: u32) -> Vec<u8> {
        format!("k{i:08}").into_bytes()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Sorted runs of any density (one key a leaf, many a leaf, new and replaced keys, values
        /// inline and overflowing) merged into a multi-level tree give exactly the model's contents.
        #[test]
        fn sorted_runs_merge_like_single_puts(
            base in 1_000u32..6_000,
            runs in prop::collection::vec(prop::collection::vec((0u32..8_000, 0usize..3), 1..400), 1..4),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let opts = StoreOptions { cache_bytes: 1 << 20, checkpoint_bytes: 1 << 20, ..StoreOptions::default() };
            let store = Store::open(dir.path(), opts).unwrap();
            let mut model: BTreeMap<Vec<u8>, Vec<u8>> = (0..base).map(|i| (key(i * 2), vec![b'a'; 20])).collect();
            let seed = model.clone();
            store.write(move |tx| seed.iter().try_for_each(|(k, v)| tx.put("t", k, v))).unwrap();
            for run in runs {
                let puts: Vec<(Vec<u8>, Vec<u8>)> = run
                    .into_iter()
                    .map(|(i, size)| (key(i), vec![b'b'; [8, 300, 9_000][size]]))
                    .collect();
                for (k, v) in &puts {
                    model.insert(k.clone(), v.clone());
                }
                store.write(move |tx| puts.iter().try_for_each(|(k, v)| tx.put("t", k, v))).unwrap();
            }
            let snap = store.snapshot().unwrap();
            let got: Vec<(Vec<u8>, Vec<u8>)> = snap.prefix("t", b"").unwrap().map(Result::unwrap).collect();
            prop_assert_eq!(got.len(), model.len());
            prop_assert!(got.into_iter().eq(model.into_iter()));
            prop_assert_eq!(snap.tree_len("t").unwrap(), u64::try_from(snap.prefix("t", b"").unwrap().count()).unwrap());
            prop_assert!(store.check().unwrap().ok);
        }
    }
}
