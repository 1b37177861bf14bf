//! Byte layout of the full-text trees. Every key starts with the encoded partition
//! `len u16 BE | part`, so two partitions never share a key prefix; terms end in `0x00`, so a term's
//! keys are never a prefix of a longer term's keys. Integers in keys are big-endian (they sort
//! numerically); integers in values are little-endian. `docs/design/fts.md` draws the layout.

use crate::{Error, Result};

/// Postings: `part | segment u64 BE | bucket u32 BE` → a chunk (`block.rs`): the posting blocks
/// of every term of one segment (a run of consecutive indexing batches, named by its first) whose
/// `term_hash` falls in that bucket. Segment-major, so a new batch's chunks land together after
/// every older segment. A segment written before chunks (its `buckets` is 0) keeps one block per
/// term under `part | segment u64 BE | term 0x00`.
pub const POST_TREE: &str = "fts.post";
/// Passages: `part | doc u64 BE | ordinal u32 BE` →
/// `batch u64 LE | length u32 LE | (count | HASHED) u32 LE | count × term hash u16 LE` (the
/// distinct hashes of its terms, ascending); a record written before chunks has
/// `count u32 LE | (len u16 LE | term)*` instead.
pub const DOC_TREE: &str = "fts.doc";
/// Partition totals and segments: `part` → `passages u64 LE | tokens u64 LE | next batch u64 LE |
/// (count | HASHED [| MERGING]) u32 LE | count × (first batch u64 LE | level u8 | buckets u32 LE)
/// [| start u32 LE | inputs u32 LE | classes u32 LE | out buckets u32 LE | done u32 LE]` (the
/// merge in progress, with `MERGING`); absent when the partition is empty. Totals written before
/// chunks have `count u32 LE | count × (first batch u64 LE | level u8)` (every segment one block
/// per term).
pub const STATS_TREE: &str = "fts.stats";

/// The longest partition prefix accepted, so every key stays within the engine's key limit
/// (2 + 1024 + `MAX_TERM_BYTES` + 1 + 8 < 1536).
pub const MAX_PART_LEN: usize = 1024;
/// Terms are cut to at most this many bytes (at a character boundary), on indexing and querying alike.
pub const MAX_TERM_BYTES: usize = 240;

/// The encoded partition: `len u16 BE | part`.
pub fn part_prefix(part: &[u8]) -> Result<Vec<u8>> {
    if part.len() > MAX_PART_LEN {
        return Err(Error::InvalidArgument(format!(
            "full-text partition is {} bytes; at most {MAX_PART_LEN} are allowed",
            part.len()
        )));
    }
    let mut out = Vec::with_capacity(2 + part.len());
    // Fits: MAX_PART_LEN < u16::MAX.
    out.extend_from_slice(&(part.len() as u16).to_be_bytes());
    out.extend_from_slice(part);
    Ok(out)
}

/// `term` cut to `MAX_TERM_BYTES` at a character boundary, or `None` when it holds a NUL (the
/// terminator) or is empty. The tokenizer yields neither, but the layout must not depend on it.
pub fn clean_term(term: &str) -> Option<&str> {
    if term.is_empty() || term.contains('\0') {
        return None;
    }
    let mut end = term.len().min(MAX_TERM_BYTES);
    while !term.is_char_boundary(end) {
        end -= 1;
    }
    Some(&term[..end])
}

/// `prefix | segment`: the prefix of every posting block of a segment.
pub fn segment_prefix(prefix: &[u8], segment: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + 8 + 16);
    out.extend_from_slice(prefix);
    out.extend_from_slice(&segment.to_be_bytes());
    out
}

/// `prefix | segment | term 0x00`: the key of one posting block.
pub fn post_key(prefix: &[u8], segment: u64, term: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + 9 + term.len());
    out.extend_from_slice(prefix);
    out.extend_from_slice(&segment.to_be_bytes());
    out.extend_from_slice(term);
    out.push(0);
    out
}

/// The term of a posting key of the partition with encoded prefix `prefix`.
pub fn post_key_term<'k>(prefix: &[u8], key: &'k [u8]) -> Result<&'k [u8]> {
    match key.get(prefix.len() + 8..) {
        Some([term @ .., 0]) if !term.is_empty() => Ok(term),
        _ => Err(Error::corrupt(None, "full-text posting key is malformed")),
    }
}

/// The high bit of a count that marks the chunked layout (a count of the layout before never
/// reaches it).
pub const HASHED: u32 = 1 << 31;
/// The bit beside `HASHED` in the totals' segment count that says a merge is in progress and its
/// state follows the segments. A build before incremental merges reads the count as too large for
/// the value and refuses the totals as malformed: it never misreads a half-merged partition.
pub const MERGING: u32 = 1 << 30;

