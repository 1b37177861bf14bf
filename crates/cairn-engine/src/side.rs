//! Sorted runs into empty trees packed on a helper thread while the writer thread packs others in
//! the same transaction (a bulk load's history trees beside its record trees:
//! `WriteTxn::with_side`). The helper cannot touch the transaction, so:
//! - page ids come from a pool (`IdPool`) the writer fills from the transaction's allocator,
//!   topping it up whenever it allocates a page of its own, or while it waits for the helper;
//! - finished leaves are staged for the file at once (`PageFile::stage`, which serialises its
//!   callers), as the writer's own packed leaves are (`PageStore::write_final`);
//! - the few other pages (branches, overflow chains) and each tree's root are handed back for the
//!   writer to adopt when the helper is done, with any page it freed.

use crate::batch::{validate_key, validate_value};
use crate::btree::{self, PageSource, PageStore};
use crate::error::{Error, Result};
use crate::page::{Page, PageId};
use crate::pager::PageFile;
use crate::snapshot::TreeRoot;
use crate::write::{Run, Runs, after_last};
use std::collections::HashSet;
use std::sync::{Condvar, Mutex};

/// Ids the writer hands over at a time; a helper asks for more when it holds fewer than this.
/// Small, so that few are left over (they go back to the allocator, but the file has grown by
/// them).
pub(crate) const ID_BATCH: usize = 256;

/// Page ids passed from the writer to the helper.
#[derive(Default)]
pub(crate) struct IdPool {
    state: Mutex<PoolState>,
    changed: Condvar,
}

#[derive(Default)]
struct PoolState {
    ids: Vec<PageId>,
    /// The helper holds fewer than `ID_BATCH` ids.
    wanted: bool,
    /// The helper is done (or failed): no more ids are wanted.
    finished: bool,
    /// The writer failed: the helper must stop.
    cancelled: bool,
}

/// What the writer does next for a pool it serves.
pub(crate) enum Serve {
    TopUp,
    Done,
}

