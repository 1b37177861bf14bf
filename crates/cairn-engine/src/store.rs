//! The store: opening and recovery, the writer thread with pipelined group commit (the syncer,
//! `syncer.rs`, makes each group durable while the writer fills the next), checkpoints, and the
//! public entry points.

use crate::batch::Batch;
use crate::btree::{Cursor, read_value};
use crate::budget;
use crate::check::{self, CheckReport};
use crate::clock::{self, Clock, ClockLog};
use crate::copy;
use crate::error::{Error, Result};
use crate::freelist::{self, Allocator};
use crate::limits::PAGE_SIZE;
use crate::log_rules;
use crate::meta::{Chosen, Meta};
use crate::page::{NO_PAGE, PageId};
use crate::pager::PageFile;
use crate::snapshot::{Registry, Snapshot, TreeRoot, Version};
use crate::syncer::{Counters, Done, Gauges, Group, Merging, Syncer};
use crate::vfs::{DirLock, LockError, StdFs, Vfs, VfsFile};
use crate::wal::{self, Wal};
use crate::write::{Core, CoreStore, PENDING_LIMIT, WriteTxn, catalog_put, decode_catalog_value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub(crate) const DATA_FILE: &str = "data.cairn";
pub(crate) const WAL_FILE: &str = "wal.cairn";
const TMP_SUFFIX: &str = ".tmp";
/// Requests taken into one group commit at most.
const MAX_GROUP: usize = 1024;
/// Pages waiting for a checkpoint before one is forced (64 MiB).
const MAX_AWAITING_CHECKPOINT: usize = 16_384;
/// A lone write whose changes waiting to merge come to at least this many bytes is logged and
/// handed to the syncer before they are merged (`Writer::end_merging_while_syncing`): merging a
/// note write's changes (~3 KiB: its postings) took ~75 us on the test machine, more than waking
/// the syncer (~12-20 us), so the merge hides behind the sync. A small write merges in a few
/// microseconds and is cheaper synced on the writer (`Syncer::finish_here`).
const MERGE_WHILE_SYNCING: usize = 1024;

/// How to open a store.
#[derive(Clone)]
pub struct StoreOptions {
    /// Bytes of page cache (the store's memory, apart from a group's pages in flight).
    pub cache_bytes: usize,
    /// Log size at which the writer checkpoints.
    pub checkpoint_bytes: u64,
    /// The file system.
    pub vfs: Arc<dyn Vfs>,
    /// Hours a notes write's `idempotencyKey` is remembered (`IDEMPOTENCY_HOURS`): a retry
    /// within them replays, one after them writes anew, and the record is then removed.
    pub idempotency_hours: u32,
    /// Bytes of entity-name indexes kept between calls, for every store of the process
    /// (`knowledge/cache_budget.rs`; default 512 MiB).
    pub name_cache_bytes: usize,
}

/// The hours `StoreOptions::idempotency_hours` may be: 1 up to a year. Default 24, as payment APIs
/// keep a key a day: long enough for any client's retries, short enough that the records of a
/// bridge that keys every write do not pile up.
pub const IDEMPOTENCY_HOURS: std::ops::RangeInclusive<u32> = 1..=8760;

/// `hours` of `StoreOptions::idempotency_hours` in milliseconds; refused outside `IDEMPOTENCY_HOURS`.
fn idempotency_ms(hours: u32) -> Result<i64> {
    if !IDEMPOTENCY_HOURS.contains(&hours) {
        return Err(Error::InvalidArgument(format!(
            "idempotencyHours must be a whole number of hours, {}–{}, got {hours}",
            IDEMPOTENCY_HOURS.start(),
            IDEMPOTENCY_HOURS.end()
        )));
    }
    Ok(i64::from(hours) * 3_600_000)
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            cache_bytes: 64 << 20,
            checkpoint_bytes: 64 << 20,
            vfs: Arc::new(StdFs),
            idempotency_hours: 24,
            name_cache_bytes: crate::knowledge::NAME_CACHE_BYTES,
        }
    }
}

/// What `compact` does beyond rewriting live pages.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompactOptions {
    /// Also overwrite the old data file and the log with zeros, so forgotten data leaves the disk.
    pub purge: bool,
}

/// The result of a compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactReport {
    pub pages_before: u64,
    pub pages_after: u64,
    pub bytes_zeroed: u64,
}

/// The result of a backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupReport {
    pub txn: u64,
    pub pages: u64,
    pub bytes: u64,
}

/// Counters for operators and benchmarks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    pub txn: u64,
    pub page_count: u64,
    pub free_pages: u64,
    pub cache_pages: usize,
    pub cache_capacity_pages: usize,
    pub wal_bytes: u64,
    pub commits: u64,
    pub groups: u64,
    pub checkpoints: u64,
}