/// A term's hash, which picks its bucket in every chunked segment (`hash % buckets`) and is what
/// a passage record keeps of its terms. Part of the format: FNV-1a, folded to 16 bits.
pub fn term_hash(term: &[u8]) -> u16 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in term {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    // Truncation intended: the fold of both halves.
    ((h >> 16) ^ h) as u16
}

/// `prefix | segment | bucket`: the key of one chunk.
pub fn chunk_key(prefix: &[u8], segment: u64, bucket: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + 12);
    out.extend_from_slice(prefix);
    out.extend_from_slice(&segment.to_be_bytes());
    out.extend_from_slice(&bucket.to_be_bytes());
    out
}

/// The segment of a posting key of the partition with encoded prefix `prefix`.
pub fn post_key_segment(prefix: &[u8], key: &[u8]) -> Result<u64> {
    key.get(prefix.len()..prefix.len() + 8)
        .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(|| Error::corrupt(None, "full-text posting key is malformed"))
}

/// `prefix | doc`: the prefix of every passage of a document.
pub fn doc_prefix(prefix: &[u8], doc: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + 12);
    out.extend_from_slice(prefix);
    out.extend_from_slice(&doc.to_be_bytes());
    out
}

/// `prefix | doc | ordinal`.
pub fn doc_key(prefix: &[u8], doc: u64, ordinal: u32) -> Vec<u8> {
    let mut out = doc_prefix(prefix, doc);
    out.extend_from_slice(&ordinal.to_be_bytes());
    out
}

/// The `(doc, ordinal)` that end a passage key.
pub fn key_tail(key: &[u8]) -> Result<(u64, u32)> {
    let n = key.len();
    if n < 12 {
        return Err(Error::corrupt(None, "full-text key shorter than its doc and ordinal"));
    }
    let doc = u64::from_be_bytes(key[n - 12..n - 4].try_into().expect("8 bytes"));
    let ordinal = u32::from_be_bytes(key[n - 4..].try_into().expect("4 bytes"));
    Ok((doc, ordinal))
}

/// A passage's value: the batch that indexed it (its segment holds its postings), its token count
/// and the distinct hashes of its terms (ascending), which name the chunks holding its postings
/// in any segment.
pub fn encode_doc(batch: u64, len: u32, hashes: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + 2 * hashes.len());
    out.extend_from_slice(&batch.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    // Fits: at most 65,536 distinct hashes, far below HASHED.
    out.extend_from_slice(&(hashes.len() as u32 | HASHED).to_le_bytes());
    for h in hashes {
        out.extend_from_slice(&h.to_le_bytes());
    }
    out
}

/// A passage record, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassageRecord {
    pub batch: u64,
    pub len: u32,
    /// The distinct hashes of its terms, ascending (computed from `terms` for a record of the
    /// layout before chunks).
    pub hashes: Vec<u16>,
    /// Its distinct terms: only in a record of the layout before chunks, whose passage may still
    /// sit in a segment of one block per term.
    pub terms: Vec<String>,
}

/// Decodes a passage's value (either layout). Total: malformed bytes give `STORE_CORRUPT`,
/// never a panic.
pub fn decode_doc(value: &[u8]) -> Result<PassageRecord> {
    let bad = || Error::corrupt(None, "full-text passage record is malformed");
    let take = |at: usize, n: usize| value.get(at..at + n).ok_or_else(bad);
    let batch = u64::from_le_bytes(take(0, 8)?.try_into().expect("8 bytes"));
    let len = u32::from_le_bytes(take(8, 4)?.try_into().expect("4 bytes"));
    let count = u32::from_le_bytes(take(12, 4)?.try_into().expect("4 bytes"));
    if count & HASHED != 0 {
        let n = (count & !HASHED) as usize;
        if value.len() != 16 + 2 * n {
            return Err(bad());
        }
        let hashes: Vec<u16> =
            value[16..].chunks_exact(2).map(|c| u16::from_le_bytes(c.try_into().expect("2 bytes"))).collect();
        if hashes.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad());
        }
        return Ok(PassageRecord { batch, len, hashes, terms: Vec::new() });
    }
    let mut at = 16;
    let mut terms = Vec::new();
    for _ in 0..count {
        let n = u16::from_le_bytes(take(at, 2)?.try_into().expect("2 bytes")) as usize;
        let term = std::str::from_utf8(take(at + 2, n)?).map_err(|_| bad())?;
        terms.push(term.to_owned());
        at += 2 + n;
    }
    if at != value.len() {
        return Err(bad());
    }
    let mut hashes: Vec<u16> = terms.iter().map(|t| term_hash(t.as_bytes())).collect();
    hashes.sort_unstable();
    hashes.dedup();
    Ok(PassageRecord { batch, len, hashes, terms })
}