impl IdPool {
    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// An id for the helper, waiting for the writer when none is left.
    fn take(&self) -> Result<PageId> {
        let mut s = self.lock();
        loop {
            if s.cancelled {
                return Err(Error::Failed("the writer stopped the helper packing beside it".into()));
            }
            if s.ids.len() <= ID_BATCH && !s.wanted {
                s.wanted = true;
                self.changed.notify_all();
            }
            if let Some(id) = s.ids.pop() {
                return Ok(id);
            }
            s = self.changed.wait(s).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Whether the helper asks for ids (checked by the writer at each of its own allocations).
    pub(crate) fn wanted(&self) -> bool {
        let s = self.lock();
        s.wanted && !s.finished
    }

    /// Adds `ids` (the writer's).
    pub(crate) fn fill(&self, ids: impl IntoIterator<Item = PageId>) {
        let mut s = self.lock();
        s.ids.extend(ids);
        s.wanted = false;
        self.changed.notify_all();
    }

    /// Waits until the helper wants ids (and is not cancelled) or is done.
    pub(crate) fn serve(&self) -> Serve {
        let mut s = self.lock();
        loop {
            if s.finished {
                return Serve::Done;
            }
            if s.wanted && !s.cancelled {
                return Serve::TopUp;
            }
            s = self.changed.wait(s).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// The helper is done.
    fn finish(&self) {
        self.lock().finished = true;
        self.changed.notify_all();
    }

    /// The writer failed: the helper's next allocation fails.
    pub(crate) fn cancel(&self) {
        self.lock().cancelled = true;
        self.changed.notify_all();
    }

    /// The ids the helper did not use.
    pub(crate) fn leftover(&self) -> Vec<PageId> {
        std::mem::take(&mut self.lock().ids)
    }
}

/// Marks the pool finished when the helper's work ends, however it ends (a panic included), so the
/// writer waiting on it goes on.
pub(crate) struct Finished<'p>(pub(crate) &'p IdPool);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// The helper's side of the transaction: the trees it may fill and what it wrote.
pub(crate) struct SidePages<'f> {
    file: &'f PageFile,
    pool: &'f IdPool,
    txn: u64,
    /// Trees this side may fill (empty when the side began), each at most once.
    open: Vec<String>,
    fresh: HashSet<PageId>,
    /// What the writer adopts: pages written but not staged, pages freed, and the trees built.
    pub(crate) written: Vec<(PageId, Page)>,
    pub(crate) freed: Vec<PageId>,
    pub(crate) trees: Vec<(String, TreeRoot)>,
    /// A staged batch failed to reach the file (the writer then fails its group, as for its own).
    pub(crate) stage_failed: bool,
}

impl<'f> SidePages<'f> {
    pub(crate) fn new(file: &'f PageFile, pool: &'f IdPool, txn: u64, trees: &[&str]) -> Self {
        SidePages {
            file,
            pool,
            txn,
            open: trees.iter().map(|t| (*t).to_owned()).collect(),
            fresh: HashSet::new(),
            written: Vec::new(),
            freed: Vec::new(),
            trees: Vec::new(),
            stage_failed: false,
        }
    }
}

impl PageSource for SidePages<'_> {
    fn page(&self, id: PageId) -> Result<Page> {
        match self.written.iter().rev().find(|(w, _)| *w == id) {
            Some((_, p)) => Ok(p.clone()),
            None => self.file.read(id),
        }
    }
}

impl PageStore for SidePages<'_> {
    fn alloc(&mut self) -> Result<PageId> {
        let id = self.pool.take()?;
        self.fresh.insert(id);
        Ok(id)
    }
    fn free(&mut self, id: PageId) {
        self.freed.push(id);
    }
    fn is_fresh(&self, id: PageId) -> bool {
        self.fresh.contains(&id)
    }
    fn write(&mut self, id: PageId, page: Page) {
        self.written.push((id, page));
    }
    fn write_final(&mut self, pages: Vec<(PageId, Page)>) -> Result<()> {
        let staged = self.file.stage(pages);
        self.stage_failed |= staged.is_err();
        staged
    }
    fn txn(&self) -> u64 {
        self.txn
    }
}

/// A run into one of the side's empty trees. Entries in key order are packed as they come;
/// otherwise (`ordered` false) they are held and sorted at `finish`, then packed.
pub(crate) struct SideRun<'s, 'f> {
    side: &'s mut SidePages<'f>,
    tree: String,
    ordered: bool,
    packer: btree::Packer,
    held: Vec<(Vec<u8>, Vec<u8>)>,
    /// The last key packed, to refuse one out of order.
    last: Option<Vec<u8>>,
}

impl<'f> Runs for SidePages<'f> {
    type Run<'r>
        = SideRun<'r, 'f>
    where
        Self: 'r;

    fn run(&mut self, tree: &str, ordered: bool) -> Result<SideRun<'_, 'f>> {
        let Some(at) = self.open.iter().position(|t| t == tree) else {
            return Err(Error::InvalidArgument(format!("{tree} is not a tree this side may fill, or is filled")));
        };
        let tree = self.open.swap_remove(at);
        Ok(SideRun { side: self, tree, ordered, packer: btree::Packer::new(), held: Vec::new(), last: None })
    }
}

impl SideRun<'_, '_> {
    fn pack(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        after_last(&mut self.last, key, &self.tree)?;
        self.packer.push(self.side, key, value)
    }
}

impl Run for SideRun<'_, '_> {
    fn push(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        validate_key(key)?;
        validate_value(value)?;
        if self.ordered {
            self.pack(key, value)
        } else {
            self.held.push((key.to_vec(), value.to_vec()));
            Ok(())
        }
    }

    fn finish(mut self) -> Result<()> {
        let mut held = std::mem::take(&mut self.held);
        held.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (k, v) in &held {
            self.pack(k, v)?;
        }
        let (root, len) = self.packer.finish(self.side)?;
        if len > 0 {
            self.side.trees.push((self.tree, TreeRoot { root, len }));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Store, StoreOptions};
    use crate::write::{Run, Runs};
    use std::ops::Bound;

    fn opts() -> StoreOptions {
        StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }
    }