type WriteFn = Box<dyn FnOnce(&mut WriteTxn<'_>) -> Result<()> + Send>;

enum Request {
    Write(WriteFn, Done),
    Run(Box<dyn FnOnce(&mut Writer) + Send>),
    /// From the syncer: it has finished what it held, so the writer can hand it the open group.
    Idle,
    /// From `close`: finish what is queued and stop (the syncer holds a sender too, so the queue
    /// never disconnects while the writer runs).
    Close,
}

/// A group the writer is filling while the syncer makes the previous one durable: writes run as
/// sub-transactions, not yet logged.
struct OpenGroup {
    results: Vec<(Done, Result<u64>)>,
    records: Vec<(u64, Vec<u8>)>,
    /// Why every further write of the group fails: the store had stopped when it began, or a
    /// merge of the group's waiting changes broke off (the group cannot be trusted).
    broken: Option<Error>,
}

struct Shared {
    dir: PathBuf,
    vfs: Arc<dyn Vfs>,
    registry: Arc<Registry>,
    counters: Arc<Counters>,
    queue: Mutex<Option<Sender<Request>>>,
    writer: Mutex<Option<JoinHandle<Result<()>>>>,
    lock: Mutex<Option<Box<dyn DirLock>>>,
    /// The store's random id (its meta page's), which export origins are made from.
    store_id: u64,
    /// `StoreOptions::idempotency_hours` in milliseconds, the unit of a caller's `now`.
    idempotency_ms: i64,
    /// The latest time a call was stamped with (`clock.rs`).
    clock: Arc<Clock>,
    /// What callers found to hold for good while the store is open (`Store::marked`).
    marks: Mutex<HashSet<&'static str>>,
    /// What the last import call read of the facts between two ends (`knowledge::import_pairs`).
    import_pairs: Mutex<Option<crate::knowledge::KeptPairs>>,
}

/// An open store. Cheap to clone; every clone is the same store. Closing any clone closes it.
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

/// The writer thread's state.
pub(crate) struct Writer {
    pub(crate) core: Core,
    dir: PathBuf,
    vfs: Arc<dyn Vfs>,
    cache_bytes: usize,
    checkpoint_bytes: u64,
    registry: Arc<Registry>,
    counters: Arc<Counters>,
    meta_slot: PageId,
    meta_sequence: u64,
    store_id: u64,
    failed: Option<String>,
    /// Makes logged groups durable and acknowledges them while the next group is applied.
    syncer: Syncer,
    /// Whether the last logged group held one write (a caller writing one at a time).
    last_lone: bool,
    clock: Arc<Clock>,
    clock_log: ClockLog,
}

fn io(context: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::io(context, e)
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.shared.dir).finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating if needed) the store in `dir`, taking its exclusive lock and recovering
    /// every acknowledged commit from the log.
    pub fn open(dir: impl AsRef<Path>, opts: StoreOptions) -> Result<Store> {
        let dir = dir.as_ref().to_path_buf();
        let StoreOptions { cache_bytes, checkpoint_bytes, vfs, idempotency_hours, name_cache_bytes } = opts;
        let idempotency_ms = idempotency_ms(idempotency_hours)?;
        crate::knowledge::set_name_cache_bytes(name_cache_bytes);
        vfs.create_dir_all(&dir).map_err(io("creating the store directory"))?;
        let lock = vfs.lock_dir(&dir).map_err(|e| match e {
            LockError::Held(pid) => Error::Locked { path: dir.clone(), holder_pid: pid },
            LockError::Io(e) => Error::io("locking the store directory", e),
        })?;
        let wal_path = dir.join(WAL_FILE);
        let (file, file_len, chosen) = open_data_file(&*vfs, &dir)?;
        let (meta_slot, meta) = (chosen.slot, chosen.meta);
        if file_len < meta.page_count * PAGE_SIZE as u64 {
            return Err(Error::corrupt(
                None,
                format!("data file has {} pages but its meta needs {}", file_len / PAGE_SIZE as u64, meta.page_count),
            ));
        }
        let page_file = Arc::new(PageFile::new(file, cache_bytes));
        let (reusable, list_pages) =
            freelist::load(&*page_file, meta.freelist_head, meta.freelist_len, meta.page_count)?;
        let trees = load_catalog(&page_file, meta.catalog_root)?;
        let wal_file = vfs.open(&wal_path, true).map_err(io("opening the log"))?;
        let log = wal_file.clone();
        let salt = log_rules::replay_salt(wal::read_header(&*wal_file)?, &chosen, &wal_file)?;
        let (wal, records) = Wal::open(wal_file, meta.store_id, salt)?;
        let core = Core {
            alloc: Allocator::new(meta.page_count, file_len / PAGE_SIZE as u64, reusable, list_pages),
            file: page_file.clone(),
            wal,
            trees: Arc::new(trees),
            catalog_dirty: BTreeSet::new(),
            catalog_root: meta.catalog_root,
            last_txn: meta.txn,
            dirty: HashMap::new(),
            group_fresh: HashSet::new(),
            group_pending: BTreeMap::new(),
            group_pending_bytes: 0,
            settling: false,
            group_unlogged: false,
            write_back_failed: false,
            spare_logs: Vec::new(),
        };
        let registry = Registry::new(Arc::new(Version { txn: meta.txn, trees: core.trees.clone(), file: page_file }));
        let counters = Arc::new(Counters::default());
        let (tx, rx) = mpsc::channel();
        let idle = tx.clone();
        let wake = Box::new(move || {
            // The writer gone (closing) needs no wake-up.
            let _ = idle.send(Request::Idle);
        });
        let mut writer = Writer {
            core,
            dir: dir.clone(),
            vfs: vfs.clone(),
            cache_bytes,
            checkpoint_bytes,
            registry: registry.clone(),
            counters: counters.clone(),
            meta_slot,
            meta_sequence: meta.sequence,
            store_id: meta.store_id,
            failed: None,
            syncer: Syncer::start(log, registry.clone(), counters.clone(), wake)?,
            last_lone: true,
            clock: Arc::default(),
            clock_log: ClockLog::default(),
        };
        writer.recover(records)?;
        writer.publish();
        let clock = Clock::starting_at(registry.snapshot()?.get(clock::TREE, &[])?.as_deref())?;
        writer.clock_log = ClockLog::starting_at(&clock);
        writer.clock = clock.clone();
        let handle = std::thread::Builder::new()
            .name("cairn-writer".into())
            .spawn(move || writer.run(&rx))
            .map_err(io("starting the writer thread"))?;
        Ok(Store {
            shared: Arc::new(Shared {
                dir,
                vfs,
                registry,
                counters,
                queue: Mutex::new(Some(tx)),
                writer: Mutex::new(Some(handle)),
                lock: Mutex::new(Some(lock)),
                store_id: meta.store_id,
                idempotency_ms,
                clock,
                marks: Mutex::default(),
                import_pairs: Mutex::default(),
            }),
        })
    }

    /// The directory this store lives in.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The store's random id: what tells two stores' exports of a same-named scope apart
    /// (`knowledge::Origin`).
    #[must_use]
    pub fn store_id(&self) -> u64 {
        self.shared.store_id
    }

    /// The time to stamp a call that brings the wall clock `now` with: never before a time this
    /// store handed out, in this process or before it (`clock.rs`).
    #[must_use]
    pub fn stamp(&self, now: i64) -> i64 {
        self.shared.clock.stamp(now)
    }

    /// How long a notes write's `idempotencyKey` is remembered, in milliseconds.
    pub(crate) fn idempotency_ms(&self) -> i64 {
        self.shared.idempotency_ms
    }

    /// Whether a caller marked `mark` on this open store (`mark`): a fact about its committed
    /// state that no later write undoes, such as an index a verb builds once being built
    /// (`knowledge::build_once`), so a caller need not read it again on every call. Kept in
    /// memory only: a store opened again (another file, a restored backup) is read anew.
    pub(crate) fn marked(&self, mark: &'static str) -> bool {
        self.shared.marks.lock().expect("marks lock").contains(mark)
    }

    /// Marks `mark` (`marked`), once a snapshot showed it holds: published state is durable.
    pub(crate) fn mark(&self, mark: &'static str) {
        self.shared.marks.lock().expect("marks lock").insert(mark);
    }

    /// Takes what the last import call read of the facts between two ends, if it left any.
    pub(crate) fn take_import_pairs(&self) -> Option<crate::knowledge::KeptPairs> {
        self.shared.import_pairs.lock().expect("import pairs lock").take()
    }

    /// Leaves `kept` for the next import call (`knowledge::import_pairs::Kept`).
    pub(crate) fn keep_import_pairs(&self, kept: Option<crate::knowledge::KeptPairs>) {
        *self.shared.import_pairs.lock().expect("import pairs lock") = kept;
    }

    /// Drops every mark, as opening the store again would: for tests that make a store look
    /// written before an index existed by removing it under an open store.
    #[cfg(test)]
    pub(crate) fn forget_marks(&self) {
        self.shared.marks.lock().expect("marks lock").clear();
    }

    /// A consistent view of the last committed state.
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.shared.registry.snapshot()
    }

    /// The pages readers of the store's current data file have been handed (`PageFile::pages_read`).
    #[cfg(test)]
    pub(crate) fn pages_read(&self) -> u64 {
        self.snapshot().expect("an open store").version_arc().file.pages_read()
    }

    /// The value under `key` in `tree`, as last committed.
    pub fn get(&self, tree: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.shared.registry.get(tree, key, |v| v.map(<[u8]>::to_vec))
    }

    /// Hands the value under `key` in `tree` to `f` without copying it first (`None` when absent):
    /// the cheapest point read, for callers that copy the value somewhere of their own.
    pub fn get_with<R>(&self, tree: &str, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
        self.shared.registry.get(tree, key, f)
    }

    fn send(&self, req: Request) -> std::result::Result<(), Request> {
        let q = self.shared.queue.lock().expect("queue lock");
        match q.as_ref() {
            Some(tx) => tx.send(req).map_err(|e| e.0),
            None => Err(req),
        }
    }

    /// Queues a write; `done` runs once the write is durable (with its txn id), on the syncer
    /// thread, or has failed (having changed nothing). Keep it short: later acknowledgements
    /// wait for it.
    pub fn submit_fn(&self, f: WriteFn, done: Done) {
        if let Err(e) = budget::may_wait() {
            return done(Err(e));
        }
        if let Err(Request::Write(_, done)) = self.send(Request::Write(f, done)) {
            done(Err(Error::Closed));
        }
    }

    /// Queues a batch; see `submit_fn`.
    pub fn submit(&self, batch: Batch, done: Done) {
        self.submit_fn(Box::new(move |tx| tx.apply(&batch)), done);
    }

    /// Runs `f` in a write transaction and waits until it is durable. Returns `f`'s result and
    /// the transaction id (the previous id when `f` changed nothing).
    pub fn write<R, F>(&self, f: F) -> Result<(R, u64)>
    where
        F: FnOnce(&mut WriteTxn<'_>) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let slot = Arc::new(Mutex::new(None));
        let out = slot.clone();
        let (tx, rx) = mpsc::sync_channel(1);
        self.submit_fn(
            Box::new(move |t| {
                let r = f(t)?;
                *out.lock().expect("result slot") = Some(r);
                Ok(())
            }),
            Box::new(move |res| {
                let _ = tx.send(res);
            }),
        );
        let txn = rx.recv().map_err(|_| Error::Closed)??;
        let r = slot.lock().expect("result slot").take().expect("a committed write has a result");
        Ok((r, txn))
    }

    /// Applies a batch atomically and waits until it is durable.
    pub fn apply(&self, batch: Batch) -> Result<u64> {
        Ok(self.write(move |tx| tx.apply(&batch))?.1)
    }

    /// Runs `f` on the writer thread between groups and waits for its result.
    fn run<T: Send + 'static>(&self, f: impl FnOnce(&mut Writer) -> Result<T> + Send + 'static) -> Result<T> {
        budget::may_wait()?;
        let (tx, rx) = mpsc::sync_channel(1);
        let req = Request::Run(Box::new(move |w| {
            let result = catch_unwind(AssertUnwindSafe(|| f(&mut *w))).unwrap_or_else(|p| {
                // Maintenance stopped part-way: stop taking writes rather than trust the state.
                let err = Error::Panicked(panic_message(&*p));
                w.fail(&err);
                Err(err)
            });
            let _ = tx.send(result);
        }));
        if self.send(req).is_err() {
            return Err(Error::Closed);
        }
        rx.recv().map_err(|_| Error::Closed)?
    }

    /// Makes the data file hold everything committed, and empties the log.
    pub fn checkpoint(&self) -> Result<()> {
        self.run(Writer::checkpoint)
    }

    /// Verifies every reachable page's checksum and every tree invariant, and that each page is
    /// either reachable or free.
    pub fn check(&self) -> Result<CheckReport> {
        self.run(|w| {
            // Pages still held in memory are checked where they will live: write them out first.
            w.core.file.write_back()?;
            Ok(check::run(w))
        })
    }

    /// Writes a consistent copy of the store into `dest_dir` (which must not hold a store) while
    /// writes go on.
    pub fn backup(&self, dest_dir: &Path) -> Result<BackupReport> {
        let snap = self.snapshot()?;
        copy::backup(&snap, &*self.shared.vfs, dest_dir)
    }

    /// Rewrites live pages into a fresh file (writes wait meanwhile); with `purge`, also zeroes
    /// the old file and the log.
    pub fn compact(&self, opts: CompactOptions) -> Result<CompactReport> {
        self.run(move |w| w.compact(opts))
    }

    /// Counters as of the last group commit.
    #[must_use]
    pub fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        let v = self.shared.registry.current();
        Stats {
            txn: v.txn,
            page_count: c.page_count.load(Ordering::Relaxed),
            free_pages: c.free_pages.load(Ordering::Relaxed),
            cache_pages: v.file.cache_len(),
            cache_capacity_pages: v.file.cache_capacity(),
            wal_bytes: c.wal_bytes.load(Ordering::Relaxed),
            commits: c.commits.load(Ordering::Relaxed),
            groups: c.groups.load(Ordering::Relaxed),
            checkpoints: c.checkpoints.load(Ordering::Relaxed),
        }
    }

    /// Finishes queued writes, checkpoints, stops the writer and releases the directory.
    /// Idempotent; afterwards every call answers `Error::Closed`.
    pub fn close(&self) -> Result<()> {
        self.shared.close()
    }
}