/// A run of consecutive indexing batches whose postings are stored together, one block per
/// term: from batch `first` to the next segment's first (or the partition's next batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub first: u64,
    /// 0 for one batch; a merge of `FANOUT` segments of level `l` has level `l + 1`.
    pub level: u8,
    /// How many chunks its terms are spread over (by `term_hash`); 0 for a segment of the layout
    /// before chunks, one block per term.
    pub buckets: u32,
}

impl Segment {
    /// The key under which this segment keeps `term`'s postings, and whether its value is a chunk
    /// (else a block of that term alone).
    pub fn key_of(&self, prefix: &[u8], term: &[u8]) -> (Vec<u8>, bool) {
        if self.buckets == 0 {
            (post_key(prefix, self.first, term), false)
        } else {
            (chunk_key(prefix, self.first, self.bucket(term_hash(term))), true)
        }
    }

    /// The bucket of terms with hash `hash` (in a chunked segment).
    pub fn bucket(&self, hash: u16) -> u32 {
        u32::from(hash) % self.buckets.max(1)
    }
}

/// A merge in progress of the nested segments `segments[start..start + inputs]` (one level, every
/// bucket count a power of two) into one segment of the next level named by the first of them,
/// class by class across transactions. Class `c` is every bucket `b ≡ c (mod classes)` of every
/// input; classes `[0, done)` are in the output's chunks (keyed by the first input's number), the
/// others still in the inputs' chunks, so each posting is in exactly one chunk at every moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merge {
    pub start: u32,
    pub inputs: u32,
    /// A power of two; an input with fewer buckets is re-bucketed to `classes` before class 0.
    pub classes: u32,
    /// The output's bucket count (a power of two, at least `classes`), decided by the step that
    /// merges class 0; 0 before it.
    pub out_buckets: u32,
    pub done: u32,
}

impl Merge {
    /// The inputs' places in `segments`.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.inputs) as usize
    }

    /// Whether terms of hash `hash` are in the output already.
    pub fn is_done(&self, hash: u16) -> bool {
        u32::from(hash) % self.classes < self.done
    }
}

/// A partition's totals and segments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stats {
    pub passages: u64,
    pub tokens: u64,
    /// The id the next indexing batch takes (and the segment it writes). Ids restart when a
    /// partition empties, which is safe: no posting of it is left.
    pub next_batch: u64,
    /// Oldest first; their batch runs are consecutive and cover every batch below `next_batch`.
    pub segments: Vec<Segment>,
    /// The merge in progress, at most one.
    pub merge: Option<Merge>,
}

impl Stats {
    /// The place in `segments` of the segment holding the postings written by batch `batch`.
    pub fn segment_at(&self, batch: u64) -> Result<usize> {
        let at = self.segments.partition_point(|s| s.first <= batch);
        match at.checked_sub(1) {
            Some(i) if batch < self.next_batch => Ok(i),
            _ => Err(Error::corrupt(None, format!("full-text batch {batch} is in no segment"))),
        }
    }

    /// The segment the merge in progress writes: its chunks hold the classes done.
    pub fn merge_output(&self, m: &Merge) -> Segment {
        let first = &self.segments[m.start as usize];
        Segment { first: first.first, level: first.level + 1, buckets: m.out_buckets }
    }

    /// Where the postings of hash `hash` of the segment at place `at` are now: that segment's own
    /// chunk, or, when it is an input of the merge in progress and the hash's class is done, the
    /// output's. The segment returned is the one whose layout the key follows.
    pub fn holder(&self, at: usize, hash: u16) -> Segment {
        match &self.merge {
            Some(m) if m.range().contains(&at) && m.is_done(hash) => self.merge_output(m),
            _ => self.segments[at],
        }
    }

    /// The keys to read for `term`'s postings, each with whether its value is a chunk: one per
    /// segment, but one for all the inputs of the merge in progress whose class of the term is
    /// done (the output's chunk). No posting is under two of them, and none under another key.
    pub fn term_keys(&self, prefix: &[u8], term: &[u8]) -> Vec<(Vec<u8>, bool)> {
        let merged = self.merge.filter(|m| m.is_done(term_hash(term))).map(|m| m.range());
        let mut out = Vec::with_capacity(self.segments.len());
        for (i, seg) in self.segments.iter().enumerate() {
            match &merged {
                Some(inputs) if inputs.contains(&i) => {
                    if i == inputs.start {
                        out.push(self.merge_output(self.merge.as_ref().expect("merging")).key_of(prefix, term));
                    }
                }
                _ => out.push(seg.key_of(prefix, term)),
            }
        }
        out
    }
}

