//! Reads that hand bulk bytes back. A range or prefix scan runs off the event loop and returns all
//! its entries as one `Buffer`, repeated `[key_len u32 LE][key][value_len u32 LE][value]`, so bulk
//! data crosses the boundary once instead of as many small objects. A point read can fill a buffer
//! the caller reuses (`copy_into`).

use std::ops::Bound;

use cairn_engine::{Entries, Snapshot};
use napi::bindgen_prelude::{AsyncTask, Buffer};

use crate::error::Failure;
use crate::job::Job;

/// What to scan: a key range (start inclusive, end exclusive) or a key prefix.
pub enum Scan {
    Range { start: Option<Vec<u8>>, end: Option<Vec<u8>> },
    Prefix(Vec<u8>),
}

/// A scan of `tree` in `snapshot` (taken by the caller, so the read sees the store as it was when
/// JavaScript asked), stopping after `limit` entries when given.
pub fn scan_job(
    snapshot: Result<Snapshot, Failure>,
    tree: String,
    scan: Scan,
    limit: Option<u32>,
) -> AsyncTask<Job<Buffer>> {
    AsyncTask::new(Job::new(move || {
        let snapshot = snapshot?;
        let entries = match &scan {
            Scan::Range { start, end } => {
                let start = start.as_deref().map_or(Bound::Unbounded, Bound::Included);
                let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
                snapshot.range(&tree, start, end)?
            }
            Scan::Prefix(prefix) => snapshot.prefix(&tree, prefix)?,
        };
        encode(entries, limit).map(Buffer::from)
    }))
}

fn encode(entries: Entries, limit: Option<u32>) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    for entry in entries.take(limit.map_or(usize::MAX, |n| n as usize)) {
        let (key, value) = entry?;
        push(&mut out, &key)?;
        push(&mut out, &value)?;
    }
    Ok(out)
}

fn push(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Failure> {
    let len = u32::try_from(bytes.len())
        .map_err(|_| Failure::invalid("an entry is larger than 4 GiB and cannot be returned"))?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(bytes);
    Ok(())
}

/// The answer of a `getInto`: -1 for no value, else its length, with the bytes copied into `out`
/// when they fit (a caller whose buffer was too small asks again with `get`).
/// A tree name sent as UTF-8 bytes.
pub fn tree_name(bytes: &[u8]) -> Result<&str, Failure> {
    std::str::from_utf8(bytes).map_err(|_| Failure::invalid("tree name is not UTF-8"))
}

/// Copies a point read's value into `out` when it fits; returns its length, or -1 when absent.
pub fn copy_into(value: Option<&[u8]>, out: &mut [u8]) -> i64 {
    match value {
        None => -1,
        Some(v) => {
            if let Some(dest) = out.get_mut(..v.len()) {
                dest.copy_from_slice(v);
            }
            i64::try_from(v.len()).unwrap_or(i64::MAX)
        }
    }
}