impl Shared {
    fn close(&self) -> Result<()> {
        let sender = self.queue.lock().expect("queue lock").take();
        if let Some(sender) = sender {
            // A writer that has already stopped (it failed to start a thread) ignores it.
            let _ = sender.send(Request::Close);
        }
        let handle = self.writer.lock().expect("writer lock").take();
        let result = match handle {
            Some(h) => h.join().unwrap_or_else(|p| Err(Error::Panicked(panic_message(&*p)))),
            None => Ok(()),
        };
        self.registry.close();
        self.lock.lock().expect("lock lock").take();
        result
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // A store dropped without close still finishes its queue and checkpoints.
        let _ = self.close();
    }
}

/// Opens the data file of the store in `dir` (made when missing), with its length and the meta
/// it opens at.
fn open_data_file(vfs: &dyn Vfs, dir: &Path) -> Result<(Arc<dyn VfsFile>, u64, Chosen)> {
    let data_path = dir.join(DATA_FILE);
    vfs.remove(&tmp_path(&data_path)).map_err(io("removing a stale temporary file"))?;
    if !vfs.exists(&data_path) {
        let wal_path = dir.join(WAL_FILE);
        if vfs.exists(&wal_path) {
            log_rules::refuse_orphan_log(&vfs.open(&wal_path, false).map_err(io("opening the log"))?)?;
        }
        create_data_file(vfs, &data_path)?;
    }
    let file = vfs.open(&data_path, false).map_err(io("opening the data file"))?;
    let file_len = file.len().map_err(io("reading the data file's length"))?;
    if file_len < 2 * PAGE_SIZE as u64 {
        return Err(Error::NotAStore { path: data_path });
    }
    let mut slots = Vec::new();
    for slot in 0..2u64 {
        let mut buf = vec![0u8; PAGE_SIZE];
        file.read_exact_at(&mut buf, slot * PAGE_SIZE as u64).map_err(io("reading a meta page"))?;
        slots.push(Meta::decode(slot, &buf));
    }
    let b = slots.pop().expect("two slots");
    let a = slots.pop().expect("two slots");
    let chosen = Meta::choose(a, b, &data_path)?;
    Ok((file, file_len, chosen))
}

fn tmp_path(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(TMP_SUFFIX);
    PathBuf::from(s)
}

/// Creates an empty data file atomically: written and synced under a temporary name, then renamed.
fn create_data_file(vfs: &dyn Vfs, path: &Path) -> Result<()> {
    let tmp = tmp_path(path);
    let file = vfs.open(&tmp, true).map_err(io("creating the data file"))?;
    let (store_id, log_salt) = (wal::random_u64(), wal::random_u64());
    let mut bytes = Vec::with_capacity(2 * PAGE_SIZE);
    for (slot, sequence) in [(0u64, 1u64), (1, 0)] {
        let meta = Meta {
            txn: 0,
            catalog_root: NO_PAGE,
            freelist_head: NO_PAGE,
            freelist_len: 0,
            page_count: 2,
            sequence,
            store_id,
            log_salt,
        };
        bytes.extend_from_slice(&meta.encode(slot));
    }
    file.write_all_at(&bytes, 0).map_err(io("writing the data file"))?;
    file.sync_data().map_err(io("syncing the data file"))?;
    vfs.rename(&tmp, path).map_err(io("installing the data file"))
}

/// Reads the catalog tree: tree name → root and entry count.
pub(crate) fn load_catalog(file: &PageFile, root: PageId) -> Result<BTreeMap<String, TreeRoot>> {
    let mut trees = BTreeMap::new();
    let mut cursor = Cursor::seek(file, root, Bound::Unbounded)?;
    while let Some((name, value)) = cursor.next(file)? {
        let value = read_value(file, value)?;
        let t = decode_catalog_value(&value).ok_or_else(|| Error::corrupt(Some(root), "malformed catalog entry"))?;
        let name = String::from_utf8(name).map_err(|_| Error::corrupt(Some(root), "catalog name is not UTF-8"))?;
        trees.insert(name, t);
    }
    Ok(trees)
}

/// How long the writer polls for the next request before it sleeps. A caller that waits for one
/// commit usually sends the next within microseconds of the acknowledgement; catching it while
/// polling saves a sleep and a wake-up, which cost tens of microseconds each on a virtual machine.
const POLL_BEFORE_SLEEP: std::time::Duration = std::time::Duration::from_micros(100);

/// The next request, polling briefly before blocking when `poll` (the syncer is free, so the
/// next write would be logged at once; while it syncs, a write waits for it anyway); `None` once
/// every sender is gone.
fn next_request(rx: &Receiver<Request>, poll: bool) -> Option<Request> {
    let start = std::time::Instant::now();
    while poll && start.elapsed() < POLL_BEFORE_SLEEP {
        match rx.try_recv() {
            Ok(r) => return Some(r),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
        }
    }
    rx.recv().ok()
}

impl Writer {
    fn run(mut self, rx: &Receiver<Request>) -> Result<()> {
        // Writes join the open group until the queue is empty and the syncer is free to take it
        // (or it is full): a group applied while the last one syncs waits for that sync anyway,
        // so it takes every write that comes meanwhile, and the syncer is never idle while
        // there is a write to log.
        let mut open: Option<OpenGroup> = None;
        loop {
            let req = match &mut open {
                None => next_request(rx, !self.syncer.busy()),
                Some(g) => match rx.try_recv() {
                    Ok(r) => Some(r),
                    Err(mpsc::TryRecvError::Disconnected) => None,
                    Err(mpsc::TryRecvError::Empty) if self.syncer.idle_or_wake() => {
                        let g = open.take().expect("a group is open");
                        self.end_group(g);
                        self.maybe_checkpoint();
                        continue;
                    }
                    // The syncer is busy: merge what the group holds so far into its trees now,
                    // while the log syncs, not once the syncer is free (when the merge would
                    // hold up the next sync); then wait for the next write, or the syncer
                    // saying it is free.
                    Err(mpsc::TryRecvError::Empty) => {
                        self.settle_early(g);
                        rx.recv().ok()
                    }
                },
            };
            match req {
                None | Some(Request::Close) => break,
                Some(Request::Idle) => {}
                Some(Request::Run(f)) => {
                    if let Some(g) = open.take() {
                        self.end_group(g);
                    }
                    // Maintenance sees (and checkpoints) only durable, published state.
                    self.syncer.drain();
                    f(&mut self);
                }
                Some(Request::Write(f, done)) => {
                    let g = open.get_or_insert_with(|| self.begin_group());
                    self.apply_write(g, f, done);
                    if g.results.len() >= MAX_GROUP {
                        // Full: the syncer takes it after the group it is syncing.
                        let g = open.take().expect("a group is open");
                        self.end_group(g);
                        self.maybe_checkpoint();
                    }
                }
            }
        }
        if let Some(g) = open.take() {
            self.end_group(g);
        }
        self.syncer.drain();
        if self.ensure_ok().is_err() {
            return Ok(());
        }
        self.checkpoint()
    }

