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

/// The number of buckets of a segment of about `bytes`: the power of two nearest to the count
/// that keeps each chunk near `CHUNK_BYTES`. Powers of two nest (`h % 2^k` follows from
/// `h % 2^(k+j)`), so a merge gathers each output chunk's terms from a known few input chunks
/// (`merge_nested`) instead of through a map of every term.
pub(super) fn bucket_count(bytes: usize) -> u32 {
    let n = (bytes / CHUNK_BYTES + 1).min(1 << 16);
    let up = n.next_power_of_two();
    let nearest = if up - n > n - up / 2 { up / 2 } else { up };
    // Fits: at most 65,536, the values of a 16-bit hash.
    nearest as u32
}

/// The chunks of a segment: `(buckets, [(bucket, indexes into blocks, by term)])`, empty buckets
/// left out; `bucket_count` buckets.
pub(super) fn layout(blocks: &[Block<'_>]) -> (u32, Vec<(u32, Vec<u32>)>) {
    let bytes: usize = blocks.iter().map(|(t, _, b)| t.len() + b.len() + 8).sum();
    let buckets = bucket_count(bytes);
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
    if let Some(smallest) = nested(merged) {
        for (key, _) in &entries {
            tx.erase(POST_TREE, key)?;
        }
        return merge_nested(tx, prefix, merged, &entries, (smallest, bytes));
    }
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

/// The smallest bucket count of segments `merged` when every one is a power of two (so every
/// count is a multiple of it): the segments `merge_nested` can merge.
fn nested(merged: &[Segment]) -> Option<u32> {
    merged.iter().all(|s| s.buckets.is_power_of_two()).then(|| merged.iter().map(|s| s.buckets).min()).flatten()
}

/// One input block of a term in `merge_nested`: (term, its segment's place in the merge, doc of
/// its last posting, block).
type Part<'a> = (&'a [u8], usize, u64, &'a [u8]);

/// `merge_newest` for segments whose bucket counts are powers of two, the smallest `smallest`:
/// the terms of hash `h` are, in every segment, in a bucket congruent to `h % smallest`, and so
/// are they in the merged segment (its count a power of two no smaller). Each such class of
/// chunks is merged on its own: its entries sorted by term (then by segment, oldest first), each
/// term's blocks chained, and the terms dealt to their output chunks in order. No map of every
/// term, and no second sort for the layout.
fn merge_nested(
    tx: &mut WriteTxn<'_>,
    prefix: &[u8],
    merged: &[Segment],
    chunks: &[(Vec<u8>, Vec<u8>)],
    (smallest, bytes): (u32, usize),
) -> Result<u32> {
    let buckets = bucket_count(bytes).max(smallest);
    let classes = smallest as usize;
    // Each class's chunks, as (segment's place, value).
    let mut by_class: Vec<Vec<(usize, &[u8])>> = vec![Vec::new(); classes];
    for (key, value) in chunks {
        let segment = post_key_segment(prefix, key)?;
        let at = merged.partition_point(|s| s.first <= segment);
        let place = at.checked_sub(1).filter(|&i| merged[i].first == segment).ok_or_else(|| {
            Error::corrupt(None, format!("full-text posting key of segment {segment}, which the totals do not list"))
        })?;
        let bucket = key
            .get(prefix.len() + 8..)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
            .filter(|&b| b < merged[place].buckets)
            .ok_or_else(|| Error::corrupt(None, "full-text chunk key is malformed"))?;
        by_class[(bucket % smallest) as usize].push((place, value.as_slice()));
    }
    let per_class = (buckets / smallest) as usize;
    let mut parts: Vec<Part<'_>> = Vec::new();
    let mut arena: Vec<u8> = Vec::new();
    let mut made: Vec<(&[u8], u64, std::ops::Range<usize>)> = Vec::new();
    let mut outputs: Vec<Vec<usize>> = vec![Vec::new(); per_class];
    let mut postings: Vec<Posting> = Vec::new();
    let mut chain: Vec<(u64, &[u8])> = Vec::new();
    for (class, members) in by_class.iter().enumerate() {
        parts.clear();
        for &(place, value) in members {
            for e in block::chunk_entries(value)? {
                parts.push((e.term, place, e.last, e.block));
            }
        }
        parts.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
        arena.clear();
        made.clear();
        for same in parts.chunk_by(|a, b| a.0 == b.0) {
            let (term, _, last, only) = same[same.len() - 1];
            let start = arena.len();
            if same.len() == 1 {
                arena.extend_from_slice(only);
            } else {
                chain.clear();
                chain.extend(same.iter().map(|&(_, _, last, b)| (last, b)));
                if !block::concat_into(&chain, &mut arena)? {
                    // A re-indexed passage keeps its doc in a later segment: decode and sort.
                    postings.clear();
                    for (_, b) in &chain {
                        block::decode_into(b, &mut postings)?;
                    }
                    postings.sort_unstable_by_key(|p| (p.doc, p.ordinal));
                    block::encode_into(&postings, &mut arena);
                    let last = postings.last().map_or(0, |p| p.doc);
                    made.push((term, last, start..arena.len()));
                    continue;
                }
            }
            made.push((term, last, start..arena.len()));
        }
        // Deal the terms (in order) to the class's output chunks: bucket `class + i * smallest`.
        for out in &mut outputs {
            out.clear();
        }
        for (i, (term, _, _)) in made.iter().enumerate() {
            let bucket = u32::from(term_hash(term)) % buckets;
            outputs[(bucket / smallest) as usize].push(i);
        }
        for (i, members) in outputs.iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let entries = members.iter().map(|&m| block::Entry {
                term: made[m].0,
                last: made[m].1,
                block: &arena[made[m].2.clone()],
            });
            // Fits: below `buckets`, at most 65,536.
            let bucket = class as u32 + i as u32 * smallest;
            tx.put(POST_TREE, &chunk_key(prefix, merged[0].first, bucket), &block::encode_chunk(entries))?;
        }
    }
    Ok(buckets)
}
