//! Insertion: copy the path from root to leaf, splitting nodes that overflow their page.

use super::{Node, PageStore, Pieces, Value, child_slot, grow_root, store_node};
use crate::error::Result;
use crate::page::{NO_PAGE, PageId};

/// Puts `key` → `value` in the tree at `root`; returns the new root and the value replaced.
pub(crate) fn insert(
    tx: &mut impl PageStore,
    root: PageId,
    key: &[u8],
    value: Value,
) -> Result<(PageId, Option<Value>)> {
    if root == NO_PAGE {
        let pieces = store_node(tx, None, Node::Leaf(vec![(key.to_vec(), value)]))?;
        return Ok((grow_root(tx, pieces)?, None));
    }
    let (pieces, old) = insert_at(tx, root, key, value)?;
    Ok((grow_root(tx, pieces)?, old))
}

fn insert_at(tx: &mut impl PageStore, id: PageId, key: &[u8], value: Value) -> Result<(Pieces, Option<Value>)> {
    let page = tx.page(id)?;
    match Node::decode(id, &page)? {
        Node::Leaf(mut entries) => {
            let old = match entries.binary_search_by(|(k, _)| k.as_slice().cmp(key)) {
                Ok(i) => Some(std::mem::replace(&mut entries[i].1, value)),
                Err(i) => {
                    entries.insert(i, (key.to_vec(), value));
                    None
                }
            };
            Ok((store_node(tx, Some(id), Node::Leaf(entries))?, old))
        }
        Node::Branch(mut children) => {
            let slot = child_slot(&children, key);
            let (mut sub, old) = insert_at(tx, children[slot].1, key, value)?;
            sub[0].0 = std::mem::take(&mut children[slot].0);
            children.splice(slot..=slot, sub);
            Ok((store_node(tx, Some(id), Node::Branch(children))?, old))
        }
    }
}
