//! Sorted merge: applies a run of puts and deletes, sorted by key and distinct, to a tree in one
//! pass. Each page the run touches is decoded and written once, however many entries land in it,
//! where applying them one by one would copy (and checksum) the root-to-leaf path per entry.
//! Pages emptied by deletes are dropped; pages left under-full stay so (the single-key `remove`
//! merges siblings; a run does not), which `compact` rewrites densely.

use super::insert::{add_cell, patch, remove_slot, room_for, set_cell, set_child, write_cell};
use super::node::OVERFLOW_FLAG;
use super::{
    Bytes, CAPACITY, Node, NodeView, PageStore, Pieces, Value, fits_inline, grow_root, leaf_size, store_split,
};
use crate::error::Result;
use crate::limits::PAGE_SIZE;
use crate::page::{HEADER_LEN, Kind, NO_PAGE, Page, PageBuilder, PageId};

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

/// Builds a new tree from entries given in key order, one leaf page at a time: each entry's cell
/// is written straight into the leaf being built (the layout `Node::encode` gives the same
/// entries), and the page is sealed and written as soon as the next entry would not fit; then
/// the branch levels are stacked over the leaves. Nothing per entry is allocated, and only one
/// page is held at once, so a bulk load's runs need not be built in memory first (fresh memory
/// costs the kernel's zeroing, which measured more than the page building itself; an owned key
/// and value per entry, then a copy into the page, measured a tenth of a load's CPU).
pub(crate) struct Packer {
    leaf: Leaf,
    pieces: Pieces,
    count: u64,
    /// Leaves sealed and not yet handed to the store (`PageStore::write_final`, in batches).
    done: Vec<(PageId, Page)>,
}

/// The leaf under construction: slots grow from the header, cells from the end of the page.
struct Leaf {
    page: PageBuilder,
    entries: u16,
    /// Where the next slot goes, and where the last cell written begins.
    slot: usize,
    end: usize,
    /// The page's first key: it separates this leaf from the one before.
    first: Vec<u8>,
}

impl Leaf {
    fn new() -> Leaf {
        Leaf { page: PageBuilder::new(Kind::Leaf), entries: 0, slot: HEADER_LEN, end: PAGE_SIZE, first: Vec::new() }
    }

    /// Payload bytes used, slots included (as `leaf_entry_size` counts them).
    fn fill(&self) -> usize {
        (self.slot - HEADER_LEN) + (PAGE_SIZE - self.end)
    }

    /// Writes the cell `key_len u16 | value_len u32 | key | stored` (`stored`: the value, or its
    /// overflow chain's first page) and its slot.
    fn add(&mut self, key: &[u8], len_word: u32, stored: &[u8]) {
        if self.entries == 0 {
            self.first.clear();
            self.first.extend_from_slice(key);
        }
        let cell = 6 + key.len() + stored.len();
        let at = self.end - cell;
        let (slot, end) = (self.slot, self.end);
        let bytes = self.page.bytes_mut();
        let key_len = u16::try_from(key.len()).expect("keys are far shorter than a page");
        bytes[at..at + 2].copy_from_slice(&key_len.to_le_bytes());
        bytes[at + 2..at + 6].copy_from_slice(&len_word.to_le_bytes());
        bytes[at + 6..at + 6 + key.len()].copy_from_slice(key);
        bytes[at + 6 + key.len()..end].copy_from_slice(stored);
        let offset = u16::try_from(at).expect("offsets are within a page");
        bytes[slot..slot + 2].copy_from_slice(&offset.to_le_bytes());
        self.slot += 2;
        self.end = at;
        self.entries += 1;
    }
}

/// Leaves handed to the store at once.
const FINAL_BATCH: usize = 256;

impl Packer {
    pub(crate) fn new() -> Self {
        Packer { leaf: Leaf::new(), pieces: Vec::new(), count: 0, done: Vec::new() }
    }

    /// Adds the entry after every one before it (the caller keeps keys ascending and distinct).
    pub(crate) fn push(&mut self, tx: &mut impl PageStore, key: &[u8], value: &[u8]) -> Result<()> {
        let overflow = if fits_inline(key, value.len()) {
            None
        } else {
            match super::write_value(tx, key, value)? {
                Value::Overflow { first, len } => Some((first, len)),
                Value::Inline(_) => unreachable!("a value that does not fit inline overflows"),
            }
        };
        let stored = if overflow.is_some() { 8 } else { value.len() };
        if self.leaf.entries > 0 && self.leaf.fill() + leaf_size(key.len(), stored) > CAPACITY {
            self.flush(tx)?;
        }
        self.count += 1;
        match overflow {
            None => self.leaf.add(key, u32::try_from(value.len()).expect("inline values are small"), value),
            Some((first, len)) => self.leaf.add(key, len | OVERFLOW_FLAG, &first.to_le_bytes()),
        }
        Ok(())
    }

