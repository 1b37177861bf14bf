//! `BindingStore`: the JavaScript face of `cairn_engine::Store`. Point reads are synchronous (a
//! few cached pages, like better-sqlite3); writes are submitted at once, in call order, and
//! answered by a promise; scans and maintenance run on the libuv pool.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use cairn_engine::{Batch, Store};
use napi::Env;
use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice, Either, Object, Uint8ArraySlice};
use napi_derive::napi;

use crate::error::{Failure, guard, guard_failure, to_napi};
use crate::job::Job;
use crate::reply::{self, Reply};
use crate::scan::{Scan, copy_into, scan_job, tree_name};
use crate::snapshot::BindingSnapshot;
use crate::types::{
    BindingBackupReport, BindingCaller, BindingCheckReport, BindingCompactOptions, BindingCompactReport, BindingStats,
    BindingStoreOptions,
};
use crate::verb_pool;

/// How long a quick knowledge read may run on the event loop before it moves to the verb pool:
/// a few recalls at 10k entities, short enough that the loop's other work hardly notices.
const QUICK_READ: Duration = Duration::from_micros(300);

/// An open store directory. Obtained from `openStore`; closed by `close()`.
#[napi]
pub struct BindingStore {
    store: Store,
    /// Note writes submitted and not yet answered (see `notes`).
    writes_in_flight: Arc<AtomicUsize>,
    /// Knowledge calls running on the verb pool and not yet answered (see `knowledge`).
    pooled_knowledge: Arc<AtomicUsize>,
    /// Set once the notes index is seen in its current layout, which a store never leaves: from
    /// then on a lone write skips the check (`notes::api::submit` makes its own).
    notes_index_current: AtomicBool,
}

/// One call in flight, counted in `BindingStore::writes_in_flight` or `pooled_knowledge` until
/// answered or dropped unanswered.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(count: &Arc<AtomicUsize>) -> InFlight {
        count.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(count))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Opens (creating if needed) the store in `dir`, taking its lock and running recovery.
