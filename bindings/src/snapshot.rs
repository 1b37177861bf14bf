//! `BindingSnapshot`: a read view pinned at one commit. It never blocks the writer; `close()`
//! unpins it (so its pages can be reused) and every later read answers `STORE_CLOSED`.

use std::sync::{Mutex, PoisonError};

use cairn_engine::Snapshot;
use napi::Env;
use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice, Uint8ArraySlice};
use napi_derive::napi;

use crate::error::{Failure, guard, to_napi};
use crate::job::Job;
use crate::scan::{Scan, copy_into, scan_job, tree_name};

/// A consistent read view; obtained from `BindingStore.snapshot()`.
#[napi]
pub struct BindingSnapshot {
    inner: Mutex<Option<Snapshot>>,
}

impl BindingSnapshot {
    pub fn new(snapshot: Snapshot) -> Self {
        BindingSnapshot { inner: Mutex::new(Some(snapshot)) }
    }

    /// A clone of the pinned snapshot, or `STORE_CLOSED`.
    fn pinned(&self) -> Result<Snapshot, Failure> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).clone().ok_or_else(Failure::closed)
    }
}

#[napi]
impl BindingSnapshot {
    /// The transaction this view sees (decimal string).
    #[napi(getter)]
    pub fn txn(&self, env: &Env) -> napi::Result<String> {
        to_napi(*env, self.pinned().map(|s| s.txn().to_string()))
    }

    /// The value of `key` in `tree` as of this view, or null.
    #[napi]
    #[allow(clippy::needless_pass_by_value)] // napi hands JavaScript strings over as owned `String`s
    pub fn get<'env>(&self, env: &'env Env, tree: String, key: &[u8]) -> napi::Result<Option<BufferSlice<'env>>> {
        let value = to_napi(*env, self.pinned().and_then(|s| guard(|| s.get(&tree, key))))?;
        value.map(|v| BufferSlice::copy_from(env, v)).transpose()
    }

    /// As `BindingStore.getInto`, as of this view.
    /// The tree name comes as its UTF-8 bytes: callers keep one buffer per tree, which spares a
    /// string conversion and an allocation per read.
    #[napi]
    pub fn get_into(&self, env: &Env, tree: &[u8], key: &[u8], mut out: Uint8ArraySlice) -> napi::Result<i64> {
        let tree = to_napi(*env, tree_name(tree))?;
        // SAFETY: this runs on the JS thread inside a synchronous call, so no JavaScript touches
        // `out` while it is written.
        let out = unsafe { out.as_mut() };
        to_napi(*env, self.pinned().and_then(|s| guard(|| s.get_with(tree, key, |v| copy_into(v, out)))))
    }

    /// As `BindingStore.range`, as of this view.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn range(
        &self,
        tree: String,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        limit: Option<u32>,
    ) -> AsyncTask<Job<Buffer>> {
        let scan = Scan::Range { start: start.map(<[u8]>::to_vec), end: end.map(<[u8]>::to_vec) };
        scan_job(self.pinned(), tree, scan, limit)
    }

    /// As `BindingStore.prefix`, as of this view.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn prefix(&self, tree: String, prefix: &[u8], limit: Option<u32>) -> AsyncTask<Job<Buffer>> {
        scan_job(self.pinned(), tree, Scan::Prefix(prefix.to_vec()), limit)
    }

    /// Unpins the view; idempotent. Scans already started finish on their own clone.
    #[napi]
    pub fn close(&self) {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}
