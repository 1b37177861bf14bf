//! Forgetting every note and handoff of a partition, for `forget {all}` and `delete_user`: every
//! key of the partition in every notes tree (`n.*`: current records, every version of every
//! visibility, private ones too, the query index, ids, handoffs, idempotency records, whose
//! receipts spell keys, and forgotten-note markers), whatever later work adds there. The caller's
//! transaction removes the history events with them.

use super::handoff::HAND;
use super::record::CUR;
use crate::error::Result;
use crate::knowledge::Partition;
use crate::write::WriteTxn;

/// What a partition held when it was forgotten.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Purged {
    /// Current notes (each with all its versions).
    pub notes: u64,
    pub handoffs: u64,
    /// Whether a note of the partition had been forgotten before (its marker is gone now).
    pub forgot_before: bool,
}

/// Removes every notes key of `part`; returns what it held.
pub(crate) fn forget_partition(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<Purged> {
    let purged = Purged {
        notes: tx.count_prefix(CUR, part.prefix())?,
        handoffs: tx.count_prefix(HAND, part.prefix())?,
        forgot_before: tx.first_with_prefix(super::record::FORGOTTEN, part.prefix())?.is_some(),
    };
    for tree in tx.tree_names() {
        if !tree.starts_with("n.") {
            continue;
        }
        tx.delete_prefix(&tree, part.prefix())?;
    }
    Ok(purged)
}
