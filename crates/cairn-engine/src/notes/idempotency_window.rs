//! How long an idempotency record lasts: the store's window (`StoreOptions::idempotency_hours`,
//! 24 by default) from the write that made it, timed by the caller's `now`, never the engine's
//! clock. A retry inside it replays; after it the record counts as absent and the retry writes
//! anew. Expired records are removed by later writes of their partition, oldest first and at
//! most `PRUNE_PER_WRITE` a write, so no write pays for a backlog: `IDEM_AT` orders them by age.
//! Records written before the window existed carry no time; `upgrade` gives each, once, the time
//! of the write it answers.

use super::idempotency::IDEM;
use super::record::{Identity, NoteRecord, VER, Visibility};
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::store::Store;
use crate::time::parse_iso_ms;
use crate::write::WriteTxn;
use serde_json::{Value, json};
use std::ops::Bound;

/// `part | recorded at (ms, u64 BE) | agent \0 | idempotency key` → (): the records of a
/// partition oldest first. The empty key → `[1]` marks every record of the store timed.
pub(crate) const IDEM_AT: &str = "n.idem_at";

/// The value of `IDEM_AT`'s marker key.
const TIMED: &[u8] = &[1];

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

/// The time of a stored record, when it has one (records of older builds before `upgrade`).
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

/// Records read and timed per step of `upgrade`, so it never holds a whole tree in memory.
const UPGRADE_STEP: usize = 4096;

/// Times every record written before the window existed, in one transaction, and marks the store
/// timed; a timed store, or one without records, is left as it is (a fresh store's first write
/// stores timed records). A record's time is that of the write it answers: the note version its
/// receipt names, or the handoff's `createdAt`; a receipt whose write cannot be found (none
/// should remain: forgetting a note removes its records) is timed `now`, so it lasts one window
/// from the upgrade. Runs before a write that takes an `idempotencyKey`.
pub(crate) fn upgrade(store: &Store, now: i64) -> Result<()> {
    let snap = store.snapshot()?;
    if snap.get(IDEM_AT, &[])?.is_some() {
        return Ok(());
    }
    let mut empty = true;
    snap.scan_prefix(IDEM, &[], |_, _| {
        empty = false;
        Ok(false)
    })?;
    if empty {
        return Ok(());
    }
    store.write(move |tx| {
        // Another call may have timed them between the snapshot and this transaction.
        if tx.get(IDEM_AT, &[])?.is_some() {
            return Ok(());
        }
        let mut after: Option<Vec<u8>> = None;
        loop {
            let start = after.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
            let step = tx.range_first(IDEM, start, Bound::Unbounded, UPGRADE_STEP)?;
            let Some((last, _)) = step.last() else { break };
            after = Some(last.clone());
            for (key, bytes) in step {
                let mut stored = decode(&bytes)?;
                if recorded_at(&stored).is_some() {
                    continue;
                }
                let part = Partition::of_key(&key)?;
                let at = written_at(tx, &part, &key, &stored["receipt"])?.unwrap_or(now);
                stored["at"] = json!(at);
                tx.put(IDEM, &key, &serde_json::to_vec(&stored).expect("JSON serialises"))?;
                tx.put(IDEM_AT, &at_key(&part, &key, at), &[])?;
            }
        }
        tx.put(IDEM_AT, &[], TIMED)
    })?;
    Ok(())
}

/// A stored record.
pub(super) fn decode(bytes: &[u8]) -> Result<Value> {
    serde_json::from_slice(bytes).map_err(|e| Error::corrupt(None, format!("an idempotency record: {e}")))
}

/// When the write `receipt` answers was made: a handoff's `createdAt`, or the `updatedAt` of the
/// note version a note receipt names (its identity rebuilt as the write made it: the writer is the
/// owner of an agent note).
fn written_at(tx: &mut WriteTxn<'_>, part: &Partition, record_key: &[u8], receipt: &Value) -> Result<Option<i64>> {
    let Some(key) = receipt["key"].as_str() else {
        return Ok(receipt["createdAt"].as_str().and_then(parse_iso_ms));
    };
    let (Ok(visibility), Some(version)) =
        (Visibility::parse(receipt["visibility"].as_str()), receipt["version"].as_u64())
    else {
        return Ok(None);
    };
    let writer = record_key[part.prefix().len()..].split(|b| *b == 0).next().unwrap_or_default();
    let owner = match visibility {
        Visibility::User => String::new(),
        Visibility::Task => receipt["taskId"].as_str().unwrap_or_default().to_owned(),
        Visibility::Agent => String::from_utf8_lossy(writer).into_owned(),
    };
    let identity = Identity { key: key.to_owned(), visibility, owner };
    let Some(bytes) = tx.get(VER, &identity.ver_key(part, version))? else { return Ok(None) };
    Ok(Some(NoteRecord::decode(&bytes)?.updated_at))
}
