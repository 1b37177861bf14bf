//! Segment merging. Each indexing batch writes its postings as a new segment at the end of the
//! partition's key range (an append, whatever the index's size); when `FANOUT` consecutive
//! segments share a level they are merged into one segment of the next level, so a partition
//! holds a few segments per level and a query reads a few blocks per term. Every posting is
//! rewritten once per level, as in FTS5's and Lucene's segment merges, instead of a batch
//! touching one leaf per distinct term of one term-major tree. A merge runs class by class of
//! buckets over as many indexing calls as it needs, each call doing about `MERGE_STEP_BYTES`
//! of it, so no call's time or memory grows with the index (the merge's state is in the
//! totals, `keys::Merge`).

use std::ops::Bound;

use super::block::{self, Posting};
use super::keys::{
    Merge, POST_TREE, Segment, Stats, chunk_key, post_key_segment, post_key_term, prefix_end, segment_prefix, term_hash,
};
use crate::text::FastMap;
use crate::{Error, Result, WriteTxn};

/// Segments merged at once: `FANOUT` consecutive segments of one level become one of the next.
pub const FANOUT: usize = 16;

/// The size a chunk aims at: a query reads one chunk per term and segment, a write or merge puts
/// one value per chunk.
#[cfg(not(test))]
pub const CHUNK_BYTES: usize = 8 << 10;
/// Tiny under test, so the tests' small segments spread over many chunks.
#[cfg(test)]
pub const CHUNK_BYTES: usize = 48;

/// Input bytes a call of `settle` reads for the merge in progress before it stops (it takes at
/// least one step a call): what bounds the time and memory a merge adds to one indexing call,
/// and to its transaction's log record and dirty pages, whatever the index's size.
#[cfg(not(test))]
pub const MERGE_STEP_BYTES: usize = 8 << 20;
/// Tiny under test (about 21 chunks of `CHUNK_BYTES`), so the tests' merges span several calls.
#[cfg(test)]
pub const MERGE_STEP_BYTES: usize = 1024;

/// The fewest input bytes a call reads for a merge in progress: a merge reads
/// `1/MERGE_CALLS` of its input a call, within [`MERGE_STEP_MIN`, `MERGE_STEP_BYTES`] (`budget`).
#[cfg(not(test))]
pub const MERGE_STEP_MIN: usize = 2 << 20;
#[cfg(test)]
pub const MERGE_STEP_MIN: usize = 512;

/// The calls a merge aims to span: as many as it takes batches to fill a run of `FANOUT` new
/// segments, so the newest level does not pile up behind a merge (each segment queued costs
/// every query a chunk a term).
const MERGE_CALLS: usize = FANOUT;

/// Advances the partition's merges by about `MERGE_STEP_BYTES`, updating `stats` (the caller
/// stores it): the merge in progress, step by step, then the next, while the oldest `FANOUT`
/// consecutive segments of one level are there to merge. A run that is not nested (a segment of
/// the layout before chunks, or of a count not a power of two) is merged at once.
pub(super) fn settle(tx: &mut WriteTxn<'_>, prefix: &[u8], stats: &mut Stats) -> Result<()> {
    let mut spent = 0;
    loop {
        if stats.merge.is_none() {
            let Some(start) = oldest_run(&stats.segments) else { return Ok(()) };
            let run = &stats.segments[start..start + FANOUT];
            if nested(run).is_none() {
                spent += merge_whole(tx, prefix, stats, start)?;
                continue;
            }
            // Fits: a partition holds a few dozen segments, and FANOUT is 16.
            let classes = classes_for(run);
            stats.merge = Some(Merge { start: start as u32, inputs: FANOUT as u32, classes, out_buckets: 0, done: 0 });
        }
        while let Some(m) = stats.merge {
            if spent >= budget(&m) {
                return Ok(());
            }
            spent += step(tx, prefix, stats)?;
        }
    }
}

/// The input bytes a call reads of merge `m`: `1/MERGE_CALLS` of its input (as the output's bucket
/// count says, once class 0 is merged; the least before), within [`MERGE_STEP_MIN`,
/// `MERGE_STEP_BYTES`]. Measured (`bench/ingest-memory.bench.mjs`): with 8 MiB a call for every
/// merge, the first level-2 merge (128k passages, ~40 MB) took five calls, the slowest 4.7× the
/// median call and RSS +90 MB there; with 2 MiB, 2.5× and +50 MB. A level-3 merge (16× larger)
/// still reads at most 8 MiB a call, and spans more calls than `MERGE_CALLS`.
fn budget(m: &Merge) -> usize {
    let input = m.out_buckets as usize * CHUNK_BYTES;
    (input / MERGE_CALLS).clamp(MERGE_STEP_MIN, MERGE_STEP_BYTES)
}

