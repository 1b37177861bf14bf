//! Deletion: copy the path, drop empty nodes, and merge a node that falls below a quarter full
//! with a sibling so the tree stays dense under deletes.

use super::node::MIN_FILL;
use super::{Bytes, Node, NodeView, PageStore, Pieces, Value, child_slot, grow_root, store_node};
use crate::error::Result;
use crate::page::{NO_PAGE, Page, PageId};

struct Removed {
    pieces: Pieces,
    underfull: bool,
    old: Value,
}

/// Deletes `key` from the tree at `root`; `None` when it was absent (nothing changed).
pub(crate) fn remove(tx: &mut impl PageStore, root: PageId, key: &[u8]) -> Result<Option<(PageId, Value)>> {
    if root == NO_PAGE {
        return Ok(None);
    }
    let Some(r) = remove_at(tx, root, key)? else { return Ok(None) };
    let mut root = grow_root(tx, r.pieces)?;
    // A root branch with a single child is replaced by that child.
    while root != NO_PAGE {
        let page = tx.page(root)?;
        match Node::decode(root, &page)? {
            Node::Branch(children) if children.len() == 1 => {
                tx.free(root);
                root = children[0].1;
            }
            _ => break,
        }
    }
    Ok(Some((root, r.old)))
}

fn remove_at(tx: &mut impl PageStore, id: PageId, key: &[u8]) -> Result<Option<Removed>> {
    let page = tx.page(id)?;
    let view = NodeView::new(id, &page)?;
    if !view.is_leaf() {
        let child = view.child(view.child_slot(key)?)?;
        let Some(r) = remove_at(tx, child, key)? else { return Ok(None) };
        if r.pieces.len() == 1 && r.pieces[0].1 == child && !r.underfull {
            // The child was rewritten in place and needs no merge: this branch is unchanged.
            let underfull = view.child_count() < 2;
            return Ok(Some(Removed { pieces: vec![(Bytes::default(), id)], underfull, old: r.old }));
        }
        return rebuild_branch(tx, id, &page, key, r);
    }
    match Node::decode(id, &page)? {
        Node::Leaf(mut entries) => {
            let Ok(i) = entries.binary_search_by(|(k, _)| (**k).cmp(key)) else { return Ok(None) };
            let old = entries.remove(i).1;
            finish(tx, id, Node::Leaf(entries), old)
        }
        Node::Branch(_) => unreachable!("branches are handled above"),
    }
}

/// Rewrites branch `id` after the removal below it: splices in the child's pieces and merges an
/// underfull child with a sibling.
fn rebuild_branch(tx: &mut impl PageStore, id: PageId, page: &Page, key: &[u8], r: Removed) -> Result<Option<Removed>> {
    match Node::decode(id, page)? {
        Node::Leaf(_) => unreachable!("checked to be a branch"),
        Node::Branch(mut children) => {
            let slot = child_slot(&children, key);
            let sep = std::mem::take(&mut children[slot].0);
            let merged = r.pieces.len() == 1 && r.underfull && children.len() > 1;
            let mut sub = r.pieces;
            if let Some(first) = sub.first_mut() {
                first.0 = sep;
            }
            children.splice(slot..=slot, sub);
            if let Some(first) = children.first_mut() {
                // The leftmost child covers everything below the next separator.
                first.0 = Bytes::default();
            }
            if merged {
                merge_with_sibling(tx, &mut children, slot)?;
            }
            finish(tx, id, Node::Branch(children), r.old)
        }
    }
}

fn finish(tx: &mut impl PageStore, id: PageId, node: Node, old: Value) -> Result<Option<Removed>> {
    if node.is_empty() {
        tx.free(id);
        return Ok(Some(Removed { pieces: Vec::new(), underfull: true, old }));
    }
    let underfull = node.size() < MIN_FILL || matches!(&node, Node::Branch(c) if c.len() < 2);
    let pieces = store_node(tx, Some(id), node)?;
    Ok(Some(Removed { pieces, underfull, old }))
}

/// Merges child `slot` with its right (or else left) neighbour, re-splitting if the two do not
/// fit one page.
fn merge_with_sibling(tx: &mut impl PageStore, children: &mut Pieces, slot: usize) -> Result<()> {
    let (l, r) = if slot + 1 < children.len() { (slot, slot + 1) } else { (slot - 1, slot) };
    let left_page = tx.page(children[l].1)?;
    let right_page = tx.page(children[r].1)?;
    let combined = match (Node::decode(children[l].1, &left_page)?, Node::decode(children[r].1, &right_page)?) {
        (Node::Leaf(mut a), Node::Leaf(b)) => {
            a.extend(b);
            Node::Leaf(a)
        }
        (Node::Branch(mut a), Node::Branch(mut b)) => {
            // The right node's leftmost child now needs the separator that led to the right node.
            b[0].0 = children[r].0.clone();
            a.extend(b);
            Node::Branch(a)
        }
        _ => return Err(crate::error::Error::corrupt(Some(children[l].1), "siblings at different depths")),
    };
    tx.free(children[l].1);
    tx.free(children[r].1);
    let mut pieces = store_node(tx, None, combined)?;
    pieces[0].0 = std::mem::take(&mut children[l].0);
    children.splice(l..=r, pieces);
    Ok(())
}
