//! Insertion: copy the path from root to leaf, splitting nodes that overflow their page.

use super::node::OVERFLOW_FLAG;
use super::{
    Bytes, Node, NodeView, PageStore, Pieces, Value, child_slot, grow_root, leaf_entry_size, store_node, store_split,
};
use crate::error::Result;
use crate::limits::PAGE_SIZE;
use crate::page::{HEADER_LEN, NO_PAGE, Page, PageBuilder, PageId};

/// Puts `key` → `value` in the tree at `root`; returns the new root and the value replaced.
pub(crate) fn insert(
    tx: &mut impl PageStore,
    root: PageId,
    key: &[u8],
    value: Value,
) -> Result<(PageId, Option<Value>)> {
    if root == NO_PAGE {
        let pieces = store_node(tx, None, Node::Leaf(vec![(Bytes::from(key), value)]))?;
        return Ok((grow_root(tx, pieces)?, None));
    }
    let (pieces, old) = insert_at(tx, root, key, value)?;
    Ok((grow_root(tx, pieces)?, old))
}

fn insert_at(tx: &mut impl PageStore, id: PageId, key: &[u8], value: Value) -> Result<(Pieces, Option<Value>)> {
    let page = tx.page(id)?;
    let view = NodeView::new(id, &page)?;
    if !view.is_leaf() {
        let slot = view.child_slot(key)?;
        let child = view.child(slot)?;
        let (sub, old) = insert_at(tx, child, key, value)?;
        if sub.len() == 1 && sub[0].1 == child {
            // The child was rewritten in place: this branch still points at it.
            return Ok((vec![(Bytes::default(), id)], old));
        }
        if sub.len() == 1 {
            // The child moved without splitting: only its pointer changes.
            let moved = patch(tx, id, &page, |bytes| set_child(bytes, slot, sub[0].1))?;
            return Ok((vec![(Bytes::default(), moved)], old));
        }
        return Ok((replace_child(tx, id, &page, key, sub)?, old));
    }
    match view.search(key)? {
        Err(slot) => {
            if let Some(cell) = room_for(&view, key, &value) {
                // A new key that fits: add its cell and slot to a copy of the page, leaving every
                // other entry where it is (no decode, no re-encode).
                let moved = patch(tx, id, &page, |bytes| add_cell(bytes, slot, cell, key, &value))?;
                return Ok((vec![(Bytes::default(), moved)], None));
            }
        }
        Ok(i) => {
            if let Value::Inline(new) = &value
                && let Ok((start, len)) = view.value_span(i)?
                && len == new.len()
            {
                // A value replaced by one of the same length (a counter, a version): overwrite it.
                let old = view.value(i)?;
                let moved = patch(tx, id, &page, |bytes| bytes[start..start + len].copy_from_slice(new))?;
                return Ok((vec![(Bytes::default(), moved)], Some(old)));
            }
        }
    }
    match Node::decode(id, &page)? {
        Node::Leaf(mut entries) => {
            let mut append = false;
            let old = match entries.binary_search_by(|(k, _)| (**k).cmp(key)) {
                Ok(i) => Some(std::mem::replace(&mut entries[i].1, value)),
                Err(i) => {
                    append = i == entries.len();
                    entries.insert(i, (Bytes::from(key), value));
                    None
                }
            };
            Ok((store_split(tx, Some(id), Node::Leaf(entries), append)?, old))
        }
        Node::Branch(_) => unreachable!("branches are handled above"),
    }
}

/// Rewrites branch `id` with the child that holds `key` replaced by `sub`.
fn replace_child(tx: &mut impl PageStore, id: PageId, page: &Page, key: &[u8], mut sub: Pieces) -> Result<Pieces> {
    let Node::Branch(mut children) = Node::decode(id, page)? else { unreachable!("checked to be a branch") };
    let slot = child_slot(&children, key);
    let append = slot + 1 == children.len();
    sub[0].0 = std::mem::take(&mut children[slot].0);
    children.splice(slot..=slot, sub);
    store_split(tx, Some(id), Node::Branch(children), append)
}

