//! `BindingReadOnlyStore`: the JavaScript face of `cairn_engine::ReadOnlyStore`, a store opened to
//! be checked without changing anything on disk (`cairn database check` of a backup, a copy, a
//! data dir no node holds).

use cairn_engine::ReadOnlyStore;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;

use crate::error::guard;
use crate::job::Job;
use crate::types::{BindingCheckReport, BindingStoreOptions};

/// A store open for reading only. Obtained from `openStoreReadOnly`; closed by `close()`.
#[napi]
pub struct BindingReadOnlyStore {
    store: ReadOnlyStore,
}

/// Opens the store in `dir` read-only: no file created or written, the log replayed in memory;
/// `STORE_LOCKED` while another process holds it, `STORE_IO` when `dir` holds no store.
#[napi(ts_return_type = "Promise<BindingReadOnlyStore>")]
pub fn open_store_read_only(dir: String, options: Option<BindingStoreOptions>) -> AsyncTask<Job<BindingReadOnlyStore>> {
    AsyncTask::new(Job::new(move || {
        let opts =
            options.map_or_else(|| Ok(cairn_engine::StoreOptions::default()), BindingStoreOptions::into_engine)?;
        Ok(BindingReadOnlyStore { store: guard(|| ReadOnlyStore::open(&dir, &opts))? })
    }))
}

#[napi]
impl BindingReadOnlyStore {
    /// Walks every page and tree and reports what is wrong, if anything, as `BindingStore.check`.
    #[napi(ts_return_type = "Promise<BindingCheckReport>")]
    pub fn check(&self) -> AsyncTask<Job<BindingCheckReport>> {
        let store = self.store.clone();
        AsyncTask::new(Job::new(move || Ok(guard(|| store.check())?.into())))
    }

    /// Releases the store and its shared lock; safe to call twice.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<Job<()>> {
        let store = self.store.clone();
        AsyncTask::new(Job::new(move || guard(|| store.close())))
    }
}