/// The place of the oldest run of `FANOUT` consecutive segments of one level (below 255).
/// Oldest, not newest: while a merge spans several batches their new segments queue after it,
/// and a run left behind a newer one would never be merged.
fn oldest_run(segments: &[Segment]) -> Option<usize> {
    (0..=segments.len().checked_sub(FANOUT)?).find(|&i| {
        let level = segments[i].level;
        level < u8::MAX && segments[i..i + FANOUT].iter().all(|s| s.level == level)
    })
}

/// The classes a merge of nested segments `run` works in: the power of two between the smallest
/// and the largest bucket count that makes the largest step smallest, in chunks read. A step
/// reads one class (`max(buckets, classes) / classes` chunks of each input) or re-buckets one
/// input with fewer buckets than the classes (all of it, `rebucket`). Equal counts (batches of
/// one size) keep the smallest, one chunk an input a class; a small segment merged with large
/// ones is spread over more buckets first, since with its few buckets as the classes one step
/// would read a large share of the others.
fn classes_for(run: &[Segment]) -> u32 {
    let cost = |classes: u32| {
        let class: u32 = run.iter().map(|s| s.buckets.max(classes) / classes).sum();
        let spread = run.iter().map(|s| s.buckets).filter(|&b| b < classes).max().unwrap_or(0);
        class.max(spread)
    };
    let most = run.iter().map(|s| s.buckets).max().unwrap_or(1);
    let mut best = run.iter().map(|s| s.buckets).min().unwrap_or(1);
    let mut classes = best;
    while classes < most {
        classes *= 2;
        if cost(classes) < cost(best) {
            best = classes;
        }
    }
    best
}

/// One step of the merge in progress: re-buckets an input that has fewer buckets than the
/// merge's classes, or else merges the next class (finishing the merge after the last: its
/// inputs become the output in `stats.segments`). Returns the input bytes it read.
fn step(tx: &mut WriteTxn<'_>, prefix: &[u8], stats: &mut Stats) -> Result<usize> {
    let mut m = stats.merge.expect("a merge in progress");
    if let Some(at) = m.range().find(|&i| stats.segments[i].buckets < m.classes) {
        return rebucket(tx, prefix, &mut stats.segments[at], m.classes);
    }
    let class = m.done;
    let mut chunks: Vec<(usize, Vec<u8>)> = Vec::new();
    for (place, seg) in stats.segments[m.range()].iter().enumerate() {
        for bucket in (class..seg.buckets).step_by(m.classes as usize) {
            let key = chunk_key(prefix, seg.first, bucket);
            if let Some(value) = tx.get(POST_TREE, &key)? {
                tx.erase(POST_TREE, &key)?;
                chunks.push((place, value));
            }
        }
    }
    let bytes: usize = chunks.iter().map(|(_, v)| v.len()).sum();
    if m.done == 0 {
        // Classes hold terms by hash, so class 0 is a fair sample of the whole: the output's
        // chunks come out near `CHUNK_BYTES` without reading every input first (exact with one
        // class, as a merge of small segments has).
        m.out_buckets = bucket_count(bytes.saturating_mul(m.classes as usize)).max(m.classes);
    }
    let first = stats.segments[m.start as usize].first;
    merge_class(tx, prefix, first, &chunks, (class, m.classes, m.out_buckets))?;
    m.done += 1;
    if m.done == m.classes {
        let out = stats.merge_output(&m);
        stats.segments.splice(m.range(), [out]);
        stats.merge = None;
    } else {
        stats.merge = Some(m);
    }
    Ok(bytes)
}

