//! Copy-on-write B+trees over pages: lookups and cursors for readers, insert and delete for the
//! writer, overflow chains for large values.

mod bulk;
mod bytes;
mod cursor;
mod insert;
mod node;
mod overflow;
mod remove;

pub(crate) use bulk::{Change, Merged, Packer, merge_sorted};
pub(crate) use bytes::Bytes;
pub(crate) use cursor::Cursor;
pub(crate) use insert::insert;
pub(crate) use node::{CAPACITY, Node, NodeView, Value, branch_entry_size, fits_inline, leaf_entry_size, leaf_size};
pub(crate) use overflow::{free_value, read_value, write_value};
pub(crate) use remove::remove;

use crate::error::Result;
use crate::page::{NO_PAGE, Page, PageId};

/// Pages that replace one page, each with the separator that leads to it (the first one's is
/// unused).
pub(crate) type Pieces = Vec<(Bytes, PageId)>;

/// Where a reader gets pages from.
pub(crate) trait PageSource {
    fn page(&self, id: PageId) -> Result<Page>;
}

/// Where the writer gets and puts pages. Frees are deferred to the end of the sub-transaction, so
/// a page freed here is never handed out again by `alloc` before then.
pub(crate) trait PageStore: PageSource {
    fn alloc(&mut self) -> Result<PageId>;
    fn free(&mut self, id: PageId);
    /// Whether `id` was allocated in the current sub-transaction and may be rewritten in place.
    fn is_fresh(&self, id: PageId) -> bool;
    fn write(&mut self, id: PageId, page: Page);
    /// Writes pages freshly allocated in this sub-transaction that it will not change again
    /// (a packed tree's leaves): a store may send them on towards the file at once instead of
    /// holding them until commit.
    fn write_final(&mut self, pages: Vec<(PageId, Page)>) -> Result<()> {
        for (id, page) in pages {
            self.write(id, page);
        }
        Ok(())
    }
    fn txn(&self) -> u64;
}

/// The value stored under `key`, if any.
pub(crate) fn get(src: &impl PageSource, root: PageId, key: &[u8]) -> Result<Option<Value>> {
    if root == NO_PAGE {
        return Ok(None);
    }
    let mut id = root;
    loop {
        let page = src.page(id)?;
        let view = NodeView::new(id, &page)?;
        if view.is_leaf() {
            return match view.search(key)? {
                Ok(i) => Ok(Some(view.value(i)?)),
                Err(_) => Ok(None),
            };
        }
        id = view.child(view.child_slot(key)?)?;
    }
}

/// Looks `key` up in a reader's file and hands its value to `f` (`None` when absent) without
/// copying an inline value out of its page first.
pub(crate) fn lookup<R>(
    file: &crate::pager::PageFile,
    root: PageId,
    key: &[u8],
    f: impl FnOnce(Option<&[u8]>) -> R,
) -> Result<R> {
    enum Step {
        Child(PageId),
        Absent,
        Overflow(Value),
        Done,
    }
    if root == NO_PAGE {
        return Ok(f(None));
    }
    let mut f = Some(f);
    let mut out = None;
    let mut id = root;
    loop {
        let step = file.with_page(id, |bytes| -> Result<Step> {
            let view = NodeView::new(id, bytes)?;
            if !view.is_leaf() {
                return Ok(Step::Child(view.child(view.child_slot(key)?)?));
            }
            let Ok(i) = view.search(key)? else { return Ok(Step::Absent) };
            match view.inline_value(i)? {
                Some(v) => {
                    out = Some((f.take().expect("called once"))(Some(v)));
                    Ok(Step::Done)
                }
                None => Ok(Step::Overflow(view.value(i)?)),
            }
        })??;
        match step {
            Step::Child(c) => id = c,
            Step::Absent => return Ok((f.take().expect("called once"))(None)),
            Step::Overflow(v) => {
                let bytes = read_value(file, v)?;
                return Ok((f.take().expect("called once"))(Some(&bytes)));
            }
            Step::Done => return Ok(out.expect("set when done")),
        }
    }
}

/// Writes `node` (split as needed) in place of page `old`; returns the pages with their
/// separators. `old` is reused when it is fresh, freed otherwise.
pub(crate) fn store_node(tx: &mut impl PageStore, old: Option<PageId>, node: Node) -> Result<Pieces> {
    store_split(tx, old, node, false)
}

/// As `store_node`; `packed` fills every page but the last (see `Node::split`).
pub(crate) fn store_split(tx: &mut impl PageStore, old: Option<PageId>, node: Node, packed: bool) -> Result<Pieces> {
    let pieces = node.split(packed);
    let mut out = Vec::with_capacity(pieces.len());
    let mut reused = false;
    for (i, (sep, piece)) in pieces.into_iter().enumerate() {
        let id = match old {
            Some(o) if i == 0 && tx.is_fresh(o) => {
                reused = true;
                o
            }
            _ => tx.alloc()?,
        };
        let page = piece.encode(id, tx.txn());
        tx.write(id, page);
        out.push((sep, id));
    }
    if let Some(o) = old
        && !reused
    {
        tx.free(o);
    }
    Ok(out)
}

/// Stacks branch levels over `pieces` until one root remains.
pub(crate) fn grow_root(tx: &mut impl PageStore, mut pieces: Pieces) -> Result<PageId> {
    while pieces.len() > 1 {
        pieces[0].0 = Bytes::default();
        pieces = store_node(tx, None, Node::Branch(pieces))?;
    }
    Ok(pieces.first().map_or(NO_PAGE, |p| p.1))
}

/// The child slot of a decoded branch that holds `key`.
pub(crate) fn child_slot(children: &[(Bytes, PageId)], key: &[u8]) -> usize {
    // children[0]'s separator is empty and so compares below every key.
    children.partition_point(|(sep, _)| &**sep <= key).saturating_sub(1)
}
