//! Byte layout of the full-text trees. Every key starts with the encoded partition
//! `len u16 BE | part`, so two partitions never share a key prefix; terms end in `0x00`, so a term's
//! keys are never a prefix of a longer term's keys. Integers in keys are big-endian (they sort
//! numerically); integers in values are little-endian. `docs/design/fts.md` draws the layout.

use crate::{Error, Result};

/// Postings: `part | segment u64 BE | term 0x00` → a posting block (`block.rs`): the term's
/// postings from one segment (a run of consecutive indexing batches, named by its first).
/// Segment-major, so a new batch's blocks land together after every older segment.
pub const POST_TREE: &str = "fts.post";
/// Passages: `part | doc u64 BE | ordinal u32 BE` →
/// `batch u64 LE | length u32 LE | count u32 LE | (len u16 LE | term)*`.
pub const DOC_TREE: &str = "fts.doc";
/// Partition totals and segments: `part` → `passages u64 LE | tokens u64 LE | next batch u64 LE |
/// count u32 LE | count × (first batch u64 LE | level u8)`; absent when the partition is empty.
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
/// and its distinct terms.
pub fn encode_doc(batch: u64, len: u32, terms: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + terms.iter().map(|t| 2 + t.len()).sum::<usize>());
    out.extend_from_slice(&batch.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    // Fits: a passage's distinct terms are at most its tokens, counted in u32.
    out.extend_from_slice(&(terms.len() as u32).to_le_bytes());
    for term in terms {
        // Fits: terms are at most MAX_TERM_BYTES long.
        out.extend_from_slice(&(term.len() as u16).to_le_bytes());
        out.extend_from_slice(term.as_bytes());
    }
    out
}

/// A passage record, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassageRecord {
    pub batch: u64,
    pub len: u32,
    pub terms: Vec<String>,
}

/// Decodes a passage's value. Total: malformed bytes give `STORE_CORRUPT`, never a panic.
pub fn decode_doc(value: &[u8]) -> Result<PassageRecord> {
    let bad = || Error::corrupt(None, "full-text passage record is malformed");
    let take = |at: usize, n: usize| value.get(at..at + n).ok_or_else(bad);
    let batch = u64::from_le_bytes(take(0, 8)?.try_into().expect("8 bytes"));
    let len = u32::from_le_bytes(take(8, 4)?.try_into().expect("4 bytes"));
    let count = u32::from_le_bytes(take(12, 4)?.try_into().expect("4 bytes"));
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
    Ok(PassageRecord { batch, len, terms })
}

/// A run of consecutive indexing batches whose postings are stored together, one block per
/// term: from batch `first` to the next segment's first (or the partition's next batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub first: u64,
    /// 0 for one batch; a merge of `FANOUT` segments of level `l` has level `l + 1`.
    pub level: u8,
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
}

impl Stats {
    /// The segment holding the postings written by batch `batch`.
    pub fn segment_of(&self, batch: u64) -> Result<u64> {
        let at = self.segments.partition_point(|s| s.first <= batch);
        match at.checked_sub(1) {
            Some(i) if batch < self.next_batch => Ok(self.segments[i].first),
            _ => Err(Error::corrupt(None, format!("full-text batch {batch} is in no segment"))),
        }
    }
}

/// `passages u64 LE | tokens u64 LE | next batch u64 LE | count u32 LE | count × (first u64 LE | level u8)`.
pub fn encode_stats(s: &Stats) -> Vec<u8> {
    let mut out = Vec::with_capacity(28 + 9 * s.segments.len());
    out.extend_from_slice(&s.passages.to_le_bytes());
    out.extend_from_slice(&s.tokens.to_le_bytes());
    out.extend_from_slice(&s.next_batch.to_le_bytes());
    // Fits: merging keeps a partition to a few dozen segments.
    out.extend_from_slice(&(s.segments.len() as u32).to_le_bytes());
    for seg in &s.segments {
        out.extend_from_slice(&seg.first.to_le_bytes());
        out.push(seg.level);
    }
    out
}

/// Decodes a partition's totals, checking that the segments are in order below the next batch.
pub fn decode_stats(value: &[u8]) -> Result<Stats> {
    let bad = || Error::corrupt(None, "full-text stats are malformed");
    let word = |at: usize| value.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let (passages, tokens, next_batch) =
        (word(0).ok_or_else(bad)?, word(8).ok_or_else(bad)?, word(16).ok_or_else(bad)?);
    let count = value.get(24..28).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).ok_or_else(bad)?;
    if value.len() != 28 + 9 * count as usize {
        return Err(bad());
    }
    let segments: Vec<Segment> = value[28..]
        .chunks_exact(9)
        .map(|c| Segment { first: u64::from_le_bytes(c[..8].try_into().expect("8 bytes")), level: c[8] })
        .collect();
    if segments.windows(2).any(|w| w[0].first >= w[1].first) || segments.last().is_some_and(|s| s.first >= next_batch) {
        return Err(bad());
    }
    Ok(Stats { passages, tokens, next_batch, segments })
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
