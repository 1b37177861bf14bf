//! Free pages. In memory: pages free now (`reusable`) and pages freed by a transaction but still
//! visible to a live snapshot or to the durable meta (`pending`). On disk: at each checkpoint the
//! free set is written as a chain of free-list pages (`count` u64 ids each, linked by `link`).
//!
//! A page freed by transaction T is no longer in any tree version >= T. It may be reused once
//! (a) every live snapshot is at version >= T, and (b) no durable meta reaches it: either it was
//! allocated after the last checkpoint (no durable meta ever reached it), or a checkpoint after T
//! has made a meta durable that does not; until then a crash would recover a tree that uses it.

use crate::btree::{CAPACITY, PageSource};
use crate::error::{Error, Result};
use crate::page::{self, HEADER_LEN, Kind, NO_PAGE, Page, PageBuilder, PageId, u64_at};
use crate::pager::PageFile;
use std::collections::{BTreeSet, HashSet, VecDeque};

/// Ids that fit one free-list page.
pub(crate) const IDS_PER_PAGE: usize = CAPACITY / 8;

/// A free list ready to be written at a checkpoint.
pub(crate) struct ListPages {
    /// The pages holding it, in chain order.
    pub(crate) holders: Vec<PageId>,
    /// Their images.
    pub(crate) pages: Vec<(PageId, Page)>,
    /// Free page ids it lists.
    pub(crate) entries: u64,
}

struct Pending {
    txn: u64,
    pages: Vec<PageId>,
}

pub(crate) struct Allocator {
    /// Every page id below this is in use or free.
    pub(crate) page_count: u64,
    /// Pages the data file has room for (it grows in extents).
    file_pages: u64,
    reusable: BTreeSet<PageId>,
    /// Freed pages that only wait for snapshots to move past them, in txn order.
    for_readers: VecDeque<Pending>,
    /// Freed pages the durable meta still reaches: they wait for the next checkpoint first.
    for_checkpoint: Vec<Pending>,
    /// Pages allocated since the last checkpoint: no durable meta reaches them, so once freed
    /// they wait only for snapshots.
    young: HashSet<PageId>,
    /// The pages holding the durable free list.
    pub(crate) list_pages: Vec<PageId>,
    /// Pages in the two queues (kept as counts so the writer's per-group checks stay O(1)).
    pending_pages: usize,
    awaiting_checkpoint: usize,
}

impl Allocator {
    pub(crate) fn new(page_count: u64, file_pages: u64, reusable: BTreeSet<PageId>, list_pages: Vec<PageId>) -> Self {
        Allocator {
            page_count,
            file_pages,
            reusable,
            for_readers: VecDeque::new(),
            for_checkpoint: Vec::new(),
            young: HashSet::new(),
            list_pages,
            pending_pages: 0,
            awaiting_checkpoint: 0,
        }
    }

    /// A page to write: the lowest reusable one, else a new one at the end of the file.
    pub(crate) fn alloc(&mut self, file: &PageFile) -> Result<PageId> {
        let id = if let Some(id) = self.reusable.pop_first() {
            id
        } else {
            let id = self.page_count;
            self.page_count += 1;
            if self.page_count > self.file_pages {
                // Grow by an eighth of the file, at least 1 MiB and at most 64 MiB.
                let extent = (self.file_pages / 8).clamp(256, 16_384);
                self.file_pages = self.page_count + extent;
                file.set_len_pages(self.file_pages)?;
            }
            id
        };
        self.young.insert(id);
        Ok(id)
    }

    /// Returns a page that was never visible to a reader or the durable meta.
    pub(crate) fn give_back(&mut self, id: PageId) {
        self.reusable.insert(id);
    }

    /// Records a page freed by transaction `txn`.
    pub(crate) fn retire(&mut self, txn: u64, id: PageId) {
        self.pending_pages += 1;
        let queue = if self.young.remove(&id) {
            match self.for_readers.back_mut() {
                Some(last) if last.txn == txn => return last.pages.push(id),
                _ => {
                    self.for_readers.push_back(Pending { txn, pages: vec![id] });
                    return;
                }
            }
        } else {
            &mut self.for_checkpoint
        };
        self.awaiting_checkpoint += 1;
        match queue.last_mut() {
            Some(last) if last.txn == txn => last.pages.push(id),
            _ => queue.push(Pending { txn, pages: vec![id] }),
        }
    }

    /// Makes reusable the freed pages no snapshot older than `oldest_reader` can see; returns
    /// them (they may still be staged in memory, unwritten, and need not be written now).
    pub(crate) fn release(&mut self, oldest_reader: u64) -> Vec<PageId> {
        let mut released = Vec::new();
        while self.for_readers.front().is_some_and(|p| p.txn <= oldest_reader) {
            let p = self.for_readers.pop_front().expect("front exists");
            self.pending_pages -= p.pages.len();
            self.reusable.extend(p.pages.iter().copied());
            released.extend(p.pages);
        }
        released
    }

