//! `BindingStore`: the JavaScript face of `cairn_engine::Store`. Point reads are synchronous (a
//! few cached pages, like better-sqlite3); writes are submitted at once, in call order, and
//! answered by a promise; scans and maintenance run on the libuv pool.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn_engine::{Batch, Store};
use napi::Env;
use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice, Either, Object, Uint8ArraySlice};
use napi_derive::napi;

use crate::error::{Failure, guard, to_napi};
use crate::job::Job;
use crate::reply::Reply;
use crate::scan::{Scan, copy_into, scan_job, tree_name};
use crate::snapshot::BindingSnapshot;
use crate::types::{
    BindingBackupReport, BindingCaller, BindingCheckReport, BindingCompactOptions, BindingCompactReport, BindingStats,
    BindingStoreOptions,
};

/// An open store directory. Obtained from `openStore`; closed by `close()`.
#[napi]
pub struct BindingStore {
    store: Store,
    /// `note_write`s on the libuv pool that hold their thread until durable (see `notes`).
    pool_writes: Arc<AtomicUsize>,
}

/// How many `note_write`s may hold a pool thread until durable; past that, a write is queued
/// without waiting. Waiting on the pool answers a lone writer sooner (the promise settles from
/// the pool's completion, which costs less than a settle from the writer thread), while writes
/// past this many would keep the pool's threads (four by default) from reads and from joining
/// the writer's next group commit.
const POOL_WRITES: usize = 2;

/// Counts a `note_write` in `BindingStore::pool_writes` while it lives.
struct PoolWrite(Arc<AtomicUsize>);

impl PoolWrite {
    fn enter(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        PoolWrite(Arc::clone(count))
    }
}

