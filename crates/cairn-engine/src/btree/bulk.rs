//! Sorted merge: applies a run of puts and deletes, sorted by key and distinct, to a tree in one
//! pass. Each page the run touches is decoded and written once, however many entries land in it,
//! where applying them one by one would copy (and checksum) the root-to-leaf path per entry.
//! Pages emptied by deletes are dropped; pages left under-full stay so (the single-key `remove`
//! merges siblings; a run does not), which `compact` rewrites densely.

use super::insert::{add_cell, patch, room_for, set_child};
use super::{Bytes, Node, NodeView, PageStore, Pieces, Value, grow_root, store_split};
use crate::error::Result;
use crate::page::{NO_PAGE, Page, PageId};

/// One entry of a run: a put (`Some`) or a delete (`None`) of its key.
pub(crate) type Change = (Bytes, Option<Value>);

/// What merging a run did.
pub(crate) struct Merged {
    pub root: PageId,
    /// Values replaced or deleted (the caller frees their overflow chains).
    pub freed: Vec<Value>,
    /// Keys the tree did not hold before.
    pub added: u64,
    /// Keys deleted.
    pub removed: u64,
}

/// Applies every change of `run` (sorted by key, keys distinct) to the tree at `root`.
pub(crate) fn merge_sorted(tx: &mut impl PageStore, root: PageId, run: Vec<Change>) -> Result<Merged> {
    debug_assert!(run.windows(2).all(|w| *w[0].0 < *w[1].0), "a run must be sorted and distinct");
    let mut m = Merged { root, freed: Vec::new(), added: 0, removed: 0 };
    if run.is_empty() {
        return Ok(m);
    }
    let pieces = if root == NO_PAGE {
        let entries: Vec<(Bytes, Value)> = run.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))).collect();
        m.added = entries.len() as u64;
        if entries.is_empty() {
            return Ok(m);
        }
        store_split(tx, None, Node::Leaf(entries), true)?
    } else {
        merge_at(tx, root, run, &mut m)?
    };
    let mut root = grow_root(tx, pieces)?;
    // A root branch left with a single child is replaced by that child.
    while root != NO_PAGE {
        let page = tx.page(root)?;
        let view = NodeView::new(root, &page)?;
        if view.is_leaf() || view.child_count() > 1 {
            break;
        }
        tx.free(root);
        root = view.child(0)?;
    }
    m.root = root;
    Ok(m)
}

/// Applies `run` (all of whose keys belong under page `id`) to the subtree at `id`; returns the
/// pages that replace it, as `insert_at` does (none when it emptied).
fn merge_at(tx: &mut impl PageStore, id: PageId, run: Vec<Change>, m: &mut Merged) -> Result<Pieces> {
    let page = tx.page(id)?;
    let view = NodeView::new(id, &page)?;
    if view.is_leaf() {
        if run.len() <= FEW
            && let Some(edits) = leaf_edits(id, &page, &run)?
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
            m.added += (run.len() - old.len()) as u64;
            m.freed.extend(old);
            return Ok(vec![(Bytes::default(), moved)]);
        }
        let Node::Leaf(old) = Node::decode(id, &page)? else { unreachable!("checked to be a leaf") };
        // Puts that all come after the page's keys are an append: fill pages fully, as a single
        // append does.
        let append = old.last().is_none_or(|(k, _)| *run[0].0 > **k);
        let merged = merge_entries(old, run, m);
        if merged.is_empty() {
            tx.free(id);
            return Ok(Vec::new());
        }
        return store_split(tx, Some(id), Node::Leaf(merged), append);
    }
    let runs = split_runs(&view, run)?;
    let last_child = view.child_count() - 1;
    let append = runs.last().is_some_and(|(slot, _, _)| *slot == last_child);
    // Children that did not stay where they were, by slot (descending, as runs were visited).
    let mut moved: Vec<(usize, Pieces)> = Vec::new();
    for (slot, child, run) in runs.into_iter().rev() {
        let sub = merge_at(tx, child, run, m)?;
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
        if sub.is_empty() {
            children.remove(slot);
            continue;
        }
        sub[0].0 = std::mem::take(&mut children[slot].0);
        children.splice(slot..=slot, sub);
    }
    if children.is_empty() {
        tx.free(id);
        return Ok(Vec::new());
    }
    // The leftmost child covers everything below the next separator.
    children[0].0 = Bytes::default();
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