#[napi(ts_return_type = "Promise<BindingStore>")]
pub fn open_store(dir: String, options: Option<BindingStoreOptions>) -> AsyncTask<Job<BindingStore>> {
    AsyncTask::new(Job::new(move || {
        let opts =
            options.map_or_else(|| Ok(cairn_engine::StoreOptions::default()), BindingStoreOptions::into_engine)?;
        let store = guard(|| Store::open(&dir, opts))?;
        Ok(BindingStore {
            store,
            writes_in_flight: Arc::default(),
            pooled_knowledge: Arc::default(),
            notes_index_current: AtomicBool::new(false),
        })
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
        let (reply, promise) = Reply::new(env)?;
        match guard(|| Batch::decode(batch)) {
            Err(failure) => reply.send(Err(failure), reply::txn),
            Ok(batch) => {
                let done = Box::new(move |result: cairn_engine::Result<u64>| {
                    reply.send(result.map_err(Failure::from), reply::txn);
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
        AsyncTask::new(Job::new(move || Ok(guard(|| cairn_engine::knowledge::compact(&store, opts))?.into())))
    }

    /// Copies the WAL into the data file and truncates it.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn checkpoint(&self) -> AsyncTask<Job<()>> {
        let store = self.store.clone();
        AsyncTask::new(Job::new(move || guard(|| store.checkpoint())))
    }

    /// Runs the knowledge verb `verb` (`status`, `remember`, …) for `caller` with a JSON `body`;
    /// answers the JSON reply. A quick read (`knowledge::api::quick`: a recall or a status) with
    /// no other knowledge call on the verb pool is tried on the event loop first, for at most
    /// `QUICK_READ` (`cairn_engine::budget`): the hop to a pool thread and the wake-up back cost
    /// more than a recall itself (at 10k entities, from JavaScript: 185 µs p50 through the pool,
    /// 80 µs here). A read that runs out of that time, and anything else, runs on the verb pool
    /// and answers a promise; a write resolves once durable.
    #[napi(ts_return_type = "Promise<Buffer> | Buffer")]
    pub fn knowledge<'env>(
        &self,
        env: &'env Env,
        verb: String,
        caller: BindingCaller,
        body: &[u8],
    ) -> napi::Result<Either<Buffer, Object<'env>>> {
        use cairn_engine::knowledge::api;
        let caller = to_napi(*env, caller.into_engine(&self.store))?;
        if api::quick(&verb) && self.pooled_knowledge.load(Ordering::Acquire) == 0 {
            let here = guard_failure(|| {
                Ok(cairn_engine::budget::within(QUICK_READ, || api::call(&self.store, &verb, &caller, body)))
            });
            match here {
                Ok(None) => {}
                Ok(Some(reply)) => {
                    return to_napi(*env, reply.map_err(Failure::from)).map(|r| Either::A(Buffer::from(r)));
                }
                Err(failure) => return Err(failure.into_napi(*env)),
            }
        }
        self.run_verb(env, api::call, verb, caller, body.to_vec()).map(Either::B)
    }

    /// `knowledge` for a `remember` whose passages' texts come as `texts` (`texts[i]` the text of
    /// `passages[i]`, whose `text` in `body` is a placeholder): strings cross N-API directly, not
    /// encoded into the JSON body and parsed back (`knowledge::api::call_with_texts`).
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn knowledge_texts<'env>(
        &self,
        env: &'env Env,
        verb: String,
        caller: BindingCaller,
        body: &[u8],
        texts: Vec<String>,
    ) -> napi::Result<Object<'env>> {
        let caller = to_napi(*env, caller.into_engine(&self.store))?;
        let call = move |store: &Store, verb: &str, caller: &cairn_engine::knowledge::api::Caller, body: &[u8]| {
            cairn_engine::knowledge::api::call_with_texts(store, verb, caller, body, texts)
        };
        self.run_verb(env, call, verb, caller, body.to_vec())
    }

    /// `knowledge` for a `load`, whose body (an export of tens of MB) is read where it lies, not
    /// copied: copying the bench's 57 MB into fresh memory took ~40 ms on the event loop, far
    /// more than the second wake-up that hands the `Buffer`'s reference back (see `run_verb`).
    /// JavaScript must not change `body` until the promise settles (`loadKnowledge` hands it
    /// bytes it leaves alone). With `whole`, a line that fails its checks refuses the whole body
    /// and nothing is stored (`load_whole`: a Memory Package).
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn load<'env>(
        &self,
        env: &'env Env,
        caller: BindingCaller,
        body: Buffer,
        whole: Option<bool>,
    ) -> napi::Result<Object<'env>> {
        let caller = to_napi(*env, caller.into_engine(&self.store))?;
        let verb = if whole == Some(true) { "load_whole" } else { "load" };
        self.run_verb(env, cairn_engine::knowledge::api::call, verb.into(), caller, body)
    }

    /// Runs the notes verb `verb` (`note_write`, `note_list`, `note_forget`, `history`, `audit`,
    /// `handoff_create`, `handoff_resume`) for `caller` with a JSON `body`; answers the JSON reply.
    /// A quick call (`notes::api::quick`: a list of one key) runs on the event loop, cheaper than
    /// the thread hop, and answers the reply itself. A `note_write` with no other note write in
    /// flight is worked out on the event loop too (`write_here`; in the notes bench it took one
    /// CAS at a time from ~1,650–1,980 to ~2,130–2,180 a second). Anything else runs on the verb
    /// pool and answers a promise; a write resolves once durable (settled from the engine's syncer
    /// thread, holding no pool thread meanwhile).
    #[napi(ts_return_type = "Promise<Buffer> | Buffer")]
    pub fn notes<'env>(
        &self,
        env: &'env Env,
        verb: String,
        caller: BindingCaller,
        body: &[u8],
    ) -> napi::Result<Either<Buffer, Object<'env>>> {
        use cairn_engine::notes::api;
        if api::quick(&verb, body) {
            let caller = to_napi(*env, caller.into_engine(&self.store))?;
            return to_napi(*env, guard(|| api::call(&self.store, &verb, &caller, body)))
                .map(|reply| Either::A(Buffer::from(reply)));
        }
        if self.writes_in_flight.load(Ordering::Acquire) == 0 && self.lone_write(&verb) {
            return self.write_here(env, &verb, caller, body).map(Either::B);
        }
        let store = self.store.clone();
        // A copy, not the caller's `Buffer`: see `run_verb`.
        let body = body.to_vec();
        let (reply, promise) = Reply::new(env)?;
        let counted = (verb == "note_write").then(|| InFlight::enter(&self.writes_in_flight));
        verb_pool::spawn(move || {
            let caller = match guard_failure(|| caller.into_engine(&store)) {
                Ok(caller) => caller,
                Err(failure) => {
                    verb_pool::finishing();
                    return reply.send(Err(failure), reply::bytes);
                }
            };
            // A write answers from the engine's syncer thread once durable, so this pool thread
            // is free as soon as the write is queued. A panic drops `done`, whose `Reply` then
            // rejects the promise. A read answers here, on the pool thread (`finishing`).
            let done = Box::new(move |result: cairn_engine::Result<Vec<u8>>| {
                verb_pool::finishing();
                drop(counted);
                reply.send(result.map_err(Failure::from), reply::bytes);
            });
            let _ = catch_unwind(AssertUnwindSafe(|| api::submit(&store, &verb, &caller, &body, done)));
        });
        Ok(Either::B(promise))
    }

    /// Whether `verb` may be worked out on the event loop (`notes::api::quick_write`), the index
    /// check made only until it first passes.
    fn lone_write(&self, verb: &str) -> bool {
        if verb != "note_write" {
            return false;
        }
        if self.notes_index_current.load(Ordering::Relaxed) {
            return true;
        }
        let current = cairn_engine::notes::api::quick_write(&self.store, verb);
        self.notes_index_current.store(current, Ordering::Relaxed);
        current
    }

    /// Submits a lone note write from the event loop (`notes::api::quick_write`): it is parsed and
    /// worked out here and queued for the writer, and its promise settles from the engine once
    /// durable. Only while no other note write is in flight: one write at a time saves the hop to
    /// a pool thread, and writes that overlap keep the pool spreading their work over the cores.
    fn write_here<'env>(
        &self,
        env: &'env Env,
        verb: &str,
        caller: BindingCaller,
        body: &[u8],
    ) -> napi::Result<Object<'env>> {
        use cairn_engine::notes::api;
        let caller = to_napi(*env, caller.into_engine(&self.store))?;
        let (reply, promise) = Reply::new(env)?;
        let counted = InFlight::enter(&self.writes_in_flight);
        let done = Box::new(move |result: cairn_engine::Result<Vec<u8>>| {
            drop(counted);
            reply.send(result.map_err(Failure::from), reply::bytes);
        });
        // A panic drops `done`, whose `Reply` then rejects the promise.
        let _ = catch_unwind(AssertUnwindSafe(|| api::submit(&self.store, verb, &caller, body, done)));
        Ok(promise)
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

