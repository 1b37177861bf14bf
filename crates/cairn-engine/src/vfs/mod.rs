//! The file layer under the store. The real one is the OS file system; a read-only open reads it
//! and keeps its changes in memory (`vfs::read_only`); tests swap in a fault-injecting one
//! (`vfs::fault`) to simulate crashes at every write and sync point.

pub mod fault;
mod read_only;
mod std_fs;

use std::io;
use std::path::Path;
use std::sync::Arc;

pub use read_only::ReadOnlyFs;
pub use std_fs::StdFs;

/// One open file. Positional reads and writes only, so readers never share a cursor.
// `len` is the file's byte size, as in `std::fs::Metadata`; nothing asks whether a file is empty.
#[allow(clippy::len_without_is_empty)]
pub trait VfsFile: Send + Sync {
    /// Reads exactly `buf.len()` bytes at `offset`; reading past the end is an error.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset`, extending the file if needed.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes every completed write durable (fdatasync).
    fn sync_data(&self) -> io::Result<()>;
    /// Starts writing the file's written pages to the device without waiting for them, so that
    /// the next `sync_data` has less left to wait for. A hint that changes no durability: by
    /// default it does nothing.
    fn start_writeback(&self) {}
    /// The current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Grows or shrinks the file.
    fn set_len(&self, len: u64) -> io::Result<()>;
}

/// A file system: opening, renaming and removing files, and locking a directory.
pub trait Vfs: Send + Sync {
    /// Opens `path` for reading and writing, creating it when `create` is set.
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn VfsFile>>;
    /// Whether `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Atomically replaces `to` with `from`, durably (the directory is synced).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file; a missing file is not an error.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Takes the exclusive lock of a store directory, or reports the pid holding it.
    fn lock_dir(&self, dir: &Path) -> Result<Box<dyn DirLock>, LockError>;
}

/// Held while a store is open; dropping it releases the directory.
pub trait DirLock: Send + Sync {}

/// Why a directory lock could not be taken.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it; its pid when it could be read.
    Held(Option<u32>),
    /// The lock file could not be opened.
    Io(io::Error),
}
