//! How many notes and handoffs a scope holds for one caller (`memory_status`), so a scope that
//! holds only notes or handoffs does not read as empty. Notes count when the caller could read
//! them by naming their task: `user` and `task` notes, and the caller's own `agent` notes; a
//! private note is left out (it is read only on an explicit ask the status call cannot make).
//! Handoffs count while unexpired.

use super::block;
use super::index::{DOC, decode_meta};
use super::record::Visibility;
use crate::error::Result;
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use crate::varint;

/// Current notes of `part` that `agent` may read, private ones aside (from the index's metas,
/// one entry a note, no record decoded).
pub(crate) fn visible_notes(snap: &Snapshot, part: &Partition, agent: &str) -> Result<u64> {
    let mut n = 0;
    snap.scan_prefix(DOC, part.prefix(), |_, v| {
        for entry in block::entries(v) {
            let (_, payload) = entry?;
            let mut at = 0;
            varint::get(payload, &mut at, "a notes doc entry")?;
            let meta = decode_meta(&payload[at..])?;
            let seen = !meta.private
                && match meta.visibility {
                    Visibility::User | Visibility::Task => true,
                    Visibility::Agent => meta.owner == agent,
                };
            n += u64::from(seen);
        }
        Ok(true)
    })?;
    Ok(n)
}

/// Handoffs of `part` not expired at `now`, from the index of each task's capsules (its entries
/// hold their expiry), no capsule decoded: `memory_status` counts every scope of the user, and
/// reading each capsule (up to 64 KiB) made it cost what they weigh.
pub(crate) fn live_handoffs(snap: &Snapshot, part: &Partition, now: i64) -> Result<u64> {
    super::handoff_tasks::unexpired(snap, part, now)
}