    fn key(i: u32) -> Vec<u8> {
        format!("key-{i:08}").into_bytes()
    }

    /// Entries enough for many more pages than one batch of ids (forcing top-ups), some values
    /// large enough for overflow chains.
    fn value(i: u32) -> Vec<u8> {
        vec![(i % 251) as u8; if i.is_multiple_of(997) { 9_000 } else { 60 + (i % 40) as usize }]
    }

    const N: u32 = 40_000;

    fn entries(store: &Store, tree: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
        let snap = store.snapshot().unwrap();
        snap.range(tree, Bound::Unbounded, Bound::Unbounded).unwrap().collect::<crate::error::Result<_>>().unwrap()
    }

    #[test]
    fn trees_filled_beside_the_writer_are_the_transactions_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        store
            .write(|tx| {
                assert!(tx.trees_empty(&["s.a", "s.b"])?);
                let side = |pages: &mut super::SidePages<'_>| {
                    let mut run = pages.run("s.a", true)?;
                    for i in 0..N {
                        run.push(&key(i), &value(i))?;
                    }
                    run.finish()?;
                    // Given out of order, sorted at the end.
                    let mut run = pages.run("s.b", false)?;
                    for i in (0..N).rev() {
                        run.push(&key(i), b"b")?;
                    }
                    run.finish()
                };
                let here = |tx: &mut crate::write::WriteTxn<'_>| {
                    let mut run = tx.run("m", true)?;
                    for i in 0..N {
                        run.push(&key(i), &value(i + 1))?;
                    }
                    run.finish()
                };
                tx.with_side(&["s.a", "s.b"], side, here).map(|_| ())
            })
            .unwrap();
        let check = |store: &Store| {
            let report = store.check().unwrap();
            assert!(report.ok, "{:?}", report.problems);
            let a = entries(store, "s.a");
            assert_eq!(a.len(), N as usize);
            assert!(a.iter().enumerate().all(|(i, (k, v))| *k == key(i as u32) && *v == value(i as u32)));
            let b = entries(store, "s.b");
            assert_eq!(b.len(), N as usize);
            assert!(b.iter().enumerate().all(|(i, (k, v))| *k == key(i as u32) && v == b"b"));
            assert_eq!(entries(store, "m").len(), N as usize);
        };
        check(&store);
        store.close().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        check(&store);
    }

    /// `N` entries into "s", one of them out of order when `out_of_order`.
    fn fill(pages: &mut super::SidePages<'_>, out_of_order: bool) -> crate::error::Result<()> {
        let mut run = pages.run("s", true)?;
        for i in 0..N {
            run.push(&key(if out_of_order && i == N / 2 { 0 } else { i }), &value(i))?;
        }
        run.finish()
    }

    #[test]
    fn a_failure_on_either_side_fails_the_write_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        // The writer fails while the helper packs: the helper is stopped, not left waiting.
        let failed = store.write(move |tx| {
            tx.with_side(&["s"], |p| fill(p, false), |_| Err::<(), _>(crate::error::Error::Failed("here".into())))
        });
        assert!(failed.is_err());
        // The helper fails (a key out of order): the write fails naming the tree.
        let failed = store.write(move |tx| tx.with_side(&["s"], |p| fill(p, true), |_| Ok(())));
        let message = failed.unwrap_err().to_string();
        assert!(message.contains("sorted run for s"), "{message}");
        // A tree this side was not given is refused.
        let failed = store.write(|tx| tx.with_side(&["s"], |p| p.run("t", true).map(|_| ()), |_| Ok(())));
        assert!(failed.unwrap_err().to_string().contains("not a tree this side may fill"));
        assert!(entries(&store, "s").is_empty());
        let report = store.check().unwrap();
        assert!(report.ok, "{:?}", report.problems);
        // The store goes on.
        store.write(|tx| tx.put("s", b"k", b"v")).unwrap();
        assert_eq!(store.get("s", b"k").unwrap(), Some(b"v".to_vec()));
    }
}