    fn ensure_ok(&self) -> Result<()> {
        match self.failed.clone().or_else(|| self.syncer.failed()) {
            Some(m) => Err(Error::Failed(m)),
            None => Ok(()),
        }
    }

    fn fail(&mut self, e: &Error) {
        self.failed.get_or_insert_with(|| e.to_string());
    }

    /// Replays logged transactions newer than the durable meta, then checkpoints them.
    fn recover(&mut self, records: Vec<wal::Record>) -> Result<()> {
        let mut replayed = 0;
        for rec in records {
            let expected = self.core.last_txn + 1;
            if rec.txn < expected {
                continue;
            }
            if rec.txn > expected {
                break;
            }
            let batch = Batch::decode(&rec.payload)
                .map_err(|e| Error::corrupt(None, format!("log record {} does not decode: {e}", rec.txn)))?;
            let mut tx = WriteTxn::new(&mut self.core, rec.txn);
            tx.apply(&batch)?;
            tx.flush()?;
            tx.commit();
            replayed += 1;
        }
        // Either way a checkpoint starts a new log generation (a new salt, named by its meta):
        // intact records may lie beyond the point where replay stopped (a torn record with a
        // whole one after it), and a new commit written over the torn one must never make them
        // replayable.
        if replayed > 0 {
            self.core.flush_pages()?;
        }
        self.checkpoint()
    }

    /// Makes the writer's state the one readers see (only when nothing is in the syncer's hands:
    /// at open, after a checkpoint or a compaction).
    fn publish(&mut self) {
        let (version, gauges) = self.version();
        self.counters.set(gauges);
        self.registry.publish(version);
    }

    /// The writer's state as a version for readers, with its gauges.
    fn version(&self) -> (Arc<Version>, Gauges) {
        let version =
            Arc::new(Version { txn: self.core.last_txn, trees: self.core.trees.clone(), file: self.core.file.clone() });
        let gauges = Gauges {
            page_count: self.core.alloc.page_count,
            free_pages: self.core.alloc.free_count(),
            wal_bytes: self.core.wal.used(),
        };
        (version, gauges)
    }

    /// Starts a group: pages no reader needs any more become reusable.
    fn begin_group(&mut self) -> OpenGroup {
        let broken = self.ensure_ok().err();
        if broken.is_none() {
            let released = self.core.alloc.release(self.registry.oldest());
            // Released pages staged but not yet written never need writing: no durable meta and
            // no reader reaches them any more.
            self.core.file.discard(&released);
        }
        OpenGroup { results: Vec::new(), records: Vec::new(), broken }
    }