impl BindingStore {
    /// Runs one JSON verb on the verb pool (see `verb_pool.rs`) through `call`, the engine's entry
    /// point of its family of verbs; its promise resolves with the reply.
    ///
    /// `body` is a copy made on the JavaScript thread. A napi `Buffer` argument holds a reference
    /// that, dropped on a pool thread, napi-rs hands back to the loop through a threadsafe function
    /// of its own: a second wake-up of the loop per call, dearer than copying a request body.
    fn run_verb<'env>(
        &self,
        env: &'env Env,
        call: impl FnOnce(&Store, &str, &cairn_engine::knowledge::api::Caller, &[u8]) -> cairn_engine::Result<Vec<u8>>
        + Send
        + 'static,
        verb: String,
        caller: cairn_engine::knowledge::api::Caller,
        body: impl AsRef<[u8]> + Send + 'static,
    ) -> napi::Result<Object<'env>> {
        let store = self.store.clone();
        let (reply, promise) = Reply::new(env)?;
        let counted = InFlight::enter(&self.pooled_knowledge);
        verb_pool::spawn(move || {
            let result = guard(|| call(&store, &verb, &caller, body.as_ref()));
            verb_pool::finishing();
            // Before the answer: a call JavaScript makes on seeing it may run on the event loop.
            drop(counted);
            reply.send(result, reply::bytes);
        });
        Ok(promise)
    }
}