/// Spreads nested segment `seg` over `to` buckets (more than it has). A term's new bucket
/// `h % to` is congruent to its old one modulo the old count, so each new chunk takes its
/// entries, in term order, from one old chunk. Returns the bytes read.
fn rebucket(tx: &mut WriteTxn<'_>, prefix: &[u8], seg: &mut Segment, to: u32) -> Result<usize> {
    let mut old: Vec<Vec<u8>> = Vec::new();
    for bucket in 0..seg.buckets {
        let key = chunk_key(prefix, seg.first, bucket);
        if let Some(value) = tx.get(POST_TREE, &key)? {
            tx.erase(POST_TREE, &key)?;
            old.push(value);
        }
    }
    let mut by_bucket: Vec<Vec<block::Entry<'_>>> = vec![Vec::new(); to as usize];
    for value in &old {
        for e in block::chunk_entries(value)? {
            by_bucket[(u32::from(term_hash(e.term)) % to) as usize].push(e);
        }
    }
    for (bucket, entries) in by_bucket.iter().enumerate() {
        if !entries.is_empty() {
            // Fits: below `to`, at most 65,536.
            tx.put(
                POST_TREE,
                &chunk_key(prefix, seg.first, bucket as u32),
                &block::encode_chunk(entries.iter().copied()),
            )?;
        }
    }
    seg.buckets = to;
    Ok(old.iter().map(Vec::len).sum())
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

/// Merges the run of `FANOUT` segments at `start` (not nested: a segment of the layout before
/// chunks or of another bucket count takes part) in one transaction, through a map of terms,
/// into one segment named by the first of them. Such runs exist only in stores written before
/// power-of-two counts, and they are merged once. Reads only the run's keys: newer segments may
/// follow it. Returns the bytes read.
fn merge_whole(tx: &mut WriteTxn<'_>, prefix: &[u8], stats: &mut Stats, start: usize) -> Result<usize> {
    let merged = &stats.segments[start..start + FANOUT];
    let first = merged[0].first;
    let from = segment_prefix(prefix, first);
    let end = match stats.segments.get(start + FANOUT) {
        Some(next) => Some(segment_prefix(prefix, next.first)),
        None => prefix_end(prefix),
    };
    let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let entries = tx.range(POST_TREE, Bound::Included(&from), end)?;
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
    let buckets = write_segment(tx, prefix, first, &blocks)?;
    let level = merged[0].level + 1;
    stats.segments.splice(start..start + FANOUT, [Segment { first, level, buckets }]);
    Ok(bytes)
}

/// The smallest bucket count of segments `merged` when every one is a power of two (so every
/// count is a multiple of it): the segments a merge can take class by class.
fn nested(merged: &[Segment]) -> Option<u32> {
    merged.iter().all(|s| s.buckets.is_power_of_two()).then(|| merged.iter().map(|s| s.buckets).min()).flatten()
}

/// One input block of a term in `merge_class`: (term, its segment's place in the merge, doc of
/// its last posting, block).
type Part<'a> = (&'a [u8], usize, u64, &'a [u8]);

/// Merges one class of a merge of nested segments: `chunks` (each input's place in the merge,
/// oldest first, and one of its chunks of bucket ≡ `class` mod `classes`) into the output
/// segment `first`'s chunks of that class, buckets `class + i * classes` below `buckets`. The
/// terms of hash `h` are, in every input (its count a power of two, at least `classes`), in a
/// bucket congruent to `h % classes`, and so are they in the output (its count a power of two
/// no smaller). The class's entries are sorted by term (then by segment, oldest first), each
/// term's blocks chained, and the terms dealt to their output chunks in order: no map of every
/// term, and no second sort for the layout.
fn merge_class(
    tx: &mut WriteTxn<'_>,
    prefix: &[u8],
    first: u64,
    chunks: &[(usize, Vec<u8>)],
    (class, classes, buckets): (u32, u32, u32),
) -> Result<()> {
    let mut parts: Vec<Part<'_>> = Vec::new();
    for (place, value) in chunks {
        for e in block::chunk_entries(value)? {
            parts.push((e.term, *place, e.last, e.block));
        }
    }
    parts.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
    // The merged blocks are no larger than the chunks they come from.
    let mut arena: Vec<u8> = Vec::with_capacity(chunks.iter().map(|(_, v)| v.len()).sum());
    let mut made: Vec<(&[u8], u64, std::ops::Range<usize>)> = Vec::new();
    let mut postings: Vec<Posting> = Vec::new();
    let mut chain: Vec<(u64, &[u8])> = Vec::new();
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
    // Deal the terms (in order) to the class's output chunks: bucket `class + i * classes`.
    let mut outputs: Vec<Vec<usize>> = vec![Vec::new(); (buckets / classes) as usize];
    for (i, (term, _, _)) in made.iter().enumerate() {
        let bucket = u32::from(term_hash(term)) % buckets;
        outputs[(bucket / classes) as usize].push(i);
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
        let bucket = class + i as u32 * classes;
        tx.put(POST_TREE, &chunk_key(prefix, first, bucket), &block::encode_chunk(entries))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(out_buckets: u32) -> Merge {
        Merge { start: 0, inputs: FANOUT as u32, classes: 1, out_buckets, done: 1 }
    }

    #[test]
    fn a_call_reads_a_sixteenth_of_a_merge_within_bounds() {
        assert_eq!(budget(&merge(0)), MERGE_STEP_MIN, "before class 0 says the size: the least");
        assert_eq!(budget(&merge(4)), MERGE_STEP_MIN, "a small merge: the least");
        assert_eq!(budget(&merge(256)), 256 * CHUNK_BYTES / MERGE_CALLS, "a middling one: a sixteenth");
        assert!((MERGE_STEP_MIN..MERGE_STEP_BYTES).contains(&budget(&merge(256))));
        assert_eq!(budget(&merge(1 << 20)), MERGE_STEP_BYTES, "a huge one: the most");
    }
}