/// `passages u64 LE | tokens u64 LE | next batch u64 LE | (count | HASHED [| MERGING]) u32 LE |
/// count × (first u64 LE | level u8 | buckets u32 LE) [| start u32 LE | inputs u32 LE | classes
/// u32 LE | out buckets u32 LE | done u32 LE]`.
pub fn encode_stats(s: &Stats) -> Vec<u8> {
    let mut out = Vec::with_capacity(28 + 13 * s.segments.len() + 20);
    out.extend_from_slice(&s.passages.to_le_bytes());
    out.extend_from_slice(&s.tokens.to_le_bytes());
    out.extend_from_slice(&s.next_batch.to_le_bytes());
    // Fits: merging keeps a partition to a few dozen segments.
    let flags = if s.merge.is_some() { HASHED | MERGING } else { HASHED };
    out.extend_from_slice(&(s.segments.len() as u32 | flags).to_le_bytes());
    for seg in &s.segments {
        out.extend_from_slice(&seg.first.to_le_bytes());
        out.push(seg.level);
        out.extend_from_slice(&seg.buckets.to_le_bytes());
    }
    if let Some(m) = &s.merge {
        for word in [m.start, m.inputs, m.classes, m.out_buckets, m.done] {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    out
}

/// Decodes a partition's totals (either layout), checking that the segments are in order below
/// the next batch and that a merge in progress names a run of nested segments it can finish.
pub fn decode_stats(value: &[u8]) -> Result<Stats> {
    let bad = || Error::corrupt(None, "full-text stats are malformed");
    let word = |at: usize| value.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let (passages, tokens, next_batch) =
        (word(0).ok_or_else(bad)?, word(8).ok_or_else(bad)?, word(16).ok_or_else(bad)?);
    let count = value.get(24..28).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).ok_or_else(bad)?;
    let (width, merging) = match (count & HASHED != 0, count & MERGING != 0) {
        (false, false) => (9, false),
        (true, merging) => (13, merging),
        // A merge in progress exists only in the chunked layout.
        (false, true) => return Err(bad()),
    };
    let n = (count & !(HASHED | MERGING)) as usize;
    let end = 28 + width * n;
    if value.len() != end + if merging { 20 } else { 0 } {
        return Err(bad());
    }
    let segments: Vec<Segment> = value[28..end]
        .chunks_exact(width)
        .map(|c| Segment {
            first: u64::from_le_bytes(c[..8].try_into().expect("8 bytes")),
            level: c[8],
            buckets: c.get(9..13).map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes"))),
        })
        .collect();
    if segments.windows(2).any(|w| w[0].first >= w[1].first) || segments.last().is_some_and(|s| s.first >= next_batch) {
        return Err(bad());
    }
    let merge = if merging {
        let w: Vec<u32> =
            value[end..].chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
        let m = Merge { start: w[0], inputs: w[1], classes: w[2], out_buckets: w[3], done: w[4] };
        if !merge_is_sound(&segments, &m) {
            return Err(bad());
        }
        Some(m)
    } else {
        None
    };
    Ok(Stats { passages, tokens, next_batch, segments, merge })
}

/// Whether `m` can be a merge in progress over `segments`: at least two inputs, all there, of one
/// level below the last, nested (powers of two), every one re-bucketed to at least `classes` once
/// a class is done, `done` below `classes`, and the output's count set exactly when a class is done.
fn merge_is_sound(segments: &[Segment], m: &Merge) -> bool {
    let Some(inputs) = m.start.checked_add(m.inputs).and_then(|end| segments.get(m.start as usize..end as usize))
    else {
        return false;
    };
    let pow2 = |n: u32| n.is_power_of_two() && n <= 1 << 16;
    inputs.len() >= 2
        && inputs
            .iter()
            .all(|s| s.level == inputs[0].level && pow2(s.buckets) && (m.done == 0 || s.buckets >= m.classes))
        && inputs[0].level < u8::MAX
        && pow2(m.classes)
        && m.done < m.classes
        && if m.done == 0 { m.out_buckets == 0 } else { pow2(m.out_buckets) && m.out_buckets >= m.classes }
}

/// The least key greater than every key starting with `prefix`, or `None` when there is none.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}
