//! Segment merging. Each indexing batch writes its postings as a new segment at the end of the
//! partition's key range (an append, whatever the index's size); when the newest `FANOUT` segments
//! share a level they are merged into one segment of the next level, so a partition holds a few
//! segments per level and a query reads a few blocks per term. Every posting is rewritten once per
//! level, as in FTS5's and Lucene's segment merges, instead of a batch touching one leaf per
//! distinct term of one term-major tree.

use std::ops::Bound;

use super::block::{self, Posting};
use super::keys::{POST_TREE, Segment, Stats, chunk_key, post_key_segment, post_key_term, prefix_end, segment_prefix, term_hash};
use crate::text::FastMap;
use crate::{Error, Result, WriteTxn};

/// Segments merged at once: the newest `FANOUT` segments of one level become one of the next.
pub const FANOUT: usize = 16;

/// The size a chunk aims at: a query reads one chunk per term and segment, a write or merge puts
/// one value per chunk.
#[cfg(not(test))]
pub const CHUNK_BYTES: usize = 8 << 10;
/// Tiny under test, so the tests' small segments spread over many chunks.
#[cfg(test)]
pub const CHUNK_BYTES: usize = 48;

/// Merges the newest segments while `FANOUT` of them share a level, updating `stats.segments`
/// (the caller stores `stats`).
pub(super) fn settle(tx: &mut WriteTxn<'_>, prefix: &[u8], stats: &mut Stats) -> Result<()> {
    loop {
        let n = stats.segments.len();
        let Some(tail) = n.checked_sub(FANOUT) else { return Ok(()) };
        let level = stats.segments[n - 1].level;
        if level == u8::MAX || stats.segments[tail..].iter().any(|s| s.level != level) {
            return Ok(());
        }
        let buckets = merge_newest(tx, prefix, &stats.segments[tail..])?;
        stats.segments.truncate(tail + 1);
        stats.segments[tail].level = level + 1;
        stats.segments[tail].buckets = buckets;
    }
}

/// Writes segment `first` from its terms' encoded blocks (each term once, in any order), spread
/// over as many chunks as keep each near `CHUNK_BYTES`; returns that number of buckets.
pub(super) fn write_segment(tx: &mut WriteTxn<'_>, prefix: &[u8], first: u64, blocks: &[(&[u8], Vec<u8>)]) -> Result<u32> {
    let bytes: usize = blocks.iter().map(|(t, b)| t.len() + b.len() + 4).sum();
    // Fits: clamped to the 65,536 values of a 16-bit hash.
    let buckets = (bytes / CHUNK_BYTES + 1).min(1 << 16) as u32;
    let seg = Segment { first, level: 0, buckets };
    let mut by_bucket: Vec<Vec<(&[u8], &[u8])>> = vec![Vec::new(); buckets as usize];
    for (term, block) in blocks {
        by_bucket[seg.bucket(term_hash(term)) as usize].push((term, block));
    }
    for (bucket, mut entries) in by_bucket.into_iter().enumerate() {
        if entries.is_empty() {
            continue;
        }
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        // Fits: at most 65,536 buckets.
        tx.put(POST_TREE, &chunk_key(prefix, first, bucket as u32), &block::encode_chunk(entries.into_iter()))?;
    }
    Ok(buckets)
}

/// The (term, block) entries of value `value` under `key`, a key of segment `seg`: a chunk's
/// entries, or the one block of a segment of the layout before chunks.
pub(super) fn entries_of<'v>(seg: &Segment, prefix: &[u8], key: &'v [u8], value: &'v [u8]) -> Result<Vec<(&'v [u8], &'v [u8])>> {
    if seg.buckets == 0 {
        Ok(vec![(post_key_term(prefix, key)?, value)])
    } else {
        block::chunk_entries(value)
    }
}

/// Rewrites the newest segments `merged` (nothing follows them in the partition) as one segment
/// named by the first of them; returns its number of buckets.
fn merge_newest(tx: &mut WriteTxn<'_>, prefix: &[u8], merged: &[Segment]) -> Result<u32> {
    let first = merged[0].first;
    let start = segment_prefix(prefix, first);
    let end = prefix_end(prefix);
    let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let entries = tx.range(POST_TREE, Bound::Included(&start), end)?;
    let mut by_term: FastMap<&[u8], Vec<Posting>> = FastMap::default();
    for (key, value) in &entries {
        let segment = post_key_segment(prefix, key)?;
        let at = merged.partition_point(|s| s.first <= segment);
        let seg = at.checked_sub(1).map(|i| &merged[i]).filter(|s| s.first == segment).ok_or_else(|| {
            Error::corrupt(None, format!("full-text posting key of segment {segment}, which the totals do not list"))
        })?;
        for (term, bytes) in entries_of(seg, prefix, key, value)? {
            block::decode_into(bytes, by_term.entry(term).or_default())?;
        }
        tx.erase(POST_TREE, key)?;
    }
    let blocks: Vec<(&[u8], Vec<u8>)> = by_term
        .into_iter()
        .map(|(term, mut postings)| {
            // A place is in one segment at most, so the union has each place once; blocks from
            // different batches interleave in document order only when a passage was re-indexed
            // (it keeps its doc), so sorting is mostly skipped.
            if !block::sorted(&postings) {
                postings.sort_unstable_by_key(|p| (p.doc, p.ordinal));
            }
            (term, block::encode(&postings))
        })
        .collect();
    write_segment(tx, prefix, first, &blocks)
}
