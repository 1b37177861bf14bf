//! The writer's state and write transactions. One thread owns `Core`; each queued write runs as a
//! sub-transaction of the current group: its own txn id, its own rollback on error, and pages it
//! allocated may be rewritten in place until it ends. A committed sub-transaction's changes wait
//! in the group's buffer and are merged into their trees once for the whole group (`settle`), so
//! a page that several writes of a group touch is rewritten once, not once per write.

use crate::batch::{Batch, Op, encode_op, validate_key, validate_tree_name, validate_value};
use crate::btree::{self, PageSource, PageStore, Value};
use crate::error::Result;
use crate::freelist::Allocator;
use crate::page::{NO_PAGE, Page, PageId};
use crate::pager::PageFile;
use crate::side::{Finished, ID_BATCH, IdPool, Serve, SidePages};
use crate::snapshot::TreeRoot;
use crate::wal::Wal;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;

/// Everything the writer thread owns.
pub(crate) struct Core {
    pub(crate) file: Arc<PageFile>,
    pub(crate) wal: Wal,
    pub(crate) alloc: Allocator,
    /// Tree roots after the last committed sub-transaction.
    pub(crate) trees: Arc<BTreeMap<String, TreeRoot>>,
    /// Trees whose roots changed since the catalog was last written (at a checkpoint).
    pub(crate) catalog_dirty: BTreeSet<String>,
    /// The catalog tree as of the last checkpoint.
    pub(crate) catalog_root: PageId,
    pub(crate) last_txn: u64,
    /// Pages written in the current group, not yet in the data file.
    pub(crate) dirty: HashMap<PageId, Page>,
    /// Pages allocated in the current group (never seen by a reader).
    pub(crate) group_fresh: HashSet<PageId>,
    /// Changes of the group's committed sub-transactions not yet in their trees, by tree and key
    /// (the latest change of a key winning). Later sub-transactions read through them.
    pub(crate) group_pending: BTreeMap<String, Pending>,
    /// The bytes of the keys and values in `group_pending`.
    pub(crate) group_pending_bytes: usize,
    /// Set while `settle` merges: still set once it has returned means the merge broke off,
    /// leaving the group's trees half-merged, so the group must fail.
    pub(crate) settling: bool,
    /// A committed sub-transaction of the group wrote runs that are in no redo record
    /// (`WriteTxn::put_sorted`, a bulk `WriteTxn::delete_prefix`): the group is made durable by a
    /// checkpoint, not by the log.
    pub(crate) group_unlogged: bool,
    /// A background write of pages failed while a transaction staged its final pages
    /// (`write_final`): pages of earlier commits may not be in the file, so the group must fail.
    pub(crate) write_back_failed: bool,
    /// Redo-record buffers of logged groups, cleared, for the next transactions: a record grows
    /// to megabytes for a large write (a `remember` of 500 passages), and a fresh buffer each time
    /// was copied at every doubling and faulted in as new memory.
    pub(crate) spare_logs: Vec<Vec<u8>>,
}

/// Keys of one prefix `WriteTxn::delete_prefix` deletes through the redo record, key by key; past
/// it, the prefix goes in bulk and its group is checkpointed (a checkpoint syncs the data file,
/// dearer than logging a forget of a few thousand keys).
pub(crate) const LOGGED_DELETE_MAX: usize = 4096;

/// Bytes of one transaction's redo record past which it is dropped and the transaction's group
/// checkpointed instead (`WriteTxn::log_op`); a `remember` of 500 passages logs ~1.4 MB.
pub(crate) const LOG_RECORD_MAX: usize = 32 << 20;

/// Keys a bulk `WriteTxn::delete_prefix` deletes in one merge: what it holds at once.
pub(crate) const BULK_DELETE_CHUNK: usize = 16_384;

/// Buffers `Core::spare_logs` keeps (a group's records are one per write; a few cover the
/// writes that come together), and the largest it keeps.
const SPARE_LOGS: usize = 8;
const SPARE_LOG_MAX: usize = 32 << 20;

/// Entries of a tree as reads return them: key and value, in key order.
pub(crate) type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Changes waiting for their tree, by key: a put (`Some`) or a delete (`None`).
pub(crate) type Pending = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

impl Core {
    /// Hands the group's pages to the data file, which writes them out in bulk later (the log
    /// holds the durability until a checkpoint).
    pub(crate) fn flush_pages(&mut self) -> Result<()> {
        debug_assert!(self.group_pending.is_empty(), "settle before flushing pages");
        let pages: Vec<(PageId, Page)> = self.dirty.drain().collect();
        self.group_fresh.clear();
        self.file.stage(pages)
    }

    /// Merges the group's waiting changes into their trees, as one more sub-transaction of the
    /// group under the last committed txn id (the changes are already in that id's redo records
    /// or earlier ones; the pages they free are retired no earlier than they were).
    pub(crate) fn settle(&mut self) -> Result<()> {
        if self.group_pending.is_empty() {
            return Ok(());
        }
        self.settling = true;
        let pending = std::mem::take(&mut self.group_pending);
        let bytes = std::mem::take(&mut self.group_pending_bytes);
        let txn = self.last_txn;
        let mut tx = WriteTxn::new(self, txn);
        tx.pending = pending;
        tx.pending_bytes = bytes;
        tx.flush()?;
        debug_assert_eq!(tx.pending_bytes, 0, "the group's count is what waited");
        let log = tx.commit();
        debug_assert!(log.is_empty(), "settling writes no redo record");
        self.recycle_logs([log]);
        self.settling = false;
        Ok(())
    }

