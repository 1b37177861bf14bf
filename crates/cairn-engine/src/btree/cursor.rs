//! Ordered iteration from a starting bound, page by page, holding only the pages on the current
//! path (so a scan of any size uses a few pages of memory).

use super::{NodeView, PageSource, Value};
use crate::error::Result;
use crate::page::{NO_PAGE, Page, PageId};
use std::ops::Bound;

pub(crate) struct Cursor {
    /// From root to leaf: the page and the slot to visit next (child slot in branches, entry in
    /// the leaf).
    stack: Vec<(PageId, Page, usize)>,
}

impl Cursor {
    /// A cursor at the first entry at or after `start`.
    pub(crate) fn seek(src: &impl PageSource, root: PageId, start: Bound<&[u8]>) -> Result<Cursor> {
        let mut stack = Vec::new();
        if root == NO_PAGE {
            return Ok(Cursor { stack });
        }
        let mut id = root;
        loop {
            let page = src.page(id)?;
            let view = NodeView::new(id, &page)?;
            if view.is_leaf() {
                let idx = match start {
                    Bound::Unbounded => 0,
                    Bound::Included(k) => view.search(k)?.unwrap_or_else(|i| i),
                    Bound::Excluded(k) => match view.search(k)? {
                        Ok(i) => i + 1,
                        Err(i) => i,
                    },
                };
                stack.push((id, page, idx));
                return Ok(Cursor { stack });
            }
            let slot = match start {
                Bound::Unbounded => 0,
                Bound::Included(k) | Bound::Excluded(k) => view.child_slot(k)?,
            };
            let child = view.child(slot)?;
            stack.push((id, page, slot));
            id = child;
        }
    }

    /// The next entry, or `None` at the end of the tree.
    pub(crate) fn next(&mut self, src: &impl PageSource) -> Result<Option<(Vec<u8>, Value)>> {
        loop {
            let Some((id, page, idx)) = self.stack.last_mut() else { return Ok(None) };
            let view = NodeView::new(*id, page)?;
            if view.is_leaf() {
                if *idx < view.len() {
                    let out = (view.key(*idx)?.to_vec(), view.value(*idx)?);
                    *idx += 1;
                    return Ok(Some(out));
                }
                self.stack.pop();
                self.advance(src)?;
                continue;
            }
            unreachable!("the top of a cursor's stack is always a leaf");
        }
    }

    /// Moves to the next child of the nearest branch that has one, then down to its first leaf.
    fn advance(&mut self, src: &impl PageSource) -> Result<()> {
        while let Some((id, page, slot)) = self.stack.last_mut() {
            let view = NodeView::new(*id, page)?;
            if *slot + 1 < view.child_count() {
                *slot += 1;
                let mut child = view.child(*slot)?;
                loop {
                    let page = src.page(child)?;
                    let v = NodeView::new(child, &page)?;
                    let leaf = v.is_leaf();
                    let next = if leaf { NO_PAGE } else { v.child(0)? };
                    self.stack.push((child, page, 0));
                    if leaf {
                        return Ok(());
                    }
                    child = next;
                }
            }
            self.stack.pop();
        }
        Ok(())
    }
}