    /// Runs one write as a sub-transaction of the open group (an error or panic rolls back only
    /// it); its caller is answered when the group ends.
    fn apply_write(&mut self, g: &mut OpenGroup, f: WriteFn, done: Done) {
        if let Some(e) = &g.broken {
            g.results.push((done, Err(Error::Failed(e.to_string()))));
            return;
        }
        let txn = self.core.last_txn + 1;
        let mut tx = WriteTxn::new(&mut self.core, txn);
        let (clock, clock_log) = (&self.clock, &self.clock_log);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            f(&mut tx)?;
            // A write that changed nothing needs no mark: no time it was stamped with is stored.
            if tx.is_empty() { Ok(None) } else { clock_log.put(clock, &mut tx) }
        }));
        let res = match outcome {
            Ok(Ok(_)) if tx.is_empty() => {
                tx.rollback();
                Ok(txn - 1)
            }
            Ok(Ok(mark)) => {
                g.records.push((txn, tx.commit()));
                self.clock_log.record(mark);
                Ok(txn)
            }
            Ok(Err(e)) => {
                tx.rollback();
                Err(e)
            }
            Err(p) => {
                tx.rollback();
                Err(Error::Panicked(panic_message(&*p)))
            }
        };
        g.results.push((done, res));
        if self.core.settling {
            g.broken = Some(Error::Failed("merging a group's writes into their trees broke off".into()));
        } else if std::mem::take(&mut self.core.write_back_failed) {
            g.broken = Some(Error::Failed("writing pages back to the data file failed".into()));
        } else if self.core.group_pending_bytes > PENDING_LIMIT
            && let Err(e) = self.core.settle()
        {
            g.broken = Some(e);
        }
    }

    /// Merges the open group's waiting changes into their trees before the group ends (its later
    /// writes rewrite the pages this wrote in place: they are the group's own); a merge that
    /// fails fails the group, as in `apply_write`.
    fn settle_early(&mut self, g: &mut OpenGroup) {
        if g.broken.is_none()
            && let Err(e) = self.core.settle()
        {
            g.broken = Some(e);
        }
    }

    /// Ends a group: merges its changes into their trees, appends its records to the log and
    /// hands it to the syncer, which makes it durable with one log sync, publishes it and
    /// acknowledges every caller; meanwhile this thread fills the next group.
    fn end_group(&mut self, g: OpenGroup) {
        let OpenGroup { results, records, broken } = g;
        if records.is_empty() && broken.is_none() {
            // Nothing to log, but the answers may rest on groups still syncing: they wait for
            // those (and go straight out when none is).
            if self.syncer.busy() {
                self.syncer.send(Group { version: None, commits: 0, acks: results, merging: None });
            } else {
                for (done, res) in results {
                    done(res);
                }
            }
            return;
        }
        if broken.is_none() && self.merges_while_syncing(&records) {
            return self.end_merging_while_syncing(results, records);
        }
        let logged = (|| {
            if let Some(e) = broken {
                return Err(e);
            }
            self.core.settle()?;
            if std::mem::take(&mut self.core.group_unlogged) {
                // A bulk run is in no redo record: the group becomes durable as a whole by a
                // checkpoint (pages, then meta), and its records need not be logged. The
                // checkpoint writes a meta at this group's txn, so every earlier group must be
                // durable first.
                self.syncer.drain();
                self.ensure_ok()?;
                self.core.flush_pages()?;
                self.checkpoint_inner()?;
                return Ok(false);
            }
            self.core.flush_pages()?;
            let refs: Vec<(u64, &[u8])> = records.iter().map(|(t, p)| (*t, p.as_slice())).collect();
            self.core.wal.append(&refs)?;
            Ok(true)
        })();
        let commits = records.len() as u64;
        self.core.recycle_logs(records.into_iter().map(|(_, log)| log));
        match logged {
            Ok(true) => {
                let group = Group { version: Some(self.version()), commits, acks: results, merging: None };
                // A lone write with the syncer idle: nothing to overlap its sync with, so no
                // hand-over (see `finish_here`); a caller writing one at a time pays no more
                // than before the syncer existed.
                // Only when the group before was lone too: among concurrent writers a lone group
                // is a bubble, and syncing it here would stop the writer applying the writes
                // that come meanwhile (the syncer would sit idle while they wait).
                let lone = std::mem::replace(&mut self.last_lone, commits == 1);
                if commits == 1 && lone && !self.syncer.busy() {
                    self.syncer.finish_here(group);
                } else {
                    self.syncer.send(group);
                }
            }
            Ok(false) => {
                self.counters.commits.fetch_add(commits, Ordering::Relaxed);
                self.counters.groups.fetch_add(1, Ordering::Relaxed);
                for (done, res) in results {
                    done(res);
                }
            }
            Err(e) => {
                self.fail(&e);
                let msg = e.to_string();
                for (done, res) in results {
                    done(res.and_then(|_| Err(Error::Failed(msg.clone()))));
                }
            }
        }
    }

    /// Whether a group ends through `end_merging_while_syncing`: a lone write after a lone one
    /// (one at a time, as for `finish_here`) with the syncer free and at least
    /// `MERGE_WHILE_SYNCING` bytes of changes to merge, none of them a bulk run (which is made
    /// durable by a checkpoint, not the log).
    fn merges_while_syncing(&self, records: &[(u64, Vec<u8>)]) -> bool {
        records.len() == 1
            && self.last_lone
            && !self.core.group_unlogged
            && self.core.group_pending_bytes >= MERGE_WHILE_SYNCING
            && !self.syncer.busy()
    }

    /// Ends a lone group whose merge is dear: its record is logged and the group handed to the
    /// syncer first, so the log syncs while this thread merges the group's changes into their
    /// trees; the syncer publishes the version left here (and acknowledges) once both are done.
    /// The redo record does not depend on the merge. A merge that fails stops the store and
    /// fails the write, as a failed sync does; its record may then be durable already, and a
    /// reopened store replays it (a write that fails this way has an unknown outcome, never a
    /// lost acknowledgement).
    fn end_merging_while_syncing(&mut self, results: Vec<(Done, Result<u64>)>, records: Vec<(u64, Vec<u8>)>) {
        let refs: Vec<(u64, &[u8])> = records.iter().map(|(t, p)| (*t, p.as_slice())).collect();
        let appended = self.core.wal.append(&refs);
        self.core.recycle_logs(records.into_iter().map(|(_, log)| log));
        if let Err(e) = appended {
            self.fail(&e);
            let msg = e.to_string();
            for (done, res) in results {
                done(res.and_then(|_| Err(Error::Failed(msg.clone()))));
            }
            return;
        }
        let merging = Arc::new(Merging::default());
        self.syncer.send(Group { version: None, commits: 1, acks: results, merging: Some(merging.clone()) });
        // Woken on this CPU, the syncer would wait for the merge to end before it starts the
        // sync (measured: ~70 us of a lone note write's ~80 us merge); yielding lets it issue
        // the sync first, where it sleeps at once. With the other CPU free this returns at once.
        std::thread::yield_now();
        match self.core.settle().and_then(|()| self.core.flush_pages()) {
            Ok(()) => merging.leave(Ok(self.version())),
            Err(e) => {
                self.fail(&e);
                merging.leave(Err(e.to_string()));
            }
        }
    }

    fn maybe_checkpoint(&mut self) {
        if self.failed.is_none()
            && (self.core.wal.used() >= self.checkpoint_bytes
                || self.core.alloc.awaiting_checkpoint() >= MAX_AWAITING_CHECKPOINT)
        {
            let _ = self.checkpoint();
        }
    }

    /// Makes the data file hold every committed transaction durably, then resets the log.
    pub(crate) fn checkpoint(&mut self) -> Result<()> {
        // The meta written is the writer's state: every group before it must be durable.
        self.syncer.drain();
        self.ensure_ok()?;
        let r = self.checkpoint_inner();
        if let Err(e) = &r {
            self.fail(e);
        }
        r
    }

    fn checkpoint_inner(&mut self) -> Result<()> {
        let core = &mut self.core;
        if !core.catalog_dirty.is_empty() {
            let names = std::mem::take(&mut core.catalog_dirty);
            let trees = core.trees.clone();
            let txn = core.last_txn;
            let mut root = core.catalog_root;
            let mut s = CoreStore { core: &mut *core, fresh: HashSet::new(), freed: Vec::new() };
            for name in &names {
                root = catalog_put(&mut s, root, name, trees.get(name).copied())?;
            }
            let (fresh, freed) = (s.fresh, s.freed);
            for id in freed {
                if fresh.contains(&id) {
                    core.dirty.remove(&id);
                    core.alloc.give_back(id);
                } else {
                    core.alloc.retire(txn, id);
                }
            }
            core.catalog_root = root;
            core.flush_pages()?;
        }
        core.file.write_back()?;
        let mut list = core.alloc.build_list(&core.file, core.last_txn)?;
        core.file.write(&mut list.pages)?;
        core.file.sync()?;
        let meta = Meta {
            txn: core.last_txn,
            catalog_root: core.catalog_root,
            freelist_head: list.holders.first().copied().unwrap_or(NO_PAGE),
            freelist_len: list.entries,
            page_count: core.alloc.page_count,
            sequence: self.meta_sequence + 1,
            store_id: self.store_id,
            log_salt: wal::random_u64(),
        };
        let slot = 1 - self.meta_slot;
        core.file.write(&mut [(slot, meta.encode(slot))])?;
        core.file.forget(slot);
        core.file.sync()?;
        self.meta_slot = slot;
        self.meta_sequence += 1;
        // The log follows the meta: reset only once the meta naming its salt is durable.
        core.wal.reset(meta.log_salt)?;
        core.alloc.checkpointed(list.holders);
        self.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
        self.publish();
        Ok(())
    }

    /// Rewrites the live trees into a new data file and swaps it in.
    fn compact(&mut self, opts: CompactOptions) -> Result<CompactReport> {
        self.checkpoint()?;
        let pages_before = self.core.alloc.page_count;
        let data_path = self.dir.join(DATA_FILE);
        let tmp = tmp_path(&data_path);
        let version = self.registry.current();
        // The new data file's metas name the log's current generation, which it keeps.
        let built = copy::build(&version, &*self.vfs, &tmp, self.store_id, self.core.wal.salt())?;
        self.vfs.rename(&tmp, &data_path).map_err(io("installing the compacted data file"))?;
        let file = self.vfs.open(&data_path, false).map_err(io("opening the compacted data file"))?;
        let old = std::mem::replace(&mut self.core.file, Arc::new(PageFile::new(file, self.cache_bytes)));
        let mut bytes_zeroed = 0;
        if opts.purge {
            bytes_zeroed += old.file.len().map_err(io("reading the old data file's length"))?;
            old.zero_on_drop();
            bytes_zeroed += self.core.wal.zero()?;
        }
        drop(old);
        self.core.alloc = Allocator::new(built.page_count, built.page_count, BTreeSet::new(), Vec::new());
        self.core.catalog_root = built.catalog_root;
        self.core.trees = Arc::new(load_catalog(&self.core.file, built.catalog_root)?);
        self.meta_slot = 0;
        self.meta_sequence = 1;
        self.publish();
        Ok(CompactReport { pages_before, pages_after: built.page_count, bytes_zeroed })
    }

    pub(crate) fn page_count(&self) -> u64 {
        self.core.alloc.page_count
    }

    pub(crate) fn meta_slot(&self) -> PageId {
        self.meta_slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> StoreOptions {
        StoreOptions { cache_bytes: 1 << 20, checkpoint_bytes: 1 << 20, ..StoreOptions::default() }
    }

    fn key(i: u32) -> Vec<u8> {
        format!("key-{i:08}").into_bytes()
    }

    /// Keys past which `delete_prefix` deletes in bulk.
    const BULK: u32 = crate::write::LOGGED_DELETE_MAX as u32;

    #[test]
    fn range_first_reads_a_bounded_start_of_a_range_with_waiting_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        store
            .write(|t| {
                for k in ["a0", "a1", "a2", "a3", "a4", "b0"] {
                    t.put("t", k.as_bytes(), b"v")?;
                }
                Ok(())
            })
            .unwrap();
        let keys = |entries: crate::write::Entries| {
            entries.into_iter().map(|(k, _)| String::from_utf8(k).unwrap()).collect::<Vec<_>>()
        };
        store
            .write(move |t| {
                t.delete("t", b"a1")?;
                t.put("t", b"a05", b"v")?;
                t.put("t", b"a9", b"v")?;
                // Three read: a0, a1 (deleted here), a2; a05 waits between them, a9 after the last read.
                let first = t.range_first("t", Bound::Included(b"a"), Bound::Excluded(b"b"), 3)?;
                assert_eq!(keys(first), ["a0", "a05", "a2"]);
                let rest = t.range_first("t", Bound::Excluded(b"a2"), Bound::Unbounded, 10)?;
                assert_eq!(keys(rest), ["a3", "a4", "a9", "b0"]);
                assert_eq!(
                    keys(t.range_first("t", Bound::Included(b"a"), Bound::Included(b"a3"), 0)?),
                    Vec::<String>::new()
                );
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn writes_survive_reopen_and_check_is_clean() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        for chunk in 0..20u32 {
            let mut b = Batch::default();
            for i in chunk * 500..(chunk + 1) * 500 {
                b.put("t", &key(i), &vec![(i % 251) as u8; (i % 97) as usize]);
            }
            store.apply(b).unwrap();
        }
        let mut b = Batch::default();
        for i in (0..10_000).step_by(3) {
            b.delete("t", &key(i));
        }
        store.apply(b).unwrap();
        store
            .apply({
                let mut b = Batch::default();
                b.put("big", b"v", &vec![9u8; 100_000]);
                b
            })
            .unwrap();
        let report = store.check().unwrap();
        assert!(report.ok, "{:?}", report.problems);
        store.close().unwrap();
        assert_eq!(store.get("t", b"x").unwrap_err().code(), "STORE_CLOSED");

        let store = Store::open(dir.path(), opts()).unwrap();
        let snap = store.snapshot().unwrap();
        assert_eq!(snap.tree_len("t").unwrap(), 10_000 - 3334);
        for i in 0..10_000u32 {
            let got = snap.get("t", &key(i)).unwrap();
            if i % 3 == 0 {
                assert_eq!(got, None);
            } else {
                assert_eq!(got, Some(vec![(i % 251) as u8; (i % 97) as usize]));
            }
        }
        assert_eq!(snap.get("big", b"v").unwrap().unwrap().len(), 100_000);
        let all: Vec<_> = snap.range("t", Bound::Unbounded, Bound::Unbounded).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(all.len(), 6666);
        assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
        let report = store.check().unwrap();
        assert!(report.ok, "{:?}", report.problems);
    }

    #[test]
    fn the_bytes_waiting_in_a_group_fall_back_to_zero_when_it_settles() {
        // Writes of one group that change the same key: the count of what waits for `settle`
        // must not outgrow what waits (past `PENDING_LIMIT` every later write settled alone).
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        let (tx, rx) = mpsc::channel();
        let before = store.stats();
        for i in 0..100u32 {
            let tx = tx.clone();
            store.submit_fn(
                Box::new(move |t| {
                    if i == 0 {
                        // Holds the writer so that the others queue and join its group.
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                    t.put("t", b"k", &i.to_le_bytes())
                }),
                Box::new(move |r| tx.send(r.is_ok()).unwrap()),
            );
        }
        assert!((0..100).all(|_| rx.recv().unwrap()));
        let after = store.stats();
        assert!(after.groups - before.groups < 10, "the writes shared groups");
        let waiting = store.run(|w| Ok(w.core.group_pending_bytes)).unwrap();
        assert_eq!(waiting, 0);
        assert_eq!(store.get("t", b"k").unwrap().unwrap(), 99u32.to_le_bytes());
    }

    #[test]
    fn snapshots_do_not_see_later_writes_and_compaction_keeps_data() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        let mut b = Batch::default();
        for i in 0..3000 {
            b.put("t", &key(i), b"one");
        }
        store.apply(b).unwrap();
        let snap = store.snapshot().unwrap();
        for round in 0..5 {
            let mut b = Batch::default();
            for i in 0..3000 {
                b.put("t", &key(i), format!("round{round}").as_bytes());
            }
            store.apply(b).unwrap();
            store.checkpoint().unwrap();
        }
        assert_eq!(snap.get("t", &key(5)).unwrap().unwrap(), b"one");
        let r = store.compact(CompactOptions { purge: true }).unwrap();
        assert!(r.pages_after < r.pages_before, "{r:?}");
        assert_eq!(snap.get("t", &key(5)).unwrap().unwrap(), b"one");
        drop(snap);
        assert_eq!(store.get("t", &key(5)).unwrap().unwrap(), b"round4");
        let report = store.check().unwrap();
        assert!(report.ok, "{:?}", report.problems);
        let backup = tempfile::tempdir().unwrap();
        store.backup(&backup.path().join("b")).unwrap();
        store.close().unwrap();
        let copy = Store::open(backup.path().join("b"), opts()).unwrap();
        assert_eq!(copy.get("t", &key(2999)).unwrap().unwrap(), b"round4");
        assert!(copy.check().unwrap().ok);
    }

    #[test]
    fn concurrent_writers_see_their_acknowledged_writes_and_keep_them() {
        // Groups are applied while the one before syncs; an acknowledgement still means the
        // write is durable and published, so a read right after it sees it.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        let threads: Vec<_> = (0..8u32)
            .map(|t| {
                let store = store.clone();
                std::thread::spawn(move || {
                    for i in 0..100u32 {
                        let k = key(t * 1000 + i);
                        let v = format!("{t}-{i}").into_bytes();
                        let (k2, v2) = (k.clone(), v.clone());
                        store.write(move |tx| tx.put("t", &k2, &v2)).unwrap();
                        assert_eq!(store.get("t", &k).unwrap(), Some(v), "an acknowledged write is visible");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let stats = store.stats();
        assert_eq!(stats.commits, 800);
        assert!(stats.groups <= stats.commits);
        store.close().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        assert_eq!(store.snapshot().unwrap().tree_len("t").unwrap(), 800);
        assert!(store.check().unwrap().ok);
    }

    /// Opens a store on a faulty file system, writes one key, then runs `writes` with the I/O
    /// failing at each of the next few points in turn (the log append, the log sync, ...):
    /// `writes` checks what its writes answered and published. After a failure the store refuses
    /// later writes; one of the points must have been the log sync.
    fn at_each_log_failure(writes: impl Fn(&crate::vfs::fault::FaultFs, &Store)) {
        use crate::vfs::fault::{FaultFs, PointKind};
        let mut sync_failed = false;
        for k in 0..4 {
            let fs = FaultFs::new();
            let store = Store::open("/s", StoreOptions { vfs: Arc::new(fs.clone()), ..opts() }).unwrap();
            store.write(|tx| tx.put("t", b"a", b"1")).unwrap();
            fs.crash_after(fs.points() + k);
            writes(&fs, &store);
            if let Some(point) = fs.crash_point() {
                sync_failed |= point.kind == PointKind::Sync;
                assert_eq!(store.get("t", b"a").unwrap(), Some(b"1".to_vec()));
                assert_eq!(store.write(|tx| tx.put("t", b"c", b"3")).unwrap_err().code(), "STORE_FAILED");
            }
            let _ = store.close();
        }
        assert!(sync_failed, "one of the crash points was the log sync");
    }

    #[test]
    fn a_failed_log_sync_acknowledges_nothing_and_publishes_nothing() {
        // One write (synced on the writer, `finish_here`): whether its log append or its sync
        // fails, it is not acknowledged and readers never see it.
        at_each_log_failure(|fs, store| {
            let res = store.write(|tx| tx.put("t", b"b", b"2"));
            let Some(point) = fs.crash_point() else {
                assert!(res.is_ok(), "no crash came, so the write is durable");
                return;
            };
            assert!(res.is_err(), "a write whose log I/O failed at {point:?} was acknowledged");
            assert_eq!(store.get("t", b"b").unwrap(), None, "a write that is not durable was published");
        });
    }

    #[test]
    fn a_failed_log_sync_of_a_lone_write_merged_meanwhile_acknowledges_nothing() {
        // A lone write with `MERGE_WHILE_SYNCING` bytes to merge is logged before its merge and
        // synced by the syncer thread while the writer merges: it too is acknowledged and
        // published only once durable, and readers see it as soon as it is acknowledged.
        let big = vec![7u8; MERGE_WHILE_SYNCING];
        at_each_log_failure(|fs, store| {
            let v = big.clone();
            let res = store.write(move |tx| tx.put("t", b"b", &v));
            let Some(point) = fs.crash_point() else {
                assert!(res.is_ok(), "no crash came, so the write is durable");
                assert_eq!(store.get("t", b"b").unwrap(), Some(big.clone()), "an acknowledged write is published");
                return;
            };
            assert!(res.is_err(), "a write whose log I/O failed at {point:?} was acknowledged");
            assert_eq!(store.get("t", b"b").unwrap(), None, "a write that is not durable was published");
        });
    }

    #[test]
    fn lone_writes_merged_while_they_sync_are_read_back_at_once_and_after_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let value = |i: u32| vec![u8::try_from(i % 251).unwrap(); MERGE_WHILE_SYNCING + 100];
        let store = Store::open(dir.path(), opts()).unwrap();
        for i in 0..200 {
            store.write(move |tx| tx.put("t", &key(i % 50), &value(i))).unwrap();
            assert_eq!(store.get("t", &key(i % 50)).unwrap(), Some(value(i)), "write {i} read back when acknowledged");
        }
        store.close().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        for i in 150..200 {
            assert_eq!(store.get("t", &key(i % 50)).unwrap(), Some(value(i)), "write {i} after reopen");
        }
        let report = store.check().unwrap();
        assert!(report.ok, "{:?}", report.problems);
    }

    #[test]
    fn a_failed_log_sync_of_a_group_of_writes_acknowledges_none_of_them() {
        // Writes queued together form groups of more than one write, which the syncer thread
        // syncs: each is published exactly when it is acknowledged.
        at_each_log_failure(|fs, store| {
            let (tx, rx) = std::sync::mpsc::channel();
            for i in 0..8u32 {
                let tx = tx.clone();
                let mut b = Batch::default();
                b.put("t", &key(i), b"v");
                store.submit(b, Box::new(move |r: Result<u64>| tx.send((i, r.is_ok())).unwrap()));
            }
            drop(tx);
            // Each answer names its write: two threads answer, so they may come in another order.
            // The syncer lets the writer end the next group once a group is durable, then answers
            // the group's callers; the writer fails the next group's at once when its log append
            // fails, perhaps before (with both threads delayed there: write 0 published, its answer
            // after write 4's).
            let mut answers = [None; 8];
            for (i, ok) in &rx {
                assert!(answers[i as usize].replace(ok).is_none(), "write {i} is answered once");
            }
            let acked: Vec<bool> = answers.iter().map(|a| a.expect("every write is answered")).collect();
            let Some(point) = fs.crash_point() else {
                assert!(acked.iter().all(|ok| *ok), "no crash came, so every write is durable");
                return;
            };
            for (i, ok) in acked.iter().enumerate() {
                let seen = store.get("t", &key(u32::try_from(i).unwrap())).unwrap().is_some();
                assert_eq!(seen, *ok, "write {i}: published exactly when acknowledged (crash at {point:?})");
            }
            assert!(!acked[7], "the last write cannot be durable once the log failed before it");
        });
    }

    #[test]
    fn a_failing_write_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        store
            .apply({
                let mut b = Batch::default();
                b.put("t", b"a", b"1");
                b
            })
            .unwrap();
        let err = store
            .write(|tx| {
                tx.put("t", b"b", b"2")?;
                tx.put("t", &vec![0u8; 5000], b"too long")
            })
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        let err = store
            .write(|tx| -> Result<()> {
                tx.put("t", b"c", b"3")?;
                panic!("boom")
            })
            .unwrap_err();
        assert_eq!(err.code(), "STORE_PANIC");
        assert_eq!(store.get("t", b"b").unwrap(), None);
        assert_eq!(store.get("t", b"c").unwrap(), None);
        assert_eq!(store.snapshot().unwrap().tree_len("t").unwrap(), 1);
        assert!(store.check().unwrap().ok);
    }

    /// Runs `expect` on `store`, then on the store closed and opened again.
    fn before_and_after_reopen(store: &Store, dir: &std::path::Path, expect: impl Fn(&Store)) {
        expect(store);
        store.close().unwrap();
        expect(&Store::open(dir, opts()).unwrap());
    }

    /// Keys `p\x01…` (the prefix deleted), every 997th value long enough for an overflow chain,
    /// between neighbours `p\x00…` and `p\x02…` that must stay.
    fn fill_prefix(store: &Store, n: u32) {
        for chunk in (0..n).step_by(5000) {
            let mut b = Batch::default();
            for i in chunk..(chunk + 5000).min(n) {
                let len = if i % 997 == 0 { 9000 } else { (i % 40) as usize };
                b.put("t", &[b"p\x01", &key(i)[..]].concat(), &vec![(i % 251) as u8; len]);
            }
            store.apply(b).unwrap();
        }
        let mut b = Batch::default();
        for i in 0..300 {
            b.put("t", &[b"p\x00", &key(i)[..]].concat(), b"before");
            b.put("t", &[b"p\x02", &key(i)[..]].concat(), b"after");
        }
        store.apply(b).unwrap();
    }

    #[test]
    fn a_long_prefix_is_deleted_in_bulk_with_the_writes_of_its_group_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        // Three merges: the first keys read, a whole chunk, the rest.
        let n = BULK + crate::write::BULK_DELETE_CHUNK as u32 + 123;
        fill_prefix(&store, n);
        let (tx, rx) = mpsc::channel();
        // A logged write holds the writer so the bulk delete and another logged write queue
        // behind it and join its group.
        let first = tx.clone();
        store.submit_fn(
            Box::new(|t| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                t.put("u", b"first", b"1")
            }),
            Box::new(move |r| first.send(r.map(|_| 0)).unwrap()),
        );
        let (count_tx, count_rx) = mpsc::channel();
        let deleted = tx.clone();
        store.submit_fn(
            Box::new(move |t| {
                // This write's own changes count: one stored key erased, two new ones put.
                t.erase("t", &[b"p\x01", &key(5)[..]].concat())?;
                t.put("t", &[b"p\x01", &key(n)[..]].concat(), b"new")?;
                t.put("t", &[b"p\x01", &key(n + 1)[..]].concat(), &[7; 9000])?;
                count_tx.send(t.delete_prefix("t", b"p\x01")?).unwrap();
                t.put("u", b"after-delete", b"2")
            }),
            Box::new(move |r| deleted.send(r.map(|_| 1)).unwrap()),
        );
        let last = tx.clone();
        store.submit_fn(Box::new(|t| t.put("u", b"last", b"3")), Box::new(move |r| last.send(r.map(|_| 2)).unwrap()));
        for _ in 0..3 {
            rx.recv().unwrap().unwrap();
        }
        assert_eq!(count_rx.recv().unwrap(), u64::from(n) + 1);
        let expect = |store: &Store| {
            let snap = store.snapshot().unwrap();
            assert_eq!(snap.tree_len("t").unwrap(), 600);
            let all: Vec<_> =
                snap.range("t", Bound::Unbounded, Bound::Unbounded).unwrap().collect::<Result<_>>().unwrap();
            assert_eq!(all.len(), 600);
            assert!(all.iter().all(|(k, _)| !k.starts_with(b"p\x01")));
            assert_eq!(snap.get("t", &[b"p\x00", &key(299)[..]].concat()).unwrap().unwrap(), b"before");
            assert_eq!(snap.get("t", &[b"p\x02", &key(0)[..]].concat()).unwrap().unwrap(), b"after");
            for k in [&b"first"[..], b"after-delete", b"last"] {
                assert!(snap.get("u", k).unwrap().is_some(), "{}", String::from_utf8_lossy(k));
            }
            let report = store.check().unwrap();
            assert!(report.ok, "{:?}", report.problems);
        };
        before_and_after_reopen(&store, dir.path(), expect);
    }

    #[test]
    fn a_bulk_delete_in_a_write_that_fails_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        let n = BULK + 10;
        fill_prefix(&store, n);
        let err = store
            .write(move |t| -> Result<()> {
                assert_eq!(t.delete_prefix("t", b"p\x01")?, u64::from(n));
                Err(Error::InvalidArgument("changed my mind".into()))
            })
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        let expect = |store: &Store| {
            let snap = store.snapshot().unwrap();
            assert_eq!(snap.tree_len("t").unwrap(), u64::from(n) + 600);
            for i in (0..n).step_by(997) {
                assert_eq!(snap.get("t", &[b"p\x01", &key(i)[..]].concat()).unwrap().unwrap().len(), 9000);
            }
            assert!(store.check().unwrap().ok);
        };
        before_and_after_reopen(&store, dir.path(), expect);
    }

    /// A power failure at any I/O point of a bulk prefix delete (which goes in no redo record:
    /// its group is made durable by a checkpoint) leaves a store that opens clean with all of the
    /// prefix or none of it, and none once the delete was acknowledged; torn writes included.
    #[test]
    fn a_crash_during_a_bulk_prefix_delete_keeps_all_of_the_prefix_or_none() {
        use crate::vfs::fault::{CrashMode, FaultFs, PointKind};
        use std::path::Path;
        let dir = Path::new("/store");
        let options = |fs: &FaultFs| StoreOptions {
            cache_bytes: 1 << 20,
            checkpoint_bytes: 1 << 20,
            vfs: Arc::new(fs.clone()),
            ..StoreOptions::default()
        };
        let n = BULK + 500;
        // Fills and checkpoints a store, then deletes the prefix: whether the delete was
        // acknowledged, and at which point the delete began.
        let run = |fs: &FaultFs| -> (bool, u64) {
            let store = Store::open(dir, options(fs)).unwrap();
            fill_prefix(&store, n);
            store.checkpoint().unwrap();
            let start = fs.points();
            let acked = store.write(|t| t.delete_prefix("t", b"p\x01")).is_ok();
            let _ = store.close();
            (acked, start)
        };
        let dry = FaultFs::new();
        dry.record_trace(true);
        let (acked, start) = run(&dry);
        assert!(acked);
        let trace = dry.trace();
        for point in start..=dry.points() {
            let fs = FaultFs::new();
            if trace.get(point as usize).is_some_and(|p| matches!(p.kind, PointKind::Write { .. })) {
                fs.crash_after_torn(point, point);
            } else {
                fs.crash_after(point);
            }
            let (acked, _) = run(&fs);
            for mode in CrashMode::ALL {
                let image = fs.crash_image(mode, point);
                let store = Store::open(dir, options(&image)).unwrap_or_else(|e| panic!("point {point} {mode:?}: {e}"));
                let snap = store.snapshot().unwrap();
                let left =
                    snap.range("t", Bound::Included(&b"p\x01"[..]), Bound::Excluded(&b"p\x02"[..])).unwrap().count();
                assert!(
                    left == 0 || (left == n as usize && !acked),
                    "point {point} {mode:?}: {left} keys left, acked {acked}"
                );
                assert_eq!(snap.tree_len("t").unwrap(), left as u64 + 600, "point {point} {mode:?}");
                assert_eq!(snap.get("t", &[b"p\x02", &key(299)[..]].concat()).unwrap().unwrap(), b"after");
                let report = store.check().unwrap();
                assert!(report.ok, "point {point} {mode:?}: {:?}", report.problems);
            }
        }
    }

    /// A step of `prefix_deletes_match_a_model`.
    #[derive(Debug, Clone)]
    enum PrefixStep {
        /// Puts `count` keys of prefix `p` (suffixes from `start`), every `long`th value past a page.
        Fill {
            p: u8,
            start: u32,
            count: u32,
            long: u32,
        },
        /// Deletes prefix `p` (`delete_prefix`), after putting one key of it and erasing another
        /// in the same write, so its own changes count.
        Delete {
            p: u8,
            put: u32,
            erase: u32,
        },
        Reopen,
    }

    fn prefix_step() -> impl proptest::strategy::Strategy<Value = PrefixStep> {
        use proptest::prelude::*;
        prop_oneof![
            3 => (0..3u8, 0..6000u32, prop_oneof![1..200u32, 4000..4300u32, 9000..9500u32], 50..2000u32)
                .prop_map(|(p, start, count, long)| PrefixStep::Fill { p, start, count, long }),
            3 => (0..3u8, 0..16_000u32, 0..16_000u32).prop_map(|(p, put, erase)| PrefixStep::Delete { p, put, erase }),
            1 => Just(PrefixStep::Reopen),
        ]
    }

    fn prefixed(p: u8, i: u32) -> Vec<u8> {
        [&[b'p', p][..], &key(i)].concat()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..Default::default() })]

        /// Prefix deletes of every size (key by key below the limit, in bulk past it), mixed with
        /// puts of neighbouring prefixes and reopens, leave the store equal to a model, checking clean.
        #[test]
        fn prefix_deletes_match_a_model(steps in proptest::collection::vec(prefix_step(), 1..8)) {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(dir.path(), opts()).unwrap();
            let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
            for step in steps {
                match step {
                    PrefixStep::Fill { p, start, count, long } => {
                        let mut b = Batch::default();
                        for i in start..start + count {
                            let value = vec![p; if i % long == 0 { 5000 } else { (i % 30) as usize }];
                            b.put("t", &prefixed(p, i), &value);
                            model.insert(prefixed(p, i), value);
                        }
                        store.apply(b).unwrap();
                    }
                    PrefixStep::Delete { p, put, erase } => {
                        let (put_key, erase_key) = (prefixed(p, put), prefixed(p, erase));
                        let prefix = [b'p', p];
                        let (n, _) = store
                            .write(move |t| {
                                t.put("t", &put_key, b"own")?;
                                t.erase("t", &erase_key)?;
                                t.delete_prefix("t", &prefix)
                            })
                            .unwrap();
                        model.insert(prefixed(p, put), b"own".to_vec());
                        model.remove(&prefixed(p, erase));
                        let before = model.len();
                        model.retain(|k, _| !k.starts_with(&[b'p', p]));
                        proptest::prop_assert_eq!(n, (before - model.len()) as u64);
                    }
                    PrefixStep::Reopen => {
                        store.close().unwrap();
                        store = Store::open(dir.path(), opts()).unwrap();
                    }
                }
                let snap = store.snapshot().unwrap();
                let all: BTreeMap<Vec<u8>, Vec<u8>> =
                    snap.range("t", Bound::Unbounded, Bound::Unbounded).unwrap().collect::<Result<_>>().unwrap();
                proptest::prop_assert!(all == model, "{} stored, {} in the model", all.len(), model.len());
                proptest::prop_assert_eq!(snap.tree_len("t").unwrap(), model.len() as u64);
            }
            let report = store.check().unwrap();
            proptest::prop_assert!(report.ok, "{:?}", report.problems);
        }
    }

    /// A write whose redo record would pass `LOG_RECORD_MAX` (a key rewritten over and over)
    /// goes in no record: its group is checkpointed, the log stays small, and what it wrote last
    /// is there, after a reopen too.
    #[test]
    fn a_write_whose_redo_record_outgrows_the_limit_is_checkpointed_instead() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        let rewrites = crate::write::LOG_RECORD_MAX / 100_000 + 10;
        let before = store.stats();
        store
            .write(move |t| {
                for i in 0..rewrites {
                    t.put("t", b"hot", &vec![(i % 251) as u8; 100_000])?;
                    t.put("t", &key(i as u32), b"cold")?;
                }
                Ok(())
            })
            .unwrap();
        let after = store.stats();
        assert_eq!(after.checkpoints, before.checkpoints + 1, "the group was checkpointed");
        assert!(after.wal_bytes < 1 << 20, "the log holds no record of it: {} bytes", after.wal_bytes);
        let expect = |store: &Store| {
            let snap = store.snapshot().unwrap();
            assert_eq!(snap.get("t", b"hot").unwrap().unwrap(), vec![((rewrites - 1) % 251) as u8; 100_000]);
            assert_eq!(snap.tree_len("t").unwrap(), rewrites as u64 + 1);
            assert!(store.check().unwrap().ok);
        };
        before_and_after_reopen(&store, dir.path(), expect);
    }

    #[test]
    fn ascending_inserts_leave_full_pages() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts()).unwrap();
        for chunk in 0..10u64 {
            let mut b = Batch::default();
            for i in chunk * 1000..(chunk + 1) * 1000 {
                b.put("t", &i.to_be_bytes().repeat(2), &[7u8; 100]);
            }
            store.apply(b).unwrap();
        }
        let report = store.check().unwrap();
        assert!(report.ok, "{:?}", report.problems);
        // 124 bytes an entry: 32 to a full leaf, so 10,000 keys need 313 leaves at best; half-full
        // pages (a middle split per append) would need over 600.
        assert!(report.pages_reachable < 340, "{} pages for 10,000 ascending keys", report.pages_reachable);
    }

    /// Pages leave memory for the file on the write-back thread while readers, with a cache far
    /// smaller than what is staged, keep missing it: every read finds the page image its
    /// snapshot needs (in the gathering batch, the batch being written, or the file).
    #[test]
    fn readers_see_pages_while_they_are_written_back() {
        const PER_ROUND: u32 = 20_000;
        let dir = tempfile::tempdir().unwrap();
        let opts = StoreOptions { cache_bytes: 256 << 10, checkpoint_bytes: 1 << 30, ..StoreOptions::default() };
        let store = Store::open(dir.path(), opts).unwrap();
        // Each round adds new keys (so staged pages pile up past a write-back batch); a value
        // names its key, so a page read from the wrong place shows.
        let value = |i: u32| format!("{i:08}-{}", "x".repeat(90)).into_bytes();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (store, stop) = (store.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut scans = 0;
                while !stop.load(Ordering::Relaxed) {
                    let snap = store.snapshot().unwrap();
                    let mut n = 0u32;
                    for entry in snap.range("t", Bound::Unbounded, Bound::Unbounded).unwrap() {
                        let (k, v) = entry.unwrap();
                        assert_eq!(k, key(n), "keys in order, none missing");
                        assert_eq!(v, value(n));
                        n += 1;
                    }
                    assert_eq!(n % PER_ROUND, 0, "a snapshot holds whole rounds");
                    scans += 1;
                }
                scans
            })
        };
        for round in 0..12u32 {
            let mut b = Batch::default();
            for i in round * PER_ROUND..(round + 1) * PER_ROUND {
                b.put("t", &key(i), &value(i));
            }
            store.apply(b).unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        let report = store.check().unwrap();
        assert!(report.ok, "{:?}", report.problems);
    }

    #[test]
    fn a_second_open_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let _store = Store::open(dir.path(), opts()).unwrap();
        let err = Store::open(dir.path(), opts()).unwrap_err();
        assert_eq!(err.code(), "STORE_LOCKED");
        assert!(err.to_string().contains(&std::process::id().to_string()), "{err}");
    }
}
