//! Byte layout of the full-text trees. Every key starts with the encoded partition
//! `len u16 BE | part`, so two partitions never share a key prefix; terms end in `0x00`, so a term's
//! keys are never a prefix of a longer term's keys. Integers in keys are big-endian (they sort
//! numerically); integers in values are little-endian. `docs/design/fts.md` draws the layout.

use crate::{Error, Result};

/// Postings: `part | term 0x00 | block u64 BE` → a posting block (`block.rs`): the term's postings
/// from one indexing batch.
pub const POST_TREE: &str = "fts.post";
/// Passages: `part | doc u64 BE | ordinal u32 BE` →
/// `block u64 LE | length u32 LE | count u32 LE | (len u16 LE | term)*`.
pub const DOC_TREE: &str = "fts.doc";
/// Partition totals: `part` → `passages u64 LE | tokens u64 LE | next block u64 LE`; absent when
/// the partition is empty.
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

/// `prefix | term 0x00`: the prefix of every posting of `term`.
pub fn term_prefix(prefix: &[u8], term: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + term.len() + 13);
    out.extend_from_slice(prefix);
    out.extend_from_slice(term.as_bytes());
    out.push(0);
    out
}

/// `prefix | term 0x00 | block`: the key of one posting block.
pub fn post_key(prefix: &[u8], term: &str, block: u64) -> Vec<u8> {
    let mut out = term_prefix(prefix, term);
    out.extend_from_slice(&block.to_be_bytes());
    out
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

/// A passage's value: the block holding its postings, its token count and its distinct terms.
pub fn encode_doc(block: u64, len: u32, terms: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + terms.iter().map(|t| 2 + t.len()).sum::<usize>());
    out.extend_from_slice(&block.to_le_bytes());
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
    pub block: u64,
    pub len: u32,
    pub terms: Vec<String>,
}

/// Decodes a passage's value. Total: malformed bytes give `STORE_CORRUPT`, never a panic.
pub fn decode_doc(value: &[u8]) -> Result<PassageRecord> {
    let bad = || Error::corrupt(None, "full-text passage record is malformed");
    let take = |at: usize, n: usize| value.get(at..at + n).ok_or_else(bad);
    let block = u64::from_le_bytes(take(0, 8)?.try_into().expect("8 bytes"));
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
    Ok(PassageRecord { block, len, terms })
}

/// A partition's totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub passages: u64,
    pub tokens: u64,
    /// The id the next indexing batch gives its blocks. Ids restart when a partition empties,
    /// which is safe: no block of it is left.
    pub next_block: u64,
}

/// `passages u64 LE | tokens u64 LE | next block u64 LE`.
pub fn encode_stats(s: Stats) -> [u8; 24] {
    let mut out = [0; 24];
    out[..8].copy_from_slice(&s.passages.to_le_bytes());
    out[8..16].copy_from_slice(&s.tokens.to_le_bytes());
    out[16..].copy_from_slice(&s.next_block.to_le_bytes());
    out
}

/// Decodes a partition's totals.
pub fn decode_stats(value: &[u8]) -> Result<Stats> {
    let bytes: [u8; 24] = value.try_into().map_err(|_| Error::corrupt(None, "full-text stats are not 24 bytes"))?;
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    Ok(Stats { passages: word(0), tokens: word(8), next_block: word(16) })
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