    /// Keeps the redo-record buffers of a group whose records are logged (or were not needed) for
    /// the transactions to come.
    pub(crate) fn recycle_logs(&mut self, logs: impl IntoIterator<Item = Vec<u8>>) {
        for mut log in logs {
            if self.spare_logs.len() == SPARE_LOGS {
                return;
            }
            if log.capacity() <= SPARE_LOG_MAX {
                log.clear();
                self.spare_logs.push(log);
            }
        }
    }

    fn read(&self, id: PageId) -> Result<Page> {
        match self.dirty.get(&id) {
            Some(p) => Ok(p.clone()),
            None => self.file.read(id),
        }
    }
}

/// A write transaction. Reads see its own writes. Returned by nothing: the store hands one to
/// the closure given to `Store::write`.
pub struct WriteTxn<'a> {
    core: &'a mut Core,
    txn: u64,
    /// Roots this transaction changed.
    trees: BTreeMap<String, TreeRoot>,
    allocated: Vec<PageId>,
    fresh: HashSet<PageId>,
    freed: Vec<PageId>,
    /// Earlier images of pages this transaction rewrote in place that earlier transactions of the
    /// same group wrote (never seen by a reader): restored on rollback.
    undo: Vec<(PageId, Page)>,
    /// The redo record: every change in batch encoding.
    log: Vec<u8>,
    /// Changes not yet in their trees, by tree and key: a put (`Some`) or a delete (`None`), the
    /// last change of a key winning. A tree's changes are merged in key order, each touched page
    /// written once (`btree::merge_sorted`), before anything counts the tree's entries and before
    /// the transaction ends; point reads and scans consult them first, so the transaction always
    /// sees its own writes.
    pending: BTreeMap<String, Pending>,
    /// Bytes of keys and values in `pending`.
    pending_bytes: usize,
    /// This transaction wrote runs that are not in `log` (see `put_sorted`).
    unlogged: bool,
    /// The pool a helper packing beside this thread takes page ids from (`with_side`), topped up
    /// at each allocation here while it asks.
    side_pool: Option<Arc<IdPool>>,
}

/// Pending changes are merged into their trees once they hold this many bytes.
pub(crate) const PENDING_LIMIT: usize = 16 << 20;

impl PageSource for WriteTxn<'_> {
    fn page(&self, id: PageId) -> Result<Page> {
        self.core.read(id)
    }
}

impl PageStore for WriteTxn<'_> {
    fn alloc(&mut self) -> Result<PageId> {
        if let Some(pool) = self.side_pool.as_ref().filter(|p| p.wanted()).cloned() {
            self.top_up(&pool)?;
        }
        let id = self.core.alloc.alloc(&self.core.file)?;
        self.allocated.push(id);
        self.fresh.insert(id);
        Ok(id)
    }
    fn free(&mut self, id: PageId) {
        self.freed.push(id);
    }
    fn is_fresh(&self, id: PageId) -> bool {
        // A page written earlier in this group has been seen by no reader and is in no durable
        // state, so it is rewritten in place; `undo` keeps what a rollback must restore.
        self.fresh.contains(&id) || self.core.group_fresh.contains(&id)
    }
    fn write(&mut self, id: PageId, page: Page) {
        if let Some(old) = self.core.dirty.insert(id, page)
            && !self.fresh.contains(&id)
            && !self.undo.iter().any(|(u, _)| *u == id)
        {
            self.undo.push((id, old));
        }
    }
    fn write_final(&mut self, pages: Vec<(PageId, Page)>) -> Result<()> {
        // Staged for the file now, not held until commit: a bulk load's pages then reach the
        // file in the background as they are built and their memory is reused, where holding a
        // few hundred MB of them cost more in fresh memory than building them. Safe before the
        // commit: these pages were free in every durable state and in every snapshot, the group
        // holding them becomes durable only by a checkpoint (which writes them first), and a
        // rollback leaves them unreferenced.
        // A failed background write surfaces here; it fails the transaction and the group.
        debug_assert!(pages.iter().all(|(id, _)| self.fresh.contains(id)), "only fresh pages are final");
        let staged = self.core.file.stage(pages);
        self.core.write_back_failed |= staged.is_err();
        staged
    }
    fn txn(&self) -> u64 {
        self.txn
    }
}

impl<'a> WriteTxn<'a> {
    pub(crate) fn new(core: &'a mut Core, txn: u64) -> Self {
        let log = core.spare_logs.pop().unwrap_or_default();
        WriteTxn {
            core,
            txn,
            trees: BTreeMap::new(),
            allocated: Vec::new(),
            fresh: HashSet::new(),
            freed: Vec::new(),
            undo: Vec::new(),
            log,
            pending: BTreeMap::new(),
            pending_bytes: 0,
            unlogged: false,
            side_pool: None,
        }
    }

    fn tree(&self, name: &str) -> TreeRoot {
        self.trees
            .get(name)
            .or_else(|| self.core.trees.get(name))
            .copied()
            .unwrap_or(TreeRoot { root: NO_PAGE, len: 0 })
    }

