//! The capsules addressed to each agent, newest first, so `handoff_resume {}` reads a page of them
//! by a seek (`handoff_addressed.rs`) rather than every capsule ever addressed to the caller, and
//! an expired one is passed over without reading the capsule.
//!
//! `n.hand_for` `part | to \0 | !createdAt | !id` → `0 | taskId` (no expiry) or `1 | expiresAt |
//! taskId`. Times are ms as i64 with the sign bit flipped (so their bytes sort as the numbers do),
//! the id a u64; each 8 bytes big-endian, and both inverted, so ascending keys are the list's
//! order: latest `createdAt` first, then highest id. Agent names hold no NUL, so `to \0` prefixes
//! are unambiguous. The empty key → `[1]` marks the index built. Written and removed in the
//! capsule's own transaction (`handoff::put`, `handoff_forget.rs`); a whole scope's entries go
//! with every `n.*` key of its partition (`purge.rs`).
//!
//! It replaces `n.hand_to` (`part | to \0 | id BE` → taskId: in id order, holding no time, so
//! each page read and sorted every capsule). A store written before has that and no marker; the
//! first handoff verb on it builds this index from the capsules, in one transaction, and empties
//! `n.hand_to`, so nothing a later forget removes stays behind there.

use super::handoff::{Capsule, HAND};
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::knowledge::build_once::build_once;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::write::WriteTxn;

pub(crate) const ADDRESSED: &str = "n.hand_for";

/// The layout before this index, emptied by its build.
const OLD: &str = "n.hand_to";

/// A capsule as the index files it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) created_at: i64,
    pub(super) id: u64,
    pub(super) expires_at: Option<i64>,
    pub(super) task_id: String,
}

impl Entry {
    pub(super) fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// The capsule this entry files, from `n.hand`.
    pub(super) fn capsule(&self, snap: &Snapshot, part: &Partition) -> Result<Capsule> {
        let key = part.key(&[self.task_id.as_bytes(), b"\0", &self.id.to_be_bytes()]);
        let bytes = snap.get(HAND, &key)?.ok_or_else(|| Error::corrupt(None, "an addressed handoff is missing"))?;
        Capsule::decode(&bytes)
    }
}

/// A time's 8 bytes, sorting as the numbers do.
fn ordered(at: i64) -> u64 {
    at.cast_unsigned() ^ (1 << 63)
}

/// `part | to \0`: every entry addressed to `to`.
pub(super) fn prefix(part: &Partition, to: &str) -> Vec<u8> {
    part.key(&[to.as_bytes(), b"\0"])
}

/// The key of the capsule left at `created_at` with `id`, under `prefix` (here and in the index
/// of each task's capsules, `handoff_tasks.rs`): newest first.
pub(super) fn key_under(prefix: &[u8], created_at: i64, id: u64) -> Vec<u8> {
    [prefix, &(!ordered(created_at)).to_be_bytes(), &(!id).to_be_bytes()].concat()
}

/// The `createdAt` and id a `key_under` key ends with; `None` for a key too short to hold them.
pub(super) fn time_and_id(key: &[u8]) -> Option<(i64, u64)> {
    let tail = &key[key.len().checked_sub(16)?..];
    let (at, id) = tail.split_at(8);
    let at = !u64::from_be_bytes(at.try_into().expect("8 bytes")) ^ (1 << 63);
    Some((at.cast_signed(), !u64::from_be_bytes(id.try_into().expect("8 bytes"))))
}

/// Fills the emptied index `tree` with `entries` in one sorted run and marks it built.
pub(super) fn fill(tx: &mut WriteTxn<'_>, tree: &str, mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> Result<()> {
    entries.sort_unstable();
    let mut run = tx.sorted_run(tree, true)?;
    for (k, v) in &entries {
        run.push(k, v)?;
    }
    run.finish()?;
    tx.put(tree, &[], BUILT)
}

fn key(part: &Partition, to: &str, capsule: &Capsule) -> Vec<u8> {
    key_under(&prefix(part, to), capsule.created_at, capsule.id)
}

fn value(capsule: &Capsule) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + capsule.task_id.len());
    match capsule.expires_at {
        None => out.push(0),
        Some(at) => {
            out.push(1);
            out.extend_from_slice(&at.to_be_bytes());
        }
    }
    out.extend_from_slice(capsule.task_id.as_bytes());
    out
}

/// The entry of `key` and `value` (the key's last 16 bytes are its time and id).
fn decode(key: &[u8], value: &[u8]) -> Result<Entry> {
    let damaged = || Error::corrupt(None, "an entry of the addressed handoffs index");
    let (at, id) = time_and_id(key).ok_or_else(damaged)?;
    let (expires_at, task) = match value.split_first() {
        Some((0, task)) => (None, task),
        Some((1, rest)) if rest.len() >= 8 => {
            let (expires, task) = rest.split_at(8);
            (Some(i64::from_be_bytes(expires.try_into().expect("8 bytes"))), task)
        }
        _ => return Err(damaged()),
    };
    let task_id = String::from_utf8(task.to_vec()).map_err(|_| damaged())?;
    Ok(Entry { created_at: at, id, expires_at, task_id })
}

