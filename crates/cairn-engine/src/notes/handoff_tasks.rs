//! Each task's capsules, newest first, so the verbs that want a task's newest unexpired capsule
//! (`handoff_resume {taskId}`, the `replaces` of `handoff_create`, `superseded` in the addressed
//! list) or its capsules left at one time (an import's duplicate check) read a few small entries
//! rather than decode every capsule the task ever held: a task handed off at each step of a long
//! job holds thousands, up to 64 KiB each, and each create read them all (8 ms at 2,000).
//!
//! `n.hand_task` `part | task \0 | !ord(createdAt) | !id` → `0` (no expiry) or `1 | expiresAt`,
//! laid out as `n.hand_for` (`handoff_index.rs`): ascending keys are newest `createdAt` first,
//! then highest id, the order in which a resume picks a task's newest (ids follow creation, but an
//! imported capsule takes a new id whenever its page arrives, so time decides). Task ids hold no NUL. The
//! empty key → `[1]` marks it built. Written and removed in the capsule's own transaction
//! (`handoff::put`, `handoff_forget.rs`); a whole scope's entries go with every `n.*` key of its
//! partition (`purge.rs`). `memory_status` counts a scope's unexpired capsules from it. A store
//! written before it has capsules and no marker: the first handoff verb, import or status on it
//! builds the index from one scan of the capsules (`upgrade`).

use super::handoff::{Capsule, HAND};
use super::handoff_index::{fill, key_under, mark_if_first, time_and_id};
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::knowledge::build_once::build_once;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::write::WriteTxn;
use std::ops::Bound;

pub(crate) const TASKS: &str = "n.hand_task";

/// Entries a write transaction reads at a time while it looks for a task's newest unexpired
/// capsule: most tasks answer from the first.
const CHUNK: usize = 16;

/// A capsule as the index files it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) created_at: i64,
    pub(super) id: u64,
    pub(super) expires_at: Option<i64>,
}

impl Entry {
    pub(super) fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// The `n.hand` key of the capsule with `id` on `task`.
pub(super) fn capsule_key(part: &Partition, task: &str, id: u64) -> Vec<u8> {
    part.key(&[task.as_bytes(), b"\0", &id.to_be_bytes()])
}

/// The capsule `entry` files on `task`, from `n.hand`.
pub(super) fn capsule(snap: &Snapshot, part: &Partition, task: &str, entry: Entry) -> Result<Capsule> {
    let bytes = snap.get(HAND, &capsule_key(part, task, entry.id))?.ok_or_else(missing)?;
    Capsule::decode(&bytes)
}

/// As `capsule`, inside a write.
pub(super) fn capsule_in(tx: &mut WriteTxn<'_>, part: &Partition, task: &str, entry: Entry) -> Result<Capsule> {
    let bytes = tx.get(HAND, &capsule_key(part, task, entry.id))?.ok_or_else(missing)?;
    Capsule::decode(&bytes)
}

fn missing() -> Error {
    Error::corrupt(None, "a capsule of the task index is missing")
}

/// `part | task \0`: every entry of `task`.
fn prefix(part: &Partition, task: &str) -> Vec<u8> {
    part.key(&[task.as_bytes(), b"\0"])
}

/// `part | task \0 | !ord(at)`: the entries of `task` left at `at` (a key's first 8 bytes past
/// the prefix are its time).
fn prefix_at(part: &Partition, task: &str, at: i64) -> Vec<u8> {
    let mut key = key_under(&prefix(part, task), at, 0);
    key.truncate(key.len() - 8);
    key
}

fn key(part: &Partition, capsule: &Capsule) -> Vec<u8> {
    key_under(&prefix(part, &capsule.task_id), capsule.created_at, capsule.id)
}

fn value(capsule: &Capsule) -> Vec<u8> {
    match capsule.expires_at {
        None => vec![0],
        Some(at) => [&[1][..], &at.to_be_bytes()].concat(),
    }
}

/// The entry of `key` and `value` (the key's last 16 bytes are its time and id).
fn decode(key: &[u8], value: &[u8]) -> Result<Entry> {
    let damaged = || Error::corrupt(None, "an entry of the task handoffs index");
    let (at, id) = time_and_id(key).ok_or_else(damaged)?;
    let expires_at = match value {
        [0] => None,
        [1, rest @ ..] if rest.len() == 8 => Some(i64::from_be_bytes(rest.try_into().expect("8 bytes"))),
        _ => return Err(damaged()),
    };
    Ok(Entry { created_at: at, id, expires_at })
}

/// Files `capsule` (its id given, not yet in `n.hand`). The first capsule of a store that holds
/// none marks the index built, as `build` would leave it: a fresh store never needs the build.
pub(super) fn put(tx: &mut WriteTxn<'_>, part: &Partition, capsule: &Capsule) -> Result<()> {
    mark_if_first(tx, TASKS)?;
    tx.put(TASKS, &key(part, capsule), &value(capsule))
}

/// Removes `capsule`'s entry, as `put` filed it.
pub(super) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, capsule: &Capsule) -> Result<()> {
    tx.delete(TASKS, &key(part, capsule)).map(drop)
}