    /// The id this transaction commits as.
    #[must_use]
    pub fn txn(&self) -> u64 {
        self.txn
    }

    /// The value under `key` in `tree`, including this transaction's writes.
    pub fn get(&mut self, tree: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        validate_tree_name(tree)?;
        if let Some(change) = self.waiting(tree, key) {
            return Ok(change.clone());
        }
        let root = self.tree(tree).root;
        match btree::get(self, root, key)? {
            Some(v) => Ok(Some(btree::read_value(self, v)?)),
            None => Ok(None),
        }
    }

    /// Puts `key` → `value` in `tree` (created on first use).
    pub fn put(&mut self, tree: &str, key: &[u8], value: &[u8]) -> Result<()> {
        validate_tree_name(tree)?;
        validate_key(key)?;
        validate_value(value)?;
        self.log_op(tree, key, Some(value));
        self.stage(tree, key, Some(value.to_vec()))
    }

    /// Deletes `key` from `tree`; whether it was there.
    pub fn delete(&mut self, tree: &str, key: &[u8]) -> Result<bool> {
        validate_tree_name(tree)?;
        validate_key(key)?;
        let present = match self.waiting(tree, key) {
            Some(change) => change.is_some(),
            None => btree::get(self, self.tree(tree).root, key)?.is_some(),
        };
        if !present {
            return Ok(false);
        }
        self.log_op(tree, key, None);
        self.stage(tree, key, None)?;
        Ok(true)
    }

    /// Deletes `key` from `tree` without looking it up first, for a caller that has just read it
    /// (deleting an absent key changes nothing).
    pub fn erase(&mut self, tree: &str, key: &[u8]) -> Result<()> {
        validate_tree_name(tree)?;
        validate_key(key)?;
        self.log_op(tree, key, None);
        self.stage(tree, key, None)
    }

    /// Appends a change to this transaction's redo record. A record past `LOG_RECORD_MAX` is
    /// dropped and the transaction goes in none: its group is made durable by a checkpoint, as a
    /// bulk load's. The record holds every change in order, a key rewritten a thousand times a
    /// thousand times (a source of 20,000 documents forgotten, each rewriting the posting chunks
    /// of its terms, grew one to gigabytes), where the pages a checkpoint writes hold each once.
    fn log_op(&mut self, tree: &str, key: &[u8], value: Option<&[u8]>) {
        if self.unlogged {
            return;
        }
        encode_op(&mut self.log, tree, key, value);
        if self.log.len() > LOG_RECORD_MAX {
            self.unlogged = true;
            self.log = Vec::new();
        }
    }

    /// The latest change of `key` in `tree` not yet in the tree: this transaction's, else an
    /// earlier one's of the group.
    fn waiting(&self, tree: &str, key: &[u8]) -> Option<&Option<Vec<u8>>> {
        self.pending
            .get(tree)
            .and_then(|p| p.get(key))
            .or_else(|| self.core.group_pending.get(tree).and_then(|p| p.get(key)))
    }

    /// Records a change of `key` in `tree` in the pending buffer.
    fn stage(&mut self, tree: &str, key: &[u8], change: Option<Vec<u8>>) -> Result<()> {
        let added = key.len() + change.as_ref().map_or(0, Vec::len);
        let pending = match self.pending.get_mut(tree) {
            Some(p) => p,
            None => self.pending.entry(tree.to_owned()).or_default(),
        };
        if let Some(old) = pending.insert(key.to_vec(), change) {
            self.pending_bytes -= key.len() + old.map_or(0, |v| v.len());
        }
        self.pending_bytes += added;
        if self.pending_bytes > PENDING_LIMIT {
            self.core.settle()?;
            self.flush()?;
        }
        Ok(())
    }

    /// Merges every pending change into its tree. The group's waiting changes must be settled
    /// first (they are older), which `settle` and the callers here see to.
    pub(crate) fn flush(&mut self) -> Result<()> {
        let trees: Vec<String> = self.pending.keys().cloned().collect();
        for tree in trees {
            self.flush_tree(&tree)?;
        }
        Ok(())
    }

    /// Merges the pending changes of `tree` into it.
    fn flush_tree(&mut self, tree: &str) -> Result<()> {
        let Some(changes) = self.pending.remove(tree) else { return Ok(()) };
        let t = self.tree(tree);
        let mut run: Vec<btree::Change> = Vec::with_capacity(changes.len());
        for (key, change) in changes {
            self.pending_bytes -= key.len() + change.as_ref().map_or(0, Vec::len);
            let stored = match change {
                Some(value) => Some(btree::write_value(self, &key, &value)?),
                None => None,
            };
            run.push((btree::Bytes::from(key), stored));
        }
        let merged = match run.pop() {
            // One change: the single-key paths edit a leaf in place without decoding it.
            Some((key, Some(value))) if run.is_empty() => {
                let (root, old) = btree::insert(self, t.root, &key, value)?;
                let added = u64::from(old.is_none());
                btree::Merged { root, freed: old.into_iter().collect(), added, removed: 0 }
            }
            Some((key, None)) if run.is_empty() => match btree::remove(self, t.root, &key)? {
                Some((root, old)) => btree::Merged { root, freed: vec![old], added: 0, removed: 1 },
                None => btree::Merged { root: t.root, freed: Vec::new(), added: 0, removed: 0 },
            },
            Some(last) => {
                run.push(last);
                btree::merge_sorted(self, t.root, run)?
            }
            None => return Ok(()),
        };
        self.adopt(tree, t, &merged)
    }

