//! Segment merging. Each indexing batch writes its postings as a new segment at the end of the
//! partition's key range (an append, whatever the index's size); when the newest `FANOUT` segments
//! share a level they are merged into one segment of the next level, so a partition holds a few
//! segments per level and a query reads a few blocks per term. Every posting is rewritten once per
//! level, as in FTS5's and Lucene's segment merges, instead of a batch touching one leaf per
//! distinct term of one term-major tree.

use std::ops::Bound;

use super::block::{self, Posting};
use super::keys::{
    POST_TREE, Segment, Stats, chunk_key, post_key_segment, post_key_term, prefix_end, segment_prefix, term_hash,
};
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

/// A term's block to write: (term, doc of its last posting, encoded block).
pub(super) type Block<'a> = (&'a [u8], u64, &'a [u8]);

/// Writes segment `first` from its terms' encoded blocks (each term once, in any order), spread
/// over as many chunks as keep each near `CHUNK_BYTES`; returns that number of buckets.
pub(super) fn write_segment(tx: &mut WriteTxn<'_>, prefix: &[u8], first: u64, blocks: &[Block<'_>]) -> Result<u32> {
    let (buckets, chunks) = layout(blocks);
    for (bucket, members) in chunks {
        let entries = members.iter().map(|&i| {
            let (term, last, bytes) = blocks[i as usize];
            block::Entry { term, last, block: bytes }
        });
        tx.put(POST_TREE, &chunk_key(prefix, first, bucket), &block::encode_chunk(entries))?;
    }
    Ok(buckets)
}

/// The chunks of a segment: `(buckets, [(bucket, indexes into blocks, by term)])`, empty buckets
/// left out; as many buckets as keep each chunk near `CHUNK_BYTES`.
pub(super) fn layout(blocks: &[Block<'_>]) -> (u32, Vec<(u32, Vec<u32>)>) {
    let bytes: usize = blocks.iter().map(|(t, _, b)| t.len() + b.len() + 8).sum();
    // Fits: clamped to the 65,536 values of a 16-bit hash.
    let buckets = (bytes / CHUNK_BYTES + 1).min(1 << 16) as u32;
    let seg = Segment { first: 0, level: 0, buckets };
    let mut by_bucket: Vec<Vec<u32>> = vec![Vec::new(); buckets as usize];
    for (i, (term, _, _)) in blocks.iter().enumerate() {
        // Fits: a segment holds far fewer than u32::MAX terms.
        by_bucket[seg.bucket(term_hash(term)) as usize].push(i as u32);
    }
    // Each term's first 8 bytes as a big-endian integer (zero-padded) order terms as their bytes
    // do, but for ties: sorting compares integers and only ties compare the terms.
    let heads: Vec<u64> = blocks
        .iter()
        .map(|(term, _, _)| {
            let mut head = [0_u8; 8];
            let n = term.len().min(8);
            head[..n].copy_from_slice(&term[..n]);
            u64::from_be_bytes(head)
        })
        .collect();
    let chunks = by_bucket
        .into_iter()
        .enumerate()
        .filter(|(_, members)| !members.is_empty())
        .map(|(bucket, mut members)| {
            members.sort_unstable_by(|&a, &b| {
                let (a, b) = (a as usize, b as usize);
                heads[a].cmp(&heads[b]).then_with(|| blocks[a].0.cmp(blocks[b].0))
            });
            // Fits: at most 65,536 buckets.
            (bucket as u32, members)
        })
        .collect();
    (buckets, chunks)
}

/// The entries of value `value` under `key`, a key of segment `seg`: a chunk's entries, or the
/// one block of a segment of the layout before chunks (decoded for its last doc).
pub(super) fn entries_of<'v>(
    seg: &Segment,
    prefix: &[u8],
    key: &'v [u8],
    value: &'v [u8],
) -> Result<Vec<block::Entry<'v>>> {
    if seg.buckets == 0 {
        let last = block::decode(value)?.last().map_or(0, |p| p.doc);
        Ok(vec![block::Entry { term: post_key_term(prefix, key)?, last, block: value }])
    } else {
        block::chunk_entries(value)
    }
}

/// A merged term's block: one segment's, kept as it is, or written into the merge's buffer.
enum Made<'a> {
    Kept(&'a [u8]),
    New(std::ops::Range<usize>),
}

/// Rewrites the newest segments `merged` (nothing follows them in the partition) as one segment
/// named by the first of them; returns its number of buckets.
fn merge_newest(tx: &mut WriteTxn<'_>, prefix: &[u8], merged: &[Segment]) -> Result<u32> {
    let first = merged[0].first;
    let start = segment_prefix(prefix, first);
    let end = prefix_end(prefix);
    let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let entries = tx.range(POST_TREE, Bound::Included(&start), end)?;
    // The merged blocks are no larger than the chunks they come from: one allocation for them
    // all, where growing the buffer by doubling took fresh (kernel-zeroed) pages at each step.
    let bytes: usize = entries.iter().map(|(_, v)| v.len()).sum();
    // Each term's blocks, oldest segment first (keys are segment-major).
    let mut by_term: FastMap<&[u8], Vec<(u64, &[u8])>> = FastMap::default();
    by_term.reserve(bytes / 64);
    for (key, value) in &entries {
        let segment = post_key_segment(prefix, key)?;
        let at = merged.partition_point(|s| s.first <= segment);
        let seg = at.checked_sub(1).map(|i| &merged[i]).filter(|s| s.first == segment).ok_or_else(|| {
            Error::corrupt(None, format!("full-text posting key of segment {segment}, which the totals do not list"))
        })?;
        for e in entries_of(seg, prefix, key, value)? {
            by_term.entry(e.term).or_default().push((e.last, e.block));
        }
        tx.erase(POST_TREE, key)?;
    }
    // New blocks go into one buffer; a term found in one segment only keeps its block as it is.
    let mut arena: Vec<u8> = Vec::with_capacity(bytes);
    let mut made: Vec<(&[u8], u64, Made<'_>)> = Vec::with_capacity(by_term.len());
    for (term, parts) in by_term {
        let last = parts.last().map_or(0, |p| p.0);
        if let [(_, only)] = parts.as_slice() {
            made.push((term, last, Made::Kept(only)));
            continue;
        }
        // Batches take increasing doc ids, so blocks usually chain as they are; a re-indexed
        // passage keeps its doc and lands in a later segment, and then the term's postings are
        // decoded and sorted (a place is in one segment at most, so each is there once).
        let start = arena.len();
        if block::concat_into(&parts, &mut arena)? {
            made.push((term, last, Made::New(start..arena.len())));
            continue;
        }
        let mut postings: Vec<Posting> = Vec::new();
        for (_, bytes) in &parts {
            block::decode_into(bytes, &mut postings)?;
        }
        postings.sort_unstable_by_key(|p| (p.doc, p.ordinal));
        let last = postings.last().map_or(0, |p| p.doc);
        block::encode_into(&postings, &mut arena);
        made.push((term, last, Made::New(start..arena.len())));
    }
    let blocks: Vec<Block<'_>> = made
        .into_iter()
        .map(|(term, last, made)| match made {
            Made::Kept(bytes) => (term, last, bytes),
            Made::New(range) => (term, last, &arena[range]),
        })
        .collect();
    write_segment(tx, prefix, first, &blocks)
}
