//! An entity's attribute writes by key, latest start first (`k.attr_writes`), so what is true now
//! of each key is one seek (`attributes_now`) instead of every `entity` event of the entity read
//! and decoded whole: an entity whose `mood` or `status` was re-set 2,000 times made each recall
//! showing it take 27 ms (958 µs at 250 writes).
//!
//! Key: `part | entity id | digest(attribute key) | !ord(start) | !seq` → the value (JSON) event
//! `seq` set the key to, true from `start` (ms, the call's `date`, else when it was written:
//! `attribute_time::start_of`). `ord` flips the sign bit so times sort as numbers do; both are
//! inverted, so within one key the first entry is the latest start, the latest write on a tie,
//! the order `attribute_time` ranks writes by. The key is a 16-byte digest (SHA-256): fixed
//! length, so no key's entries start with another's prefix whatever bytes a key holds.
//!
//! One entry per key an event set, written and removed with the event itself (`history::record`,
//! `remove`, `rewrite`), so every path that writes, redacts or removes entity events (remember,
//! relate, import, every form of forget) keeps it; a scope forgotten whole empties it with every
//! `k.*` tree of its partition. A bulk load's events set no attributes and file nothing, as
//! `attribute_time` reads them. Stores written before have no entries and no marker: the first
//! verb builds it from the history (`attr_writes_build.rs`); until then reads use the history.

use super::attribute_time::Written;
use super::graph::Entity;
use super::part::Partition;
use super::trees::ATTR_WRITES;
use crate::error::{Error, Result};
use crate::history::{EVENT, Event};
use crate::snapshot::Snapshot;
use crate::write::WriteTxn;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Bytes of an attribute key's digest in the key.
const KEY_DIGEST: usize = 16;

/// The marker's value (under the empty key).
const BUILT: &[u8] = &[1];

/// `part | entity id | digest(key)`: every write of one key of one entity.
fn key_prefix(part: &Partition, entity: u64, key: &str) -> Vec<u8> {
    part.key(&[&entity.to_be_bytes(), &Sha256::digest(key.as_bytes())[..KEY_DIGEST]])
}

/// A time's 8 bytes, sorting as the numbers do.
fn ordered(at: i64) -> u64 {
    at.cast_unsigned() ^ (1 << 63)
}

/// Where the writes of a key starting at or before `at` begin under `prefix`.
fn from(prefix: &[u8], at: i64) -> Vec<u8> {
    [prefix, &(!ordered(at)).to_be_bytes()].concat()
}

fn entry_key(prefix: &[u8], start: i64, seq: u64) -> Vec<u8> {
    [prefix, &(!ordered(start)).to_be_bytes(), &(!seq).to_be_bytes()].concat()
}

/// Files what event `seq` wrote.
pub(crate) fn file(tx: &mut WriteTxn<'_>, part: &Partition, seq: u64, written: &Written) -> Result<()> {
    for (key, value) in &written.attributes {
        let at = entry_key(&key_prefix(part, written.entity, key), written.start, seq);
        tx.put(ATTR_WRITES, &at, &serde_json::to_vec(value).expect("values serialise"))?;
    }
    Ok(())
}

/// Files what `event` wrote, if it set an entity's attributes.
pub(crate) fn file_event(tx: &mut WriteTxn<'_>, part: &Partition, event: &Event) -> Result<()> {
    match Written::by(event) {
        Some(written) => file(tx, part, event.seq, &written),
        None => Ok(()),
    }
}

/// Removes the entries `event` filed (it is removed from the history).
pub(crate) fn unfile_event(tx: &mut WriteTxn<'_>, part: &Partition, event: &Event) -> Result<()> {
    let Some(written) = Written::by(event) else { return Ok(()) };
    for key in written.attributes.keys() {
        tx.delete(ATTR_WRITES, &entry_key(&key_prefix(part, written.entity, key), written.start, event.seq))?;
    }
    Ok(())
}

/// Files `edited` in place of `was`, the same event with content taken out (a forget's redaction).
pub(crate) fn refile_event(tx: &mut WriteTxn<'_>, part: &Partition, was: &Event, edited: &Event) -> Result<()> {
    unfile_event(tx, part, was)?;
    file_event(tx, part, edited)
}

/// Files the event `record_encoded` stored (`json`), whose input was `patch`: only an entity's
/// input that names attributes is decoded, so a call creating entities without any pays nothing.
pub(crate) fn file_encoded(tx: &mut WriteTxn<'_>, part: &Partition, patch: &[u8], json: &[u8]) -> Result<()> {
    if !patch.windows(b"\"attributes\"".len()).any(|w| w == b"\"attributes\"") {
        return Ok(());
    }
    let event: Event = serde_json::from_slice(json).map_err(|e| Error::corrupt(None, format!("history event: {e}")))?;
    file_event(tx, part, &event)
}

/// Marks the index complete when the store holds no event yet (called on a partition's first
/// write, `Partition::register`, as `history::mark_if_new` is): a fresh store never needs the build.
pub(crate) fn mark_if_new(tx: &mut WriteTxn<'_>) -> Result<()> {
    if tx.get(ATTR_WRITES, &[])?.is_none() && tx.first_with_prefix(EVENT, b"")?.is_none() {
        tx.put(ATTR_WRITES, &[], BUILT)?;
    }
    Ok(())
}

/// Marks the index complete (its build).
pub(crate) fn mark(tx: &mut WriteTxn<'_>) -> Result<()> {
    tx.put(ATTR_WRITES, &[], BUILT)
}

/// What the writes of one key say at an instant.
enum Latest {
    /// The value of the write with the latest start at or before it.
    Value(Value),
    /// Every write of the key starts later: not true yet.
    Later,
    /// No write set it (a bulk load, an import of an undated write).
    Unwritten,
}

fn latest(snap: &Snapshot, part: &Partition, entity: u64, key: &str, now: i64) -> Result<Latest> {
    let prefix = key_prefix(part, entity, key);
    let mut found = None;
    snap.scan_from(ATTR_WRITES, &from(&prefix, now), &prefix, |_, value| {
        found =
            Some(serde_json::from_slice(value).map_err(|e| Error::corrupt(None, format!("an attribute write: {e}"))));
        Ok(false)
    })?;
    if let Some(value) = found {
        return value.map(Latest::Value);
    }
    Ok(if snap.prefix(ATTR_WRITES, &prefix)?.next().is_some() { Latest::Later } else { Latest::Unwritten })
}

/// `entity`'s attributes true at `now` (`attribute_time::attributes_now`'s answer), one seek per
/// key its record holds; `None` while the index of a store written before is not built.
pub(crate) fn attributes_now(
    snap: &Snapshot,
    part: &Partition,
    entity: &Entity,
    now: i64,
) -> Result<Option<Map<String, Value>>> {
    if snap.get(ATTR_WRITES, &[])?.is_none() {
        return Ok(None);
    }
    let mut out = Map::new();
    // Only keys the record still holds: a forgotten attribute stays forgotten.
    for (key, value) in &entity.attributes {
        match latest(snap, part, entity.id, key, now)? {
            Latest::Value(v) => out.insert(key.clone(), v),
            Latest::Later => None,
            Latest::Unwritten => out.insert(key.clone(), value.clone()),
        };
    }
    Ok(Some(out))
}