    pub(crate) fn free_count(&self) -> u64 {
        (self.reusable.len() + self.pending_pages + self.list_pages.len()) as u64
    }

    /// Pages waiting for a checkpoint (the writer checkpoints early when many pile up).
    pub(crate) fn awaiting_checkpoint(&self) -> usize {
        self.awaiting_checkpoint
    }

    fn pending(&self) -> impl Iterator<Item = &Pending> {
        self.for_readers.iter().chain(self.for_checkpoint.iter())
    }

    /// Every page that is free on disk once the next meta is durable, in order.
    pub(crate) fn free_set(&self) -> BTreeSet<PageId> {
        let mut all: BTreeSet<PageId> = self.reusable.clone();
        for p in self.pending() {
            all.extend(p.pages.iter().copied());
        }
        all.extend(self.list_pages.iter().copied());
        all
    }

    /// Builds the free-list pages for a checkpoint. Pages to hold the list come from the
    /// reusable set (never from pages the durable meta still reaches), else from the end.
    pub(crate) fn build_list(&mut self, file: &PageFile, txn: u64) -> Result<ListPages> {
        let mut holders = Vec::new();
        let mut free = self.free_set();
        loop {
            let need = free.len().div_ceil(IDS_PER_PAGE);
            if holders.len() >= need {
                break;
            }
            match self.reusable.pop_first() {
                Some(id) => {
                    free.remove(&id);
                    holders.push(id);
                }
                None => holders.push(self.alloc(file)?),
            }
        }
        // Taking a holder shrinks the list, so the loop can end one holder over what the ids need
        // (one free page: it becomes the holder of an empty list). Every holder is written, empty
        // or not, because the meta will point at the chain.
        let ids: Vec<PageId> = free.into_iter().collect();
        let mut pages = Vec::with_capacity(holders.len());
        for i in 0..holders.len() {
            let chunk = ids.get(i * IDS_PER_PAGE..).map_or(&[][..], |rest| &rest[..rest.len().min(IDS_PER_PAGE)]);
            let mut b = PageBuilder::new(Kind::Freelist);
            b.set_count(chunk.len() as u16);
            b.set_link(holders.get(i + 1).copied().unwrap_or(NO_PAGE));
            for (j, id) in chunk.iter().enumerate() {
                let at = HEADER_LEN + 8 * j;
                b.bytes_mut()[at..at + 8].copy_from_slice(&id.to_le_bytes());
            }
            pages.push((holders[i], b.seal(holders[i], txn)));
        }
        Ok(ListPages { holders, pages, entries: ids.len() as u64 })
    }

    /// After the checkpoint's meta is durable: the old list pages are free, and pending pages now
    /// wait only for snapshots.
    pub(crate) fn checkpointed(&mut self, new_list_pages: Vec<PageId>) {
        let old = std::mem::replace(&mut self.list_pages, new_list_pages);
        self.reusable.extend(old);
        self.for_readers.extend(self.for_checkpoint.drain(..));
        self.for_readers.make_contiguous().sort_by_key(|p| p.txn);
        self.awaiting_checkpoint = 0;
        self.young.clear();
    }

    pub(crate) fn is_free(&self, id: PageId) -> bool {
        self.reusable.contains(&id) || self.list_pages.contains(&id) || self.pending().any(|p| p.pages.contains(&id))
    }
}

/// Reads a durable free list: the free ids and the pages holding them.
pub(crate) fn load(
    src: &impl PageSource,
    head: PageId,
    len: u64,
    page_count: u64,
) -> Result<(BTreeSet<PageId>, Vec<PageId>)> {
    let mut ids = BTreeSet::new();
    let mut holders = Vec::new();
    let mut id = head;
    while id != NO_PAGE {
        if holders.len() as u64 > len.div_ceil(IDS_PER_PAGE as u64) + 1 {
            return Err(Error::corrupt(Some(id), "free list is longer than its meta says"));
        }
        let p = src.page(id)?;
        page::expect_kind(id, &p, Kind::Freelist)?;
        let n = page::count(&p);
        if n > IDS_PER_PAGE {
            return Err(Error::corrupt(Some(id), "free-list page overfull"));
        }
        for j in 0..n {
            let free = u64_at(&p, HEADER_LEN + 8 * j);
            if free < 2 || free >= page_count {
                return Err(Error::corrupt(Some(id), format!("free-list entry {free} is outside the file")));
            }
            ids.insert(free);
        }
        holders.push(id);
        id = page::link(&p);
    }
    if ids.len() as u64 != len {
        return Err(Error::corrupt(Some(head), format!("free list holds {} pages, meta says {len}", ids.len())));
    }
    Ok((ids, holders))
}