/// Hands the entries of `task` to `f`, newest first; stops when `f` returns `false`.
pub(super) fn scan(
    snap: &Snapshot,
    part: &Partition,
    task: &str,
    mut f: impl FnMut(Entry) -> Result<bool>,
) -> Result<()> {
    snap.scan_prefix(TASKS, &prefix(part, task), |k, v| f(decode(k, v)?))
}

/// The newest unexpired capsule of `task` at `now`, if any: what `handoff_resume {taskId}` returns.
pub(super) fn newest_unexpired(snap: &Snapshot, part: &Partition, task: &str, now: i64) -> Result<Option<Entry>> {
    let mut found = None;
    scan(snap, part, task, |e| {
        found = (!e.expired(now)).then_some(e);
        Ok(found.is_none())
    })?;
    Ok(found)
}

/// `newest_unexpired` inside a write, this transaction's own capsules included.
pub(super) fn newest_unexpired_in(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    task: &str,
    now: i64,
) -> Result<Option<Entry>> {
    let prefix = prefix(part, task);
    let mut start = prefix.clone();
    let mut inclusive = true;
    loop {
        let lower = if inclusive { Bound::Included(&start[..]) } else { Bound::Excluded(&start[..]) };
        let chunk = tx.range_first(TASKS, lower, Bound::Unbounded, CHUNK)?;
        let within: Vec<_> = chunk.iter().take_while(|(k, _)| k.starts_with(&prefix)).collect();
        for (k, v) in &within {
            let e = decode(k, v)?;
            if !e.expired(now) {
                return Ok(Some(e));
            }
        }
        // A chunk may come back short while more follow (a delete waiting in this transaction
        // hides an entry it read): only an empty one, or one that leaves the task, ends it.
        match within.last() {
            Some((k, _)) if within.len() == chunk.len() => {
                start.clone_from(k);
                inclusive = false;
            }
            _ => return Ok(None),
        }
    }
}

/// How many capsules of `part` are unexpired at `now`, from the entries alone.
pub(super) fn unexpired(snap: &Snapshot, part: &Partition, now: i64) -> Result<u64> {
    let mut n = 0;
    snap.scan_prefix(TASKS, part.prefix(), |k, v| {
        n += u64::from(!decode(k, v)?.expired(now));
        Ok(true)
    })?;
    Ok(n)
}

/// The entries of `task` left at `at` (a capsule and its import share their time).
pub(super) fn left_at(tx: &mut WriteTxn<'_>, part: &Partition, task: &str, at: i64) -> Result<Vec<Entry>> {
    tx.prefix(TASKS, &prefix_at(part, task, at))?.iter().map(|(k, v)| decode(k, v)).collect()
}

/// Builds the index of a store written before it: one scan of the capsules, once (`build_once`).
/// Run before every handoff verb, import and status, so no reader meets a store without it.
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, TASKS, &[HAND], build)
}

/// Replaces the index by one filed from every capsule, and marks it built.
fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    tx.delete_prefix(TASKS, &[])?;
    let mut entries = Vec::new();
    tx.scan_prefix(HAND, &[], |k, v| {
        let capsule = Capsule::decode(v)?;
        entries.push((key(&Partition::of_key(k)?, &capsule), value(&capsule)));
        Ok(())
    })?;
    fill(tx, TASKS, entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_decode_to_what_was_filed_and_a_tasks_time_prefixes_its_keys() {
        let part = Partition::new("local", "u1", "default").unwrap();
        for (at, id) in [(i64::MIN, 0), (-5, 9), (0, 3), (i64::MAX, u64::MAX)] {
            let k = key_under(&prefix(&part, "T"), at, id);
            assert!(k.starts_with(&prefix_at(&part, "T", at)));
            assert!(!k.starts_with(&prefix_at(&part, "T", at.wrapping_add(1))));
            let e = decode(&k, &[&[1][..], &(-3_i64).to_be_bytes()].concat()).unwrap();
            assert_eq!(e, Entry { created_at: at, id, expires_at: Some(-3) });
            assert_eq!(decode(&k, &[0]).unwrap().expires_at, None);
        }
        let k = key_under(&prefix(&part, "T"), 1, 1);
        assert!(decode(&k, &[2]).is_err(), "an unknown expiry tag is damage, not a guess");
        assert!(decode(&k, &[1, 0, 0]).is_err(), "a cut expiry is damage");
    }
}