/// The marker's value (under the empty key).
const BUILT: &[u8] = &[1];

/// Files `capsule` (its id given, not yet stored) under its addressee, if it has one. The first
/// capsule of a store that holds none marks the index built, as `build` would leave it: a fresh
/// store never needs the build, so no later call (a refused one included) writes it.
pub(super) fn put(tx: &mut WriteTxn<'_>, part: &Partition, capsule: &Capsule) -> Result<()> {
    mark_if_first(tx, ADDRESSED)?;
    match &capsule.to {
        Some(to) => tx.put(ADDRESSED, &key(part, to, capsule), &value(capsule)),
        None => Ok(()),
    }
}

/// Marks the index `tree` built when the store holds no capsule yet (the one being filed is its
/// first); called before the capsule goes into `n.hand`.
pub(super) fn mark_if_first(tx: &mut WriteTxn<'_>, tree: &str) -> Result<()> {
    if tx.get(tree, &[])?.is_none() && tx.first_with_prefix(HAND, &[])?.is_none() {
        tx.put(tree, &[], BUILT)?;
    }
    Ok(())
}

/// Removes `capsule`'s entry, as `put` filed it.
pub(super) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, capsule: &Capsule) -> Result<()> {
    if let Some(to) = &capsule.to {
        tx.delete(ADDRESSED, &key(part, to, capsule))?;
    }
    Ok(())
}

/// Hands the entries addressed to `to` in `part` to `f`, newest first, from just after the
/// capsule left at `after` (`createdAt`, id) when given; stops when `f` returns `false`.
pub(super) fn scan(
    snap: &Snapshot,
    part: &Partition,
    to: &str,
    after: Option<(i64, u64)>,
    mut f: impl FnMut(Entry) -> Result<bool>,
) -> Result<()> {
    let prefix = prefix(part, to);
    // Every key under the prefix is 16 bytes past it, so the one after `after`'s is the first
    // at or past that key with a zero byte appended.
    let start = after.map_or_else(|| prefix.clone(), |(at, id)| [key_under(&prefix, at, id), vec![0]].concat());
    snap.scan_from(ADDRESSED, &start, &prefix, |k, v| f(decode(k, v)?))
}

/// Builds the index of a store written before it: one scan of the capsules, once (`build_once`).
/// A store with no capsule is left as it is (its first capsule marks it, `put`).
/// Run before every handoff verb (`api::call`), so no reader or forget meets a store without it.
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, ADDRESSED, &[HAND], build)
}

/// Replaces the index (and empties `n.hand_to`) by one filed from every capsule, and marks it built.
fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    tx.delete_prefix(OLD, &[])?;
    tx.delete_prefix(ADDRESSED, &[])?;
    let mut entries = Vec::new();
    tx.scan_prefix(HAND, &[], |k, v| {
        let capsule = Capsule::decode(v)?;
        if let Some(to) = &capsule.to {
            entries.push((key(&Partition::of_key(k)?, to, &capsule), value(&capsule)));
        }
        Ok(())
    })?;
    fill(tx, ADDRESSED, entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_newest_first_and_decode_to_what_was_filed() {
        let part = Partition::new("local", "u1", "default").unwrap();
        let filed = [(i64::MIN, 0), (-5, 9), (0, 3), (0, 2), (7, u64::MAX), (i64::MAX, 1)];
        let mut keys: Vec<(Vec<u8>, (i64, u64))> =
            filed.iter().map(|&(at, id)| (key_under(&prefix(&part, "claude"), at, id), (at, id))).collect();
        keys.sort();
        let order: Vec<(i64, u64)> = keys.iter().map(|k| k.1).collect();
        let mut newest_first = filed.to_vec();
        newest_first.sort_by(|a, b| b.cmp(a));
        assert_eq!(order, newest_first);
        for (k, (at, id)) in &keys {
            let capsule_value = [&[1][..], &(-3_i64).to_be_bytes(), b"T"].concat();
            let e = decode(k, &capsule_value).unwrap();
            assert_eq!(e, Entry { created_at: *at, id: *id, expires_at: Some(-3), task_id: "T".into() });
        }
        assert!(decode(&keys[0].0, &[2, b'T']).is_err(), "an unknown expiry tag is damage, not a guess");
        assert!(decode(&keys[0].0, &[1, 0, 0]).is_err(), "a cut expiry is damage");
    }
}
