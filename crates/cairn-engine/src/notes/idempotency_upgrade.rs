//! Idempotency records written before they expired (older builds) carry no time. Each is given,
//! once, the time of the write it answers, a few a write: `step` times at most `TIME_PER_WRITE`
//! of them in each `note_write` and `handoff_create`, walking the store's records in key order
//! from where the last step stopped, so a store holding 100k of them answers its first writes as
//! quickly as any other. A record not reached yet is timed where it is read (`time_of`): a retry
//! of it replays only inside the window of its own write, as it would once timed.

use super::idempotency::IDEM;
use super::idempotency_window::{IDEM_AT, at_key, decode, recorded_at};
use super::record::{Identity, NoteRecord, VER, Visibility};
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::time::parse_iso_ms;
use crate::write::WriteTxn;
use serde_json::{Value, json};
use std::ops::Bound;

/// The value of `IDEM_AT`'s marker (its empty key) once every record of the store is timed.
const TIMED: &[u8] = &[1];

/// The first byte of the marker while older records are being timed: `2 | since (ms, u64 BE) |
/// the key of the last record read`, `since` being the time of the write that began.
const TIMING: u8 = 2;

/// Most records one write reads (and times, when untimed): as `PRUNE_PER_WRITE`, so no write
/// pays for a backlog.
const TIME_PER_WRITE: usize = 64;

/// How far the timing of older records has got.
enum Progress {
    /// Every record of the store is timed.
    Done,
    /// Records after `after` (from the first when `None`) may be untimed; one whose write is not
    /// found is timed `since`.
    From { since: i64, after: Option<Vec<u8>> },
}

/// The marker as stored; absent (a store of an older build, or a fresh one) means nothing is
/// known to be timed yet, and timing begins `now`.
fn progress(tx: &mut WriteTxn<'_>, now: i64) -> Result<Progress> {
    let Some(marker) = tx.get(IDEM_AT, &[])? else { return Ok(Progress::From { since: now, after: None }) };
    if marker == TIMED {
        return Ok(Progress::Done);
    }
    match marker.split_first() {
        Some((&TIMING, rest)) if rest.len() >= 8 => {
            let (since, after) = rest.split_at(8);
            let since = i64::from_be_bytes(since.try_into().expect("8 bytes"));
            Ok(Progress::From { since, after: (!after.is_empty()).then(|| after.to_vec()) })
        }
        _ => Err(Error::corrupt(None, "the idempotency timing marker")),
    }
}

/// Times up to `TIME_PER_WRITE` records after the last step's, and moves the marker past them
/// (to `TIMED` once the walk reaches the end). Runs in a `note_write` or `handoff_create`, after
/// its last refusal (a refused write changes nothing); a store whose records are all timed
/// pays one read of the marker.
pub(super) fn step(tx: &mut WriteTxn<'_>, now: i64) -> Result<()> {
    let Progress::From { since, after } = progress(tx, now)? else { return Ok(()) };
    let start = after.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let read = tx.range_first(IDEM, start, Bound::Unbounded, TIME_PER_WRITE)?;
    for (key, bytes) in &read {
        let mut stored = decode(bytes)?;
        if recorded_at(&stored).is_some() {
            continue;
        }
        let part = Partition::of_key(key)?;
        let at = written_at(tx, &part, key, &stored["receipt"])?.unwrap_or(since);
        stored["at"] = json!(at);
        tx.put(IDEM, key, &serde_json::to_vec(&stored).expect("JSON serialises"))?;
        tx.put(IDEM_AT, &at_key(&part, key, at), &[])?;
    }
    match read.last() {
        Some((last, _)) if read.len() == TIME_PER_WRITE => {
            let marker = [&[TIMING][..], &since.to_be_bytes(), last].concat();
            tx.put(IDEM_AT, &[], &marker)
        }
        _ => tx.put(IDEM_AT, &[], TIMED),
    }
}

/// When the record `stored` (under `record_key` of `part`) was made: its time, or for a record
/// `step` has not reached yet the time it will give it.
pub(super) fn time_of(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    record_key: &[u8],
    stored: &Value,
    now: i64,
) -> Result<i64> {
    if let Some(at) = recorded_at(stored) {
        return Ok(at);
    }
    // `Done` with an untimed record: an older build wrote it after the walk; it is timed `now`.
    let since = match progress(tx, now)? {
        Progress::From { since, .. } => since,
        Progress::Done => now,
    };
    Ok(written_at(tx, part, record_key, &stored["receipt"])?.unwrap_or(since))
}

/// When the write `receipt` answers was made: a handoff's `createdAt`, or the `updatedAt` of the
/// note version a note receipt names (its identity rebuilt as the write made it: the writer is the
/// owner of an agent note). `None` when that write is not found (none should be: forgetting a
/// note removes its records).
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
