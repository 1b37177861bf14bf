//! Insertion: copy the path from root to leaf, splitting nodes that overflow their page.

use super::{Bytes, Node, NodeView, PageStore, Pieces, Value, child_slot, grow_root, store_node, store_split};
use crate::error::Result;
use crate::page::{NO_PAGE, Page, PageId};

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
        let child = view.child(view.child_slot(key)?)?;
        let (sub, old) = insert_at(tx, child, key, value)?;
        if sub.len() == 1 && sub[0].1 == child {
            // The child was rewritten in place: this branch still points at it.
            return Ok((vec![(Bytes::default(), id)], old));
        }
        return Ok((replace_child(tx, id, &page, key, sub)?, old));
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