    /// Puts every entry of `entries` (sorted by key, keys distinct) in `tree`, merged into the
    /// tree in one pass at once (after every older change of the tree) instead of staged key by
    /// key, so a bulk loader's millions of keys cost one walk of the tree, each touched page
    /// written once. The entries go in no redo record: the group this transaction commits in is
    /// made durable by a checkpoint (its pages and a new meta page, written and synced before any
    /// write of the group is acknowledged) instead of by the log, so a bulk load writes its bytes
    /// once, not twice. A crash before that checkpoint loses the whole group, none of which was
    /// acknowledged; the log never holds part of it.
    pub fn put_sorted(&mut self, tree: &str, entries: Vec<(Vec<u8>, Vec<u8>)>) -> Result<()> {
        validate_tree_name(tree)?;
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            return Err(crate::error::Error::InvalidArgument(format!(
                "a sorted run for {tree} must be sorted by key with distinct keys"
            )));
        }
        for (key, value) in &entries {
            validate_key(key)?;
            validate_value(value)?;
        }
        if entries.is_empty() {
            return Ok(());
        }
        self.unlogged = true;
        // Older changes first: the group's waiting ones, then this transaction's own.
        self.core.settle()?;
        self.flush_tree(tree)?;
        let t = self.tree(tree);
        if t.root == NO_PAGE {
            // A new tree is packed page by page, its leaves sent on towards the file at once.
            let mut packer = btree::Packer::new();
            for (key, value) in &entries {
                packer.push(self, key, value)?;
            }
            let (root, len) = packer.finish(self)?;
            self.trees.insert(tree.to_owned(), TreeRoot { root, len });
            return Ok(());
        }
        let mut run: Vec<btree::Change> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            // A value that fits in its leaf moves there as it is, uncopied.
            let stored = if btree::fits_inline(&key, value.len()) {
                Value::Inline(btree::Bytes::from(value))
            } else {
                btree::write_value(self, &key, &value)?
            };
            run.push((btree::Bytes::from(key), Some(stored)));
        }
        let merged = btree::merge_sorted(self, t.root, run)?;
        self.adopt(tree, t, &merged)
    }

    /// Starts a run of puts into `tree` given in key order, for a bulk loader. Into an empty tree
    /// with `ordered` (the caller vouches its keys come ascending and distinct), leaf pages are
    /// built as the entries come (`btree::Packer`) and none of the run is held in memory; else
    /// the entries are gathered, sorted and merged by `put_sorted`. Either way the run goes in no
    /// redo record and its group is made durable by a checkpoint (see `put_sorted`).
    pub(crate) fn sorted_run(&mut self, tree: &str, ordered: bool) -> Result<SortedRun<'_, 'a>> {
        validate_tree_name(tree)?;
        self.unlogged = true;
        self.core.settle()?;
        self.flush_tree(tree)?;
        let packer = (ordered && self.tree(tree).root == NO_PAGE).then(btree::Packer::new);
        Ok(SortedRun { tx: self, tree: tree.to_owned(), packer, held: Vec::new(), last: None })
    }

    /// Whether each of `trees` is empty, this transaction's changes to it included (merged
    /// first): what `with_side` needs of the trees it has a helper fill.
    pub(crate) fn trees_empty(&mut self, trees: &[&str]) -> Result<bool> {
        self.core.settle()?;
        for tree in trees {
            validate_tree_name(tree)?;
            self.flush_tree(tree)?;
            if self.tree(tree).root != NO_PAGE {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Runs `main` on this thread and `side` on a helper thread at once; `side` fills the empty
    /// trees `trees` (`trees_empty` must have said so) with sorted runs through a `SidePages`
    /// (see `side.rs`: it takes page ids this thread allocates for it), and what it built becomes
    /// this transaction's when both are done. Like `sorted_run`, it is in no redo record.
    pub(crate) fn with_side<R, S: Send>(
        &mut self,
        trees: &[&str],
        side: impl FnOnce(&mut SidePages<'_>) -> Result<S> + Send,
        main: impl FnOnce(&mut Self) -> Result<R>,
    ) -> Result<(R, S)> {
        self.unlogged = true;
        let pool = Arc::new(IdPool::default());
        let (file, txn) = (self.core.file.clone(), self.txn);
        self.side_pool = Some(pool.clone());
        let (mine, theirs) = std::thread::scope(|s| {
            let helper = s.spawn(|| {
                let _finished = Finished(&pool);
                let mut pages = SidePages::new(&file, &pool, txn, trees);
                let done = side(&mut pages);
                (done, pages)
            });
            // Should `main` fail or panic, the helper's next allocation fails rather than wait.
            let cancel = CancelOnDrop(&pool);
            let mine = main(self);
            if mine.is_ok() {
                std::mem::forget(cancel);
            } else {
                drop(cancel);
            }
            let served = self.serve(&pool);
            let theirs = helper.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            (mine.and_then(|m| served.map(|()| m)), theirs)
        });
        self.side_pool = None;
        let (done, pages) = theirs;
        for id in pool.leftover().into_iter().chain(pages.freed) {
            self.free(id);
        }
        self.core.write_back_failed |= pages.stage_failed;
        let (mine, theirs) = (mine?, done?);
        for (id, page) in pages.written {
            self.write(id, page);
        }
        self.trees.extend(pages.trees);
        Ok((mine, theirs))
    }

    /// Hands the helper page ids until it is done (it may still be packing after `main`).
    fn serve(&mut self, pool: &IdPool) -> Result<()> {
        while let Serve::TopUp = pool.serve() {
            if let Err(e) = self.top_up(pool) {
                // Cancelled, the helper stops at its next allocation; it is done when this returns.
                pool.cancel();
                pool.serve();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Allocates `ID_BATCH` pages into `pool`.
    fn top_up(&mut self, pool: &IdPool) -> Result<()> {
        let mut ids = Vec::with_capacity(ID_BATCH);
        for _ in 0..ID_BATCH {
            let id = self.core.alloc.alloc(&self.core.file)?;
            self.allocated.push(id);
            self.fresh.insert(id);
            ids.push(id);
        }
        pool.fill(ids);
        Ok(())
    }

    /// Makes `merged` (the result of merging changes into `tree`, whose root was `t`) the tree:
    /// frees the overflow chains of the values it replaced or deleted, records the new root and
    /// count.
    fn adopt(&mut self, tree: &str, mut t: TreeRoot, merged: &btree::Merged) -> Result<()> {
        for old in &merged.freed {
            btree::free_value(self, old)?;
        }
        t.len = t.len + merged.added - merged.removed;
        t.root = merged.root;
        self.trees.insert(tree.to_owned(), t);
        Ok(())
    }

    /// Applies every operation of a batch in order.
    pub fn apply(&mut self, batch: &Batch) -> Result<()> {
        for op in &batch.ops {
            match op {
                Op::Put { tree, key, value } => self.put(tree, key, value)?,
                Op::Delete { tree, key } => {
                    self.delete(tree, key)?;
                }
            }
        }
        Ok(())
    }

    /// Entries of `tree` between two bounds, including this transaction's writes.
    pub fn range(&mut self, tree: &str, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        validate_tree_name(tree)?;
        let root = self.tree(tree).root;
        let mut cursor = btree::Cursor::seek(self, root, start)?;
        let mut stored = Vec::new();
        while let Some((k, v)) = cursor.next(self)? {
            let past = match end {
                Bound::Included(e) => k.as_slice() > e,
                Bound::Excluded(e) => k.as_slice() >= e,
                Bound::Unbounded => false,
            };
            if past {
                break;
            }
            let v = btree::read_value(self, v)?;
            stored.push((k, v));
        }
        let within = |k: &[u8]| match end {
            Bound::Included(e) => k <= e,
            Bound::Excluded(e) => k < e,
            Bound::Unbounded => true,
        };
        Ok(self.with_pending(tree, stored, start, &within))
    }

    /// Up to the first `max` entries of `tree` between two bounds, this transaction's writes
    /// included, reading at most `max` stored entries: a range's whole backlog is never held, and
    /// nothing is merged first (a write that scans a little on every call must not merge its
    /// group's changes each time). It may return fewer than there are: a waiting delete can hide
    /// one of the entries read.
    pub(crate) fn range_first(
        &mut self,
        tree: &str,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        max: usize,
    ) -> Result<Entries> {
        validate_tree_name(tree)?;
        let before_end = |k: &[u8]| match end {
            Bound::Included(e) => k <= e,
            Bound::Excluded(e) => k < e,
            Bound::Unbounded => true,
        };
        let root = self.tree(tree).root;
        let mut cursor = btree::Cursor::seek(self, root, start)?;
        let mut stored = Vec::new();
        while stored.len() < max {
            let Some((k, v)) = cursor.next(self)? else { break };
            if !before_end(&k) {
                break;
            }
            stored.push((k, btree::read_value(self, v)?));
        }
        // Past the last entry read, waiting changes would come before entries left unread.
        let last = if stored.len() == max { stored.last().map(|(k, _)| k.clone()) } else { None };
        let within = |k: &[u8]| before_end(k) && last.as_deref().is_none_or(|l| k <= l);
        let mut entries = self.with_pending(tree, stored, start, &within);
        entries.truncate(max);
        Ok(entries)
    }

    /// Entries of `tree` whose keys start with `prefix`, including this transaction's writes.
    pub fn prefix(&mut self, tree: &str, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        validate_tree_name(tree)?;
        let stored = self.stored_prefix(tree, prefix, usize::MAX)?.unwrap_or_default();
        Ok(self.with_pending(tree, stored, Bound::Included(prefix), &|k: &[u8]| k.starts_with(prefix)))
    }

    /// `prefix`'s entries in the tree itself (waiting changes left out), when they are at most
    /// `limit`; `None` past it.
    fn stored_prefix(&mut self, tree: &str, prefix: &[u8], limit: usize) -> Result<Option<Entries>> {
        let root = self.tree(tree).root;
        let mut cursor = btree::Cursor::seek(self, root, Bound::Included(prefix))?;
        let mut stored = Vec::new();
        while let Some((k, v)) = cursor.next(self)? {
            if !k.starts_with(prefix) {
                break;
            }
            if stored.len() == limit {
                return Ok(None);
            }
            let v = btree::read_value(self, v)?;
            stored.push((k, v));
        }
        Ok(Some(stored))
    }

    /// `stored` (entries of `tree` from `start` while `within`, in key order) with the changes
    /// of `tree` not yet in it merged in: the group's waiting ones, then this transaction's.
    /// `prefix`'s entries, this transaction's writes included, when they are at most `max`;
    /// `None` when there may be more (having read at most about `3 * max` entries, waiting
    /// changes included). Lets a caller choose the shorter of two lists that hold what it looks
    /// for, reading only that one.
    pub(crate) fn prefix_within(&mut self, tree: &str, prefix: &[u8], max: usize) -> Result<Option<Entries>> {
        validate_tree_name(tree)?;
        // Waiting changes (the group's, this transaction's) can add entries or, deleting, hide
        // stored ones: past `max` of them the list may be long, and reading it is what this avoids.
        let waiting = |p: Option<&Pending>| {
            p.map_or(0, |p| {
                p.range::<[u8], _>((Bound::Included(prefix), Bound::Unbounded))
                    .take_while(|(k, _)| k.starts_with(prefix))
                    .take(max + 1)
                    .count()
            })
        };
        let (group, own) = (waiting(self.core.group_pending.get(tree)), waiting(self.pending.get(tree)));
        if group > max || own > max {
            return Ok(None);
        }
        let Some(stored) = self.stored_prefix(tree, prefix, max + group + own)? else { return Ok(None) };
        let entries = self.with_pending(tree, stored, Bound::Included(prefix), &|k: &[u8]| k.starts_with(prefix));
        Ok((entries.len() <= max).then_some(entries))
    }

    fn with_pending(
        &self,
        tree: &str,
        stored: Vec<(Vec<u8>, Vec<u8>)>,
        start: Bound<&[u8]>,
        within: &dyn Fn(&[u8]) -> bool,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        let stored = overlay(self.core.group_pending.get(tree), stored, start, within);
        overlay(self.pending.get(tree), stored, start, within)
    }

    /// The keys of `tree` that start with `prefix`, including this transaction's writes (which
    /// are merged into the tree first), reading no value (texts, posting chunks: most of the bytes).
    pub(crate) fn prefix_keys(&mut self, tree: &str, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.first_keys(tree, prefix, usize::MAX)
    }

    /// Hands every entry of `tree` whose key starts with `prefix` to `f`, in key order, this
    /// transaction's writes included (merged into the tree first), one at a time: a scan of a
    /// whole tree (`knowledge::tally_build`) then holds one entry, not the tree, in memory.
    pub(crate) fn scan_prefix(
        &mut self,
        tree: &str,
        prefix: &[u8],
        mut f: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        validate_tree_name(tree)?;
        self.core.settle()?;
        self.flush_tree(tree)?;
        let root = self.tree(tree).root;
        let mut cursor = btree::Cursor::seek(self, root, Bound::Included(prefix))?;
        while let Some((k, v)) = cursor.next(self)? {
            if !k.starts_with(prefix) {
                break;
            }
            f(&k, &btree::read_value(self, v)?)?;
        }
        Ok(())
    }

    /// Deletes every key of `tree` that starts with `prefix`; how many there were. Keys only
    /// are read, and none is looked up again. Up to `LOGGED_DELETE_MAX` keys go key by key into
    /// the redo record. A longer prefix (a whole scope or user forgotten) is deleted from the tree
    /// itself, `BULK_DELETE_CHUNK` keys a merge, in no redo record: its group is made durable by
    /// a checkpoint, as a bulk load's (`put_sorted`). Either way what it holds in memory is
    /// bounded, where a list of every key, a pending change and a redo op for each came to
    /// ~450 MB for a scope of 100k entities and 300k facts.
    pub(crate) fn delete_prefix(&mut self, tree: &str, prefix: &[u8]) -> Result<u64> {
        let mut keys = self.first_keys(tree, prefix, LOGGED_DELETE_MAX + 1)?;
        if keys.len() <= LOGGED_DELETE_MAX {
            for key in &keys {
                self.erase(tree, key)?;
            }
            return Ok(keys.len() as u64);
        }
        self.unlogged = true;
        let mut removed = 0;
        while !keys.is_empty() {
            let t = self.tree(tree);
            let run: Vec<btree::Change> = keys.into_iter().map(|k| (btree::Bytes::from(k), None)).collect();
            let merged = btree::merge_sorted(self, t.root, run)?;
            removed += merged.removed;
            self.adopt(tree, t, &merged)?;
            keys = self.first_keys(tree, prefix, BULK_DELETE_CHUNK)?;
        }
        Ok(removed)
    }

    /// How many keys of `tree` start with `prefix`, this transaction's writes included (merged
    /// into the tree first), counted without holding them.
    pub(crate) fn count_prefix(&mut self, tree: &str, prefix: &[u8]) -> Result<u64> {
        let mut n = 0;
        self.scan_keys(tree, prefix, |_| {
            n += 1;
            true
        })?;
        Ok(n)
    }

    /// The first `max` keys of `tree` that start with `prefix`, this transaction's writes
    /// included (merged into the tree first).
    fn first_keys(&mut self, tree: &str, prefix: &[u8], max: usize) -> Result<Vec<Vec<u8>>> {
        let mut keys = Vec::new();
        self.scan_keys(tree, prefix, |k| {
            keys.push(k);
            keys.len() < max
        })?;
        Ok(keys)
    }

    /// Hands the keys of `tree` that start with `prefix` to `f` in key order, this transaction's
    /// writes included (merged into the tree first), until `f` returns false.
    fn scan_keys(&mut self, tree: &str, prefix: &[u8], mut f: impl FnMut(Vec<u8>) -> bool) -> Result<()> {
        validate_tree_name(tree)?;
        self.core.settle()?;
        self.flush_tree(tree)?;
        let root = self.tree(tree).root;
        let mut cursor = btree::Cursor::seek(self, root, Bound::Included(prefix))?;
        while let Some((k, _)) = cursor.next(self)? {
            if !k.starts_with(prefix) || !f(k) {
                break;
            }
        }
        Ok(())
    }

    /// The first key of `tree` that starts with `prefix`, including this transaction's writes
    /// (which are merged into the tree first), reading no value and nothing past it.
    pub(crate) fn first_with_prefix(&mut self, tree: &str, prefix: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.first_keys(tree, prefix, 1)?.pop())
    }

    /// Entries in `tree`, including this transaction's writes.
    pub fn tree_len(&mut self, tree: &str) -> Result<u64> {
        validate_tree_name(tree)?;
        self.core.settle()?;
        self.flush_tree(tree)?;
        Ok(self.tree(tree).len)
    }

    /// The names of every tree that exists, as this transaction sees them (those it created
    /// included), in name order.
    pub(crate) fn tree_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .core
            .trees
            .keys()
            .chain(self.trees.keys())
            .chain(self.pending.keys())
            .chain(self.core.group_pending.keys())
            .cloned()
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Whether this transaction changed anything.
    pub(crate) fn is_empty(&self) -> bool {
        self.log.is_empty() && !self.unlogged
    }

    /// Keeps this sub-transaction's changes in the group (what is still pending waits in the
    /// group's buffer for `Core::settle`); returns its redo record.
    pub(crate) fn commit(self) -> Vec<u8> {
        let core = self.core;
        core.group_pending_bytes += self.pending_bytes;
        for (tree, changes) in self.pending {
            match core.group_pending.get_mut(&tree) {
                Some(waiting) => {
                    // A change that replaces an earlier one of the group takes its place in the
                    // count too: counted twice, the count would outgrow what waits, never fall
                    // back to zero at `settle`, and once past `PENDING_LIMIT` make every later
                    // write of the store settle the whole group on its own.
                    for (key, change) in changes {
                        let size = key.len();
                        if let Some(old) = waiting.insert(key, change) {
                            core.group_pending_bytes -= size + old.map_or(0, |v| v.len());
                        }
                    }
                }
                None => {
                    core.group_pending.insert(tree, changes);
                }
            }
        }
        core.group_unlogged |= self.unlogged;
        for id in self.freed {
            if self.fresh.contains(&id) || core.group_fresh.contains(&id) {
                // Never visible to a reader or on disk: reusable at once.
                core.dirty.remove(&id);
                core.group_fresh.remove(&id);
                core.alloc.give_back(id);
            } else {
                core.alloc.retire(self.txn, id);
            }
        }
        for id in self.fresh {
            if core.dirty.contains_key(&id) {
                core.group_fresh.insert(id);
            }
        }
        let trees = Arc::make_mut(&mut core.trees);
        for (name, t) in self.trees {
            core.catalog_dirty.insert(name.clone());
            if t.root == NO_PAGE {
                trees.remove(&name);
            } else {
                trees.insert(name, t);
            }
        }
        core.last_txn = self.txn;
        self.log
    }

    /// Discards this sub-transaction's changes.
    pub(crate) fn rollback(self) {
        self.core.recycle_logs([self.log]);
        for (id, old) in self.undo {
            self.core.dirty.insert(id, old);
        }
        for id in self.allocated {
            self.core.dirty.remove(&id);
            self.core.alloc.give_back(id);
        }
    }
}

/// `stored` (entries from `start` while `within`, in key order) with `changes` in the same span
/// merged in: a put replaces or adds its key, a delete hides it.
fn overlay(
    changes: Option<&Pending>,
    stored: Vec<(Vec<u8>, Vec<u8>)>,
    start: Bound<&[u8]>,
    within: &dyn Fn(&[u8]) -> bool,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let Some(changes) = changes else { return stored };
    let mut changes = changes.range::<[u8], _>((start, Bound::Unbounded)).take_while(|(k, _)| within(k)).peekable();
    if changes.peek().is_none() {
        return stored;
    }
    let mut out = Vec::with_capacity(stored.len());
    let emit = |out: &mut Vec<(Vec<u8>, Vec<u8>)>, k: &Vec<u8>, change: &Option<Vec<u8>>| {
        if let Some(v) = change {
            out.push((k.clone(), v.clone()));
        }
    };
    for (k, v) in stored {
        while let Some((pk, change)) = changes.next_if(|(pk, _)| pk.as_slice() < k.as_slice()) {
            emit(&mut out, pk, change);
        }
        match changes.next_if(|(pk, _)| **pk == k) {
            Some((pk, change)) => emit(&mut out, pk, change),
            None => out.push((k, v)),
        }
    }
    for (pk, change) in changes {
        emit(&mut out, pk, change);
    }
    out
}

/// A page store over the core for work outside a user transaction (catalog updates at a
/// checkpoint). Frees are retired at `txn` like any commit's.
pub(crate) struct CoreStore<'a> {
    pub(crate) core: &'a mut Core,
    pub(crate) fresh: HashSet<PageId>,
    pub(crate) freed: Vec<PageId>,
}

impl PageSource for CoreStore<'_> {
    fn page(&self, id: PageId) -> Result<Page> {
        self.core.read(id)
    }
}

impl PageStore for CoreStore<'_> {
    fn alloc(&mut self) -> Result<PageId> {
        let id = self.core.alloc.alloc(&self.core.file)?;
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
        self.core.dirty.insert(id, page);
    }
    fn txn(&self) -> u64 {
        self.core.last_txn
    }
}

/// Encodes a catalog value: root and entry count.
pub(crate) fn catalog_value(t: TreeRoot) -> Vec<u8> {
    let mut v = Vec::with_capacity(16);
    v.extend_from_slice(&t.root.to_le_bytes());
    v.extend_from_slice(&t.len.to_le_bytes());
    v
}

/// Decodes a catalog value.
pub(crate) fn decode_catalog_value(v: &[u8]) -> Option<TreeRoot> {
    if v.len() != 16 {
        return None;
    }
    Some(TreeRoot {
        root: u64::from_le_bytes(v[0..8].try_into().ok()?),
        len: u64::from_le_bytes(v[8..16].try_into().ok()?),
    })
}

/// Stores a catalog value, returning the new catalog root.
pub(crate) fn catalog_put(s: &mut CoreStore<'_>, root: PageId, name: &str, t: Option<TreeRoot>) -> Result<PageId> {
    match t {
        Some(t) => {
            let (root, _) = btree::insert(s, root, name.as_bytes(), Value::Inline(catalog_value(t).into()))?;
            Ok(root)
        }
        None => Ok(btree::remove(s, root, name.as_bytes())?.map_or(root, |(r, _)| r)),
    }
}

/// Refuses `key` unless it comes after `last` (the last key of a sorted run into `tree`), and
/// makes it the last.
pub(crate) fn after_last(last: &mut Option<Vec<u8>>, key: &[u8], tree: &str) -> Result<()> {
    match last {
        Some(last) if key <= last.as_slice() => Err(crate::error::Error::InvalidArgument(format!(
            "a sorted run for {tree} must be sorted by key with distinct keys"
        ))),
        Some(last) => {
            last.clear();
            last.extend_from_slice(key);
            Ok(())
        }
        None => {
            *last = Some(key.to_vec());
            Ok(())
        }
    }
}

/// Cancels a pool's helper when dropped (`with_side` forgets it once `main` has succeeded).
struct CancelOnDrop<'p>(&'p IdPool);

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Where a bulk writer's sorted runs go: the transaction itself (`WriteTxn::sorted_run`) or a
/// helper's side of it (`SidePages`).
pub(crate) trait Runs {
    type Run<'r>: Run
    where
        Self: 'r;
    /// Starts a run into `tree` (see `WriteTxn::sorted_run` for `ordered`).
    fn run(&mut self, tree: &str, ordered: bool) -> Result<Self::Run<'_>>;
}

/// A run of puts into one tree.
pub(crate) trait Run {
    /// Adds an entry after those before it.
    fn push(&mut self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Makes the run part of its tree.
    fn finish(self) -> Result<()>;
}

impl<'a> Runs for WriteTxn<'a> {
    type Run<'r>
        = SortedRun<'r, 'a>
    where
        Self: 'r;

    fn run(&mut self, tree: &str, ordered: bool) -> Result<SortedRun<'_, 'a>> {
        self.sorted_run(tree, ordered)
    }
}

impl Run for SortedRun<'_, '_> {
    fn push(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        SortedRun::push(self, key, value)
    }
    fn finish(self) -> Result<()> {
        SortedRun::finish(self)
    }
}

/// A run of puts into one tree in key order (see `WriteTxn::sorted_run`); `finish` makes it part
/// of the tree.
pub(crate) struct SortedRun<'t, 'a> {
    tx: &'t mut WriteTxn<'a>,
    tree: String,
    /// Building the tree page by page (it was empty).
    packer: Option<btree::Packer>,
    /// Entries gathered for `put_sorted` (the tree held keys, or the order was not vouched for).
    held: Vec<(Vec<u8>, Vec<u8>)>,
    /// The last key packed, to refuse one out of order.
    last: Option<Vec<u8>>,
}

impl SortedRun<'_, '_> {
    /// Adds an entry after those before it.
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        validate_key(key)?;
        validate_value(value)?;
        let Some(packer) = &mut self.packer else {
            self.held.push((key.to_vec(), value.to_vec()));
            return Ok(());
        };
        after_last(&mut self.last, key, &self.tree)?;
        packer.push(self.tx, key, value)
    }

    /// Makes the run part of its tree.
    pub(crate) fn finish(self) -> Result<()> {
        let SortedRun { tx, tree, packer, mut held, .. } = self;
        let Some(packer) = packer else {
            held.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            return tx.put_sorted(&tree, held);
        };
        let (root, len) = packer.finish(tx)?;
        if len > 0 {
            tx.trees.insert(tree, TreeRoot { root, len });
        }
        Ok(())
    }
}
