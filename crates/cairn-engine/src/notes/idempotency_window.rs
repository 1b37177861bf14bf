//! How long an idempotency record lasts: the store's window (`StoreOptions::idempotency_hours`,
//! 24 by default) from the write that made it, timed by the caller's `now`, never the engine's
//! clock. A retry inside it replays; after it the record counts as absent and the retry writes
//! anew. Expired records are removed by later writes of their partition, oldest first and at
//! most `PRUNE_PER_WRITE` a write, so no write pays for a backlog: `IDEM_AT` orders them by age.
//! Records written before the window existed carry no time: `idempotency_upgrade.rs` times them.

use super::idempotency::IDEM;
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::write::WriteTxn;
use serde_json::Value;
use std::ops::Bound;

/// `part | recorded at (ms, u64 BE) | agent \0 | idempotency key` → (): the records of a
/// partition oldest first. The empty key holds how far the timing of older records has got
/// (`idempotency_upgrade.rs`).
pub(crate) const IDEM_AT: &str = "n.idem_at";

/// Most expired records one write removes: a store that took many keyed writes and then none
/// for a while sheds them over its next writes instead of in one long transaction.
const PRUNE_PER_WRITE: usize = 64;

/// Whether a record made at `at` still answers a retry at `now`, with a window of `window` ms.
pub(super) fn live(at: i64, now: i64, window: i64) -> bool {
    now < at.saturating_add(window)
}

/// The `IDEM_AT` key of the record of `part` under `record_key` made at `at`.
pub(super) fn at_key(part: &Partition, record_key: &[u8], at: i64) -> Vec<u8> {
    let p = part.prefix();
    [p, &stamp(at), &record_key[p.len()..]].concat()
}

/// A time as `IDEM_AT` orders it; a caller's clock is never before the epoch (the binding refuses it).
fn stamp(at: i64) -> [u8; 8] {
    u64::try_from(at).unwrap_or(0).to_be_bytes()
}

/// The time of a stored record, when it has one (a record of an older build has none until
/// `idempotency_upgrade::step` reaches it).
pub(super) fn recorded_at(stored: &Value) -> Option<i64> {
    stored["at"].as_i64()
}

/// Removes up to `PRUNE_PER_WRITE` of `part`'s records that expired by `now`, oldest first, with
/// their index entries. Runs in a write of the partition, after its last refusal.
pub(super) fn prune(tx: &mut WriteTxn<'_>, part: &Partition, now: i64, window: i64) -> Result<()> {
    // Expired: made at or before `now - window`.
    let Ok(first_live) = u64::try_from(now.saturating_sub(window).saturating_add(1)) else { return Ok(()) };
    let p = part.prefix();
    let end = [p, &first_live.to_be_bytes()].concat();
    // Partition prefixes never prefix one another, so every key below `end` from `p` is `part`'s.
    let expired = tx.range_first(IDEM_AT, Bound::Included(p), Bound::Excluded(&end), PRUNE_PER_WRITE)?;
    for (k, _) in expired {
        tx.erase(IDEM_AT, &k)?;
        tx.erase(IDEM, &[p, &k[p.len() + 8..]].concat())?;
    }
    Ok(())
}

/// A stored record.
pub(super) fn decode(bytes: &[u8]) -> Result<Value> {
    serde_json::from_slice(bytes).map_err(|e| Error::corrupt(None, format!("an idempotency record: {e}")))
}