impl Drop for PoolWrite {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Opens (creating if needed) the store in `dir`, taking its lock and running recovery.
#[napi(ts_return_type = "Promise<BindingStore>")]
pub fn open_store(dir: String, options: Option<BindingStoreOptions>) -> AsyncTask<Job<BindingStore>> {
    AsyncTask::new(Job::new(move || {
        let opts =
            options.map_or_else(|| Ok(cairn_engine::StoreOptions::default()), BindingStoreOptions::into_engine)?;
        let store = guard(|| Store::open(&dir, opts))?;
        Ok(BindingStore { store, pool_writes: Arc::default() })
    }))
}

#[napi]
impl BindingStore {
    /// The value of `key` in `tree` at the latest commit, or null.
    #[napi]
    #[allow(clippy::needless_pass_by_value)] // napi hands JavaScript strings over as owned `String`s
    pub fn get<'env>(&self, env: &'env Env, tree: String, key: &[u8]) -> napi::Result<Option<BufferSlice<'env>>> {
        let value = to_napi(*env, guard(|| self.store.get(&tree, key)))?;
        // A copy into a V8-owned buffer is far cheaper than an external buffer with a finalizer.
        value.map(|v| BufferSlice::copy_from(env, v)).transpose()
    }

    /// Point read into `out`: returns the value's length (-1 when absent), having copied it into
    /// `out` when it fits. Filling a caller's buffer spares the allocation of a new one per read.
    /// The tree name comes as its UTF-8 bytes: callers keep one buffer per tree, which spares a
    /// string conversion and an allocation per read.
    #[napi]
    pub fn get_into(&self, env: &Env, tree: &[u8], key: &[u8], mut out: Uint8ArraySlice) -> napi::Result<i64> {
        let tree = to_napi(*env, tree_name(tree))?;
        // SAFETY: this runs on the JS thread inside a synchronous call, so no JavaScript touches
        // `out` while it is written.
        let out = unsafe { out.as_mut() };
        to_napi(*env, guard(|| self.store.get_with(tree, key, |v| copy_into(v, out))))
    }

    /// Commits one encoded batch (see `batch.rs`); resolves with its transaction id once durable.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn write<'env>(&self, env: &'env Env, batch: &[u8]) -> napi::Result<Object<'env>> {
        let (deferred, promise) = env.create_deferred()?;
        let reply = Reply::new(deferred);
        match guard(|| Batch::decode(batch)) {
            Err(failure) => reply.send(Err(failure)),
            Ok(batch) => {
                let done = Box::new(move |result: cairn_engine::Result<u64>| {
                    reply.send(result.map_err(Failure::from));
                });
                // A panic inside `submit` drops `done`, whose `Reply` then rejects the promise.
                let _ = catch_unwind(AssertUnwindSafe(|| self.store.submit(batch, done)));
            }
        }
        Ok(promise)
    }

    /// Entries of `tree` with `start <= key < end` (either side open when omitted), in key
    /// order, at most `limit`, as one buffer of length-prefixed keys and values.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn range(
        &self,
        tree: String,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        limit: Option<u32>,
    ) -> AsyncTask<Job<Buffer>> {
        let scan = Scan::Range { start: start.map(<[u8]>::to_vec), end: end.map(<[u8]>::to_vec) };
        scan_job(guard(|| self.store.snapshot()), tree, scan, limit)
    }

    /// Entries of `tree` whose key starts with `prefix`, encoded as `range` does.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn prefix(&self, tree: String, prefix: &[u8], limit: Option<u32>) -> AsyncTask<Job<Buffer>> {
        scan_job(guard(|| self.store.snapshot()), tree, Scan::Prefix(prefix.to_vec()), limit)
    }

    /// A consistent read view pinned at the latest commit; release it with `close()`.
    #[napi]
    pub fn snapshot(&self, env: &Env) -> napi::Result<BindingSnapshot> {
        to_napi(*env, guard(|| self.store.snapshot())).map(BindingSnapshot::new)
    }

    /// Walks every page and tree and reports what is wrong, if anything.
    #[napi(ts_return_type = "Promise<BindingCheckReport>")]
    pub fn check(&self) -> AsyncTask<Job<BindingCheckReport>> {
        let store = self.store.clone();
        AsyncTask::new(Job::new(move || Ok(guard(|| store.check())?.into())))
    }

    /// Writes a consistent copy of the store to `dest` while writes go on.
    #[napi(ts_return_type = "Promise<BindingBackupReport>")]
    pub fn backup(&self, dest: String) -> AsyncTask<Job<BindingBackupReport>> {
        let store = self.store.clone();
        AsyncTask::new(Job::new(move || Ok(guard(|| store.backup(&PathBuf::from(dest)))?.into())))
    }

    /// Rewrites the data file without free pages; with `purge`, also zeroes freed bytes.
    #[napi(ts_return_type = "Promise<BindingCompactReport>")]
    pub fn compact(&self, options: Option<BindingCompactOptions>) -> AsyncTask<Job<BindingCompactReport>> {
        let store = self.store.clone();
        let opts = BindingCompactOptions::into_engine(options);
        AsyncTask::new(Job::new(move || Ok(guard(|| store.compact(opts))?.into())))
    }

    /// Copies the WAL into the data file and truncates it.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn checkpoint(&self) -> AsyncTask<Job<()>> {
        let store = self.store.clone();
        AsyncTask::new(Job::new(move || guard(|| store.checkpoint())))
    }

    /// Runs the knowledge verb `verb` (`status`, `remember`, …) for `caller` with a JSON `body`;
    /// resolves with the JSON reply. Off the event loop; a write resolves once durable.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn knowledge(&self, verb: String, caller: BindingCaller, body: Buffer) -> AsyncTask<Job<Buffer>> {
        let store = self.store.clone();
        AsyncTask::new(Job::new(move || {
            let caller = caller.into_engine()?;
            let reply = guard(|| cairn_engine::knowledge::api::call(&store, &verb, &caller, &body))?;
            Ok(reply.into())
        }))
    }

    /// Runs the notes verb `verb` (`note_write`, `note_list`, `note_forget`, `history`, `audit`,
    /// `handoff_create`, `handoff_resume`) for `caller` with a JSON `body`; resolves with the JSON
    /// reply, a write once durable. Off the event loop, on the libuv pool. While `POOL_WRITES`
    /// writes are waiting there, a further `note_write` holds its pool thread only while it is
    /// validated and worked out: it is then queued and its promise settled from the writer
    /// thread, like `write`'s, so writes in flight share a group commit and reads do not queue
    /// behind writes waiting for theirs.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn notes<'env>(
        &self,
        env: &'env Env,
        verb: String,
        caller: BindingCaller,
        body: Buffer,
    ) -> napi::Result<Either<Object<'env>, AsyncTask<Job<Buffer>>>> {
        if verb == "note_write" && self.pool_writes.load(Ordering::Relaxed) >= POOL_WRITES {
            let (deferred, promise) = env.create_deferred()?;
            let reply: Reply<Buffer> = Reply::new(deferred);
            let store = self.store.clone();
            // The job itself always succeeds (its own promise is dropped unobserved): every
            // outcome, a panic included (which drops `reply`, rejecting), settles `promise`.
            env.spawn(Job::new(move || {
                let _ = catch_unwind(AssertUnwindSafe(move || match caller.into_engine() {
                    Err(failure) => reply.send_json(Err(failure)),
                    Ok(caller) => {
                        let done = Box::new(move |result: cairn_engine::Result<Vec<u8>>| {
                            reply.send_json(result.map_err(Failure::from));
                        });
                        cairn_engine::notes::api::submit_write(&store, &caller, &body, done);
                    }
                }));
                Ok(())
            }))?;
            return Ok(Either::A(promise));
        }
        let store = self.store.clone();
        let counted = (verb == "note_write").then(|| PoolWrite::enter(&self.pool_writes));
        Ok(Either::B(AsyncTask::new(Job::new(move || {
            let _counted = counted;
            let caller = caller.into_engine()?;
            let reply = guard(|| cairn_engine::notes::api::call(&store, &verb, &caller, &body))?;
            Ok(reply.into())
        }))))
    }

    /// Counters of the open store.
    #[napi]
    pub fn stats(&self, env: &Env) -> napi::Result<BindingStats> {
        to_napi(*env, guard(|| Ok(self.store.stats()))).map(BindingStats::from)
    }

    /// Waits for pending writes, releases the directory; safe to call twice. Afterwards every call
    /// answers `STORE_CLOSED`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<Job<()>> {
        let store = self.store.clone();
        AsyncTask::new(Job::new(move || guard(|| store.close())))
    }
}
