//! Cairn's storage engine: copy-on-write B+trees in 4 KiB checksummed pages, a write-ahead log
//! with group commit, snapshot reads, online backup, compaction and an integrity checker.
//! Pure Rust; the N-API binding lives in `bindings/`.

mod batch;
mod btree;
mod cache;
mod check;
mod clock;
mod copy;
mod error;
mod freelist;
mod json_depth;
mod key_text;
mod limits;
mod log_rules;
mod meta;
mod page;
mod pager;
mod read_only_store;
pub(crate) mod side;
mod snapshot;
mod store;
mod syncer;
mod time;
mod varint;
mod wal;
mod write;

pub mod budget;
pub mod decode;
pub mod fts;
pub mod history;
pub mod knowledge;
pub mod notes;
pub mod text;
pub mod vfs;

pub use batch::{Batch, Op};
pub use check::{CheckReport, Problem};
pub use error::{Corruption, Error, Result};
pub use limits::{MAX_KEY_LEN, MAX_TREE_NAME_LEN, MAX_VALUE_LEN, PAGE_SIZE};
pub use read_only_store::ReadOnlyStore;
pub use snapshot::{Entries, Snapshot, TreeInfo};
pub use store::{BackupReport, CompactOptions, CompactReport, IDEMPOTENCY_HOURS, Stats, Store, StoreOptions};
pub use write::WriteTxn;