/// When every change is a put of a new key whose cell fits the free space left by the ones
/// before it, or of a stored key getting an inline value of its value's length: the edits, in
/// the order to make them. `None` (a delete among them, or something that does not fit) sends
/// the caller to the decode-and-merge path.
fn leaf_edits<'e>(id: PageId, page: &Page, run: &'e [Change]) -> Result<Option<Vec<Edit<'e>>>> {
    let mut edits = Vec::with_capacity(run.len());
    // A copy to add cells to, made only when a later change must see an earlier one's cell.
    let mut scratch: Option<Vec<u8>> = None;
    for (i, (key, value)) in run.iter().enumerate() {
        let Some(value) = value else { return Ok(None) };
        let view = NodeView::new(id, scratch.as_deref().unwrap_or(page))?;
        match view.search(key)? {
            Err(slot) => {
                let Some(at) = room_for(&view, key, value) else { return Ok(None) };
                // Later entries see this one's cell, so their slots and the free space stay exact.
                if i + 1 < run.len() {
                    add_cell(scratch.get_or_insert_with(|| page.to_vec()), slot, at, key, value);
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

/// Changes under one child of a branch: its slot, its page and the changes.
type Run = (usize, PageId, Vec<Change>);

/// Cuts sorted `run` by the child of branch `view` each change belongs under, in child order.
fn split_runs(view: &NodeView<'_>, run: Vec<Change>) -> Result<Vec<Run>> {
    let count = view.child_count();
    let mut runs = Vec::new();
    let mut slot = view.child_slot(&run[0].0)?;
    let mut part = Vec::new();
    for change in run {
        // Keys ascend, so the slot only moves right: step past separators (child i + 1's is
        // key i) instead of searching.
        let mut next = slot;
        while next + 1 < count && view.key(next)? <= &*change.0 {
            next += 1;
        }
        if next != slot && !part.is_empty() {
            runs.push((slot, view.child(slot)?, std::mem::take(&mut part)));
        }
        slot = next;
        part.push(change);
    }
    runs.push((slot, view.child(slot)?, part));
    Ok(runs)
}

/// A leaf's entries with `run` applied: a put replaces or adds its key, a delete drops it; values
/// replaced or deleted go to `m.freed`, and `m` counts keys added and removed.
fn merge_entries(old: Vec<(Bytes, Value)>, run: Vec<Change>, m: &mut Merged) -> Vec<(Bytes, Value)> {
    let mut out = Vec::with_capacity(old.len() + run.len());
    let mut old = old.into_iter().peekable();
    for (key, change) in run {
        while let Some(o) = old.next_if(|(k, _)| **k < *key) {
            out.push(o);
        }
        let was = old.next_if(|(k, _)| **k == *key).map(|(_, v)| v);
        match (&change, &was) {
            (Some(_), None) => m.added += 1,
            (None, Some(_)) => m.removed += 1,
            _ => {}
        }
        m.freed.extend(was);
        if let Some(value) = change {
            out.push((key, value));
        }
    }
    out.extend(old);
    out
}

#[cfg(test)]
mod tests {
    use crate::{Store, StoreOptions};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A key and its new value, or `None` to delete it.
    type Put = (Vec<u8>, Option<Vec<u8>>);

    fn key(i: u32) -> Vec<u8> {
        format!("k{i:08}").into_bytes()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Sorted runs of any density (one key a leaf, many a leaf, new and replaced keys, values
        /// inline and overflowing, deletes of present and absent keys, down to an empty tree)
        /// merged into a multi-level tree give exactly the model's contents and a clean check.
        #[test]
        fn sorted_runs_merge_like_single_changes(
            base in 1_000u32..6_000,
            runs in prop::collection::vec(prop::collection::vec((0u32..12_000, 0usize..5), 1..400), 1..4),
            wipe in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let opts = StoreOptions { cache_bytes: 1 << 20, checkpoint_bytes: 1 << 20, ..StoreOptions::default() };
            let store = Store::open(dir.path(), opts).unwrap();
            let mut model: BTreeMap<Vec<u8>, Vec<u8>> = (0..base).map(|i| (key(i * 2), vec![b'a'; 20])).collect();
            let seed = model.clone();
            store.write(move |tx| seed.iter().try_for_each(|(k, v)| tx.put("t", k, v))).unwrap();
            let mut runs: Vec<Vec<Put>> = runs
                .into_iter()
                // Sizes 0–2 put a value of 8, 300 or 9,000 bytes; 3 and 4 delete.
                .map(|run| run.into_iter().map(|(i, size)| (key(i), [8, 300, 9_000].get(size).map(|&n| vec![b'b'; n]))).collect())
                .collect();
            if wipe {
                // A last run deleting every key there can be: pages and branches empty out, the root goes.
                runs.push((0..12_000).map(|i| (key(i), None)).collect());
            }
            for changes in runs {
                let mut deleted = Vec::new();
                for (k, v) in &changes {
                    match v {
                        Some(v) => {
                            model.insert(k.clone(), v.clone());
                        }
                        None => deleted.push(model.remove(k).is_some()),
                    }
                }
                let (said, _) = store
                    .write(move |tx| {
                        let mut said = Vec::new();
                        for (k, v) in &changes {
                            match v {
                                Some(v) => tx.put("t", k, v)?,
                                None => said.push(tx.delete("t", k)?),
                            }
                        }
                        Ok(said)
                    })
                    .unwrap();
                prop_assert_eq!(said, deleted, "delete reports whether the key was there");
            }
            let snap = store.snapshot().unwrap();
            let got: Vec<(Vec<u8>, Vec<u8>)> = snap.prefix("t", b"").unwrap().map(Result::unwrap).collect();
            prop_assert_eq!(got.len(), model.len());
            prop_assert!(got.into_iter().eq(model.into_iter()));
            prop_assert_eq!(snap.tree_len("t").unwrap(), u64::try_from(snap.prefix("t", b"").unwrap().count()).unwrap());
            let report = store.check().unwrap();
            prop_assert!(report.ok, "{:?}", report.problems);
        }
    }
}
