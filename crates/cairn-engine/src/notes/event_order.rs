//! Which events a page of history or audit holds: the sequence numbers under one or more index
//! prefixes (keys end in a sequence number), oldest first after a cursor, or newest first before
//! one. A user with a long history reads its latest changes first (found playing two agents:
//! the newest of 300 versions was 15 pages away).
//!
//! The trees are read forwards only (the B+tree has no reverse cursor), so a newest-first page
//! reads the keys of its targets up to the cursor and keeps the last `limit + 1`: keys only (a
//! sequence number each), no event decoded, so a page costs one pass over a target's index
//! entries, not over its events.

use crate::error::Result;
use crate::history::seq_of;
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use std::collections::VecDeque;
use std::ops::Bound;

/// Up to `limit + 1` sequence numbers under `prefixes`, each with the partition it indexes, in
/// sequence order, after `after`; the one past `limit` says there is more.
pub(super) fn oldest<'a>(
    snap: &Snapshot,
    tree: &str,
    prefixes: &[(&'a Partition, Vec<u8>)],
    after: Option<u64>,
    limit: usize,
) -> Result<Vec<(u64, &'a Partition)>> {
    let mut seqs = Vec::with_capacity(limit + 1);
    for (part, prefix) in prefixes {
        let start = after.map_or_else(|| prefix.clone(), |s| [prefix, &s.to_be_bytes()[..]].concat());
        let bound = if after.is_some() { Bound::Excluded(start.as_slice()) } else { Bound::Included(start.as_slice()) };
        for (taken, kv) in snap.range(tree, bound, Bound::Unbounded)?.enumerate() {
            let (k, _) = kv?;
            if !k.starts_with(prefix) || taken > limit {
                break;
            }
            seqs.push((seq_of(&k)?, *part));
        }
    }
    seqs.sort_unstable_by_key(|(seq, _)| *seq);
    seqs.dedup_by_key(|(seq, _)| *seq);
    seqs.truncate(limit + 1);
    Ok(seqs)
}

/// Up to `limit + 1` sequence numbers under `prefixes`, newest first, before `before`.
pub(super) fn newest<'a>(
    snap: &Snapshot,
    tree: &str,
    prefixes: &[(&'a Partition, Vec<u8>)],
    before: Option<u64>,
    limit: usize,
) -> Result<Vec<(u64, &'a Partition)>> {
    let mut seqs = Vec::with_capacity(prefixes.len() * (limit + 1));
    for (part, prefix) in prefixes {
        let mut last: VecDeque<u64> = VecDeque::with_capacity(limit + 2);
        snap.scan_prefix(tree, prefix, |k, _| {
            let seq = seq_of(k)?;
            if before.is_some_and(|b| seq >= b) {
                return Ok(false);
            }
            if last.len() > limit {
                last.pop_front();
            }
            last.push_back(seq);
            Ok(true)
        })?;
        seqs.extend(last.into_iter().map(|seq| (seq, *part)));
    }
    seqs.sort_unstable_by_key(|(seq, _)| std::cmp::Reverse(*seq));
    seqs.dedup_by_key(|(seq, _)| *seq);
    seqs.truncate(limit + 1);
    Ok(seqs)
}
