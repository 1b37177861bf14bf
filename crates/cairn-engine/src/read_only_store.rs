//! A store opened read-only (`ReadOnlyStore::open`), for checking a store an operator may only
//! read, or must not change: a backup, a copy, a data dir on a read-only mount or owned by the
//! service's user. The store opens as a read-write open would, recovery included, over
//! `vfs::ReadOnlyFs`: log records past the last checkpoint are replayed into memory only, and no
//! file is created, written, renamed or removed. It is still refused while a read-write open
//! holds the store (`Error::Locked`), and it keeps one from opening while it is open.
//!
//! It offers reads and the check, never writes: the handle has no method that would change the
//! store, so nothing written can be lost silently when it closes.

use crate::check::CheckReport;
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;
use crate::store::{DATA_FILE, Store, StoreOptions};
use crate::vfs::ReadOnlyFs;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// A store open for reading only. Closing it discards what opening it replayed.
#[derive(Debug, Clone)]
pub struct ReadOnlyStore {
    store: Store,
}

impl ReadOnlyStore {
    /// Opens the store in `dir` without changing anything on disk (`opts.vfs` is not used: the
    /// real files are read through `ReadOnlyFs`). A directory with no data file is an error,
    /// not an empty store.
    pub fn open(dir: impl AsRef<Path>, opts: &StoreOptions) -> Result<ReadOnlyStore> {
        let dir = dir.as_ref();
        let data = dir.join(DATA_FILE);
        if !data.is_file() {
            let missing = io::Error::new(io::ErrorKind::NotFound, format!("no store at {}", dir.display()));
            return Err(Error::io("opening the data file", missing));
        }
        let store = Store::open(dir, StoreOptions { vfs: Arc::new(ReadOnlyFs::new()), ..opts.clone() })?;
        Ok(ReadOnlyStore { store })
    }

    /// The integrity check of `Store::check`, of the state the log brings the data file to.
    pub fn check(&self) -> Result<CheckReport> {
        self.store.check()
    }

    /// A consistent view of the store's state.
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.store.snapshot()
    }

    /// The value under `key` in `tree`.
    pub fn get(&self, tree: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.store.get(tree, key)
    }

    /// Releases the store (and its shared lock); nothing is written.
    pub fn close(&self) -> Result<()> {
        self.store.close()
    }
}