/// Where a new leaf cell for `key` → `value` would go in the page of `view`: the offset of its
/// first byte, when the cell and its slot fit in the free space between the slot array and the
/// lowest cell. `Node::encode` packs cells at the end of the page; an edit in place
/// (`bulk::edit_leaf`) may leave a zeroed, unreferenced cell above the lowest, whose space a
/// re-encode gives back.
pub(super) fn room_for(view: &NodeView<'_>, key: &[u8], value: &Value) -> Option<usize> {
    let count = view.len();
    let lowest = (0..count).map(|i| view.cell_offset(i)).min().unwrap_or(PAGE_SIZE);
    let free = lowest.checked_sub(HEADER_LEN + 2 * count)?;
    let cell = leaf_entry_size(key, value) - 2;
    (free >= cell + 2).then(|| lowest - cell)
}

/// Inserts slot `slot` for a new cell written at `at` (see `room_for`).
pub(super) fn add_cell(bytes: &mut [u8], slot: usize, at: usize, key: &[u8], value: &Value) {
    let count = crate::page::count(bytes);
    let slots = HEADER_LEN + 2 * slot;
    bytes.copy_within(slots..HEADER_LEN + 2 * count, slots + 2);
    bytes[6..8].copy_from_slice(&u16::try_from(count + 1).expect("counts fit a page").to_le_bytes());
    set_cell(bytes, slot, at);
    write_cell(bytes, at, key, value);
}

/// Points slot `slot` of a leaf at the cell at `at`.
pub(super) fn set_cell(bytes: &mut [u8], slot: usize, at: usize) {
    let slots = HEADER_LEN + 2 * slot;
    bytes[slots..slots + 2].copy_from_slice(&u16::try_from(at).expect("offsets fit a page").to_le_bytes());
}

/// Drops slot `slot` of a leaf (its cell stays where it is, unreferenced); the freed slot bytes
/// at the end of the array are zeroed.
pub(super) fn remove_slot(bytes: &mut [u8], slot: usize) {
    let count = crate::page::count(bytes);
    let slots = HEADER_LEN + 2 * slot;
    let end = HEADER_LEN + 2 * count;
    bytes.copy_within(slots + 2..end, slots);
    bytes[end - 2..end].fill(0);
    bytes[6..8].copy_from_slice(&u16::try_from(count - 1).expect("counts fit a page").to_le_bytes());
}

/// Writes a leaf cell for `key` → `value` at `at` (its slot is set apart).
pub(super) fn write_cell(bytes: &mut [u8], at: usize, key: &[u8], value: &Value) {
    let key_len = u16::try_from(key.len()).expect("keys are checked against MAX_KEY_LEN");
    bytes[at..at + 2].copy_from_slice(&key_len.to_le_bytes());
    let body = at + 6 + key.len();
    bytes[at + 6..body].copy_from_slice(key);
    match value {
        Value::Inline(v) => {
            let len = u32::try_from(v.len()).expect("inline values are small");
            bytes[at + 2..at + 6].copy_from_slice(&len.to_le_bytes());
            bytes[body..body + v.len()].copy_from_slice(v);
        }
        Value::Overflow { first, len } => {
            bytes[at + 2..at + 6].copy_from_slice(&(len | OVERFLOW_FLAG).to_le_bytes());
            bytes[body..body + 8].copy_from_slice(&first.to_le_bytes());
        }
    }
}

/// Points child `slot` of a branch page at `child` (slot 0 is the header's link).
pub(super) fn set_child(bytes: &mut [u8], slot: usize, child: PageId) {
    let at = if slot == 0 {
        24
    } else {
        usize::from(u16::from_le_bytes([bytes[HEADER_LEN + 2 * (slot - 1)], bytes[HEADER_LEN + 2 * (slot - 1) + 1]]))
            + 2
    };
    bytes[at..at + 8].copy_from_slice(&child.to_le_bytes());
}

/// Writes a copy of page `id` changed by `edit`: in place when the page is fresh in this
/// sub-transaction, else at a new page (the old one freed). Returns where it went.
pub(super) fn patch(tx: &mut impl PageStore, id: PageId, page: &Page, edit: impl FnOnce(&mut [u8])) -> Result<PageId> {
    let mut b = PageBuilder::copy_of(page);
    edit(b.bytes_mut());
    let at = if tx.is_fresh(id) {
        id
    } else {
        let at = tx.alloc()?;
        tx.free(id);
        at
    };
    let sealed = b.seal(at, tx.txn());
    tx.write(at, sealed);
    Ok(at)
}