    fn flush(&mut self, tx: &mut impl PageStore) -> Result<()> {
        let id = tx.alloc()?;
        let leaf = std::mem::replace(&mut self.leaf, Leaf::new());
        let Leaf { mut page, entries, first, .. } = leaf;
        page.set_count(entries);
        self.done.push((id, page.seal(id, tx.txn())));
        if self.done.len() == FINAL_BATCH {
            tx.write_final(std::mem::take(&mut self.done))?;
        }
        // The first leaf needs no separator.
        let sep = if self.pieces.is_empty() { Bytes::default() } else { Bytes::from(first) };
        self.pieces.push((sep, id));
        Ok(())
    }

    /// Writes the last leaf and the branch levels; returns the root (`NO_PAGE` when no entry
    /// came) and the number of entries.
    pub(crate) fn finish(mut self, tx: &mut impl PageStore) -> Result<(PageId, u64)> {
        if self.leaf.entries > 0 {
            self.flush(tx)?;
        }
        tx.write_final(std::mem::take(&mut self.done))?;
        Ok((grow_root(tx, self.pieces)?, self.count))
    }
}

/// Applies `run` (all of whose keys belong under page `id`) to the subtree at `id`; returns the
/// pages that replace it, as `insert_at` does (none when it emptied).
fn merge_at(tx: &mut impl PageStore, id: PageId, run: Vec<Change>, m: &mut Merged) -> Result<Pieces> {
    let page = tx.page(id)?;
    let view = NodeView::new(id, &page)?;
    if view.is_leaf() {
        if run.len() <= FEW
            && let Some(edited) = edit_leaf(id, &page, &run)?
        {
            let moved = patch(tx, id, &page, |bytes| bytes.copy_from_slice(&edited.bytes))?;
            m.added += edited.added;
            m.removed += edited.removed;
            m.freed.extend(edited.freed);
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

/// A leaf page with a few changes made in a copy of its bytes.
struct Edited {
    bytes: Vec<u8>,
    freed: Vec<Value>,
    added: u64,
    removed: u64,
}

/// Applies `run` to a copy of leaf `page` without decoding it: a new key's cell goes into the
/// free space, a stored key's inline value of the same length is overwritten, a value of another
/// length gets a new cell its slot is pointed at, a delete drops its slot. A cell left unused is
/// zeroed, so deleted data does not stay readable in the page; its space returns when the page
/// is next re-encoded. `None` when a cell does not fit or the leaf would end empty: the caller
/// decodes and merges (and frees an emptied page).
fn edit_leaf(id: PageId, page: &Page, run: &[Change]) -> Result<Option<Edited>> {
    let mut bytes = page.to_vec();
    let mut out = Edited { bytes: Vec::new(), freed: Vec::new(), added: 0, removed: 0 };
    for (key, change) in run {
        let view = NodeView::new(id, &bytes)?;
        match (view.search(key)?, change) {
            (Err(slot), Some(value)) => {
                let Some(at) = room_for(&view, key, value) else { return Ok(None) };
                add_cell(&mut bytes, slot, at, key, value);
                out.added += 1;
            }
            (Err(_), None) => {}
            (Ok(found), Some(value)) => {
                let was = view.value(found)?;
                match (view.value_span(found)?, value) {
                    (Ok((start, len)), Value::Inline(new)) if len == new.len() => {
                        bytes[start..start + len].copy_from_slice(new);
                    }
                    _ => {
                        let Some(at) = room_for(&view, key, value) else { return Ok(None) };
                        let (old_at, old_len) = (view.cell_offset(found), cell_len(&view, found)?);
                        write_cell(&mut bytes, at, key, value);
                        set_cell(&mut bytes, found, at);
                        bytes[old_at..old_at + old_len].fill(0);
                    }
                }
                out.freed.push(was);
            }
            (Ok(found), None) => {
                if view.len() == 1 {
                    return Ok(None);
                }
                out.freed.push(view.value(found)?);
                let (old_at, old_len) = (view.cell_offset(found), cell_len(&view, found)?);
                remove_slot(&mut bytes, found);
                bytes[old_at..old_at + old_len].fill(0);
                out.removed += 1;
            }
        }
    }
    out.bytes = bytes;
    Ok(Some(out))
}

/// Bytes of leaf cell `i`: its header, key and value (inline bytes or an overflow reference).
fn cell_len(view: &NodeView<'_>, i: usize) -> Result<usize> {
    let key = view.key(i)?.len();
    Ok(6 + key
        + match view.value_span(i)? {
            Ok((_, len)) => len,
            Err(_) => 8,
        })
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
    use super::{Bytes, Node, NodeView, Value, edit_leaf};
    use crate::page::{Page, PageId};
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

    fn inline(v: &[u8]) -> Value {
        Value::Inline(Bytes::Owned(v.to_vec()))
    }

    /// Deletes and replaces of another size made in place keep the order and leave none of the
    /// old values' bytes in the page.
    #[test]
    fn a_leaf_edited_in_place_keeps_order_and_forgets_old_values() {
        let entries: Vec<(Bytes, Value)> = (0..40u32)
            .map(|i| {
                let v = if i % 10 == 3 { format!("SECRET-{i:04}") } else { "plain".to_owned() };
                (Bytes::Owned(key(i * 2)), inline(v.as_bytes()))
            })
            .collect();
        let page = Node::Leaf(entries).encode(9, 1);
        let run = vec![
            (Bytes::Owned(key(6)), None),
            (Bytes::Owned(key(7)), Some(inline(b"new key"))),
            (Bytes::Owned(key(26)), Some(inline(b"a longer value than before"))),
            (Bytes::Owned(key(999)), None),
        ];
        let edited = edit_leaf(9, &page, &run).unwrap().expect("fits in place");
        assert_eq!((edited.added, edited.removed, edited.freed.len()), (1, 1, 2));
        let bytes = &edited.bytes;
        let view = NodeView::new(9, bytes).unwrap();
        let keys: Vec<Vec<u8>> = (0..view.len()).map(|i| view.key(i).unwrap().to_vec()).collect();
        let mut want: Vec<Vec<u8>> = (0..40).map(|i| key(i * 2)).filter(|k| *k != key(6)).collect();
        want.push(key(7));
        want.sort();
        assert_eq!(keys, want);
        let at = |k: &[u8]| view.inline_value(view.search(k).unwrap().unwrap()).unwrap().unwrap().to_vec();
        assert_eq!(at(&key(26)), b"a longer value than before");
        assert_eq!(at(&key(7)), b"new key");
        assert_eq!(at(&key(46)), b"SECRET-0023");
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains("SECRET-0003") && !text.contains("SECRET-0013"), "old values are zeroed");
    }

    /// Pages in memory, for the packer alone.
    #[derive(Default)]
    struct MemPages {
        pages: BTreeMap<PageId, Page>,
        next: PageId,
    }

    impl super::super::PageSource for MemPages {
        fn page(&self, id: PageId) -> crate::error::Result<Page> {
            Ok(self.pages[&id].clone())
        }
    }

    impl super::PageStore for MemPages {
        fn alloc(&mut self) -> crate::error::Result<PageId> {
            self.next += 1;
            Ok(self.next + 1)
        }
        fn free(&mut self, _: PageId) {}
        fn is_fresh(&self, _: PageId) -> bool {
            true
        }
        fn write(&mut self, id: PageId, page: Page) {
            self.pages.insert(id, page);
        }
        fn txn(&self) -> u64 {
            7
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

        /// Leaves packed cell by cell hold exactly the bytes `Node::encode` gives their entries
        /// (so a packed tree is the one a node-by-node build leaves), every entry reads back in
        /// order, overflowing values included, and the tree's count is the entries'.
        #[test]
        fn packed_leaves_are_what_encoding_their_entries_gives(
            sizes in prop::collection::vec((0usize..40, 0usize..6), 1..1_500),
        ) {
            let entries: Vec<(Vec<u8>, Vec<u8>)> = sizes
                .iter()
                .enumerate()
                .map(|(i, &(k, v))| {
                    let mut key = key(u32::try_from(i).unwrap());
                    key.extend(std::iter::repeat_n(b'k', k));
                    (key, vec![(i % 251) as u8; [0, 3, 60, 700, 1_990, 9_000][v]])
                })
                .collect();
            let mut store = MemPages::default();
            let mut packer = super::Packer::new();
            for (k, v) in &entries {
                packer.push(&mut store, k, v).unwrap();
            }
            let (root, count) = packer.finish(&mut store).unwrap();
            prop_assert_eq!(count, entries.len() as u64);
            for (&id, page) in &store.pages {
                if crate::page::kind(page) == Some(crate::page::Kind::Leaf) {
                    let node = Node::decode(id, page).unwrap();
                    prop_assert_eq!(&node.encode(id, 7)[..], &page[..], "leaf {}", id);
                }
            }
            for (k, v) in &entries {
                let value = super::super::get(&store, root, k).unwrap().expect("every entry is found");
                prop_assert_eq!(&super::super::read_value(&store, value).unwrap(), v);
            }
        }
    }
}
