//! Posting blocks: the postings of one term from one indexing batch, packed into one value.
//! A batch of passages writes one key per distinct term instead of one per (term, passage), and a
//! posting costs a few bytes instead of a whole leaf cell, which is what makes ingest fast.
//!
//! Value: `count varint | count × (doc delta varint | ordinal varint | tf varint | length varint)`,
//! postings in ascending `(doc, ordinal)`; the first doc delta is from 0, each later one from the
//! previous posting's doc (0 when two passages share a document).

use crate::varint;
use crate::{Error, Result};

/// One passage holding a term: where it is, how often the term occurs there, and the passage's
/// length in tokens (so scoring needs no lookup per hit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Posting {
    pub doc: u64,
    pub ordinal: u32,
    pub tf: u32,
    pub len: u32,
}

fn bad() -> Error {
    Error::corrupt(None, "a full-text posting block is malformed")
}

/// Reads a varint at `*at`, advancing it.
fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64> {
    varint::get(bytes, at, "a full-text posting block")
}

fn get_u32(bytes: &[u8], at: &mut usize) -> Result<u32> {
    u32::try_from(get_varint(bytes, at)?).map_err(|_| bad())
}

/// Encodes postings sorted by `(doc, ordinal)`, each place once.
pub fn encode(postings: &[Posting]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + postings.len() * 5);
    encode_into(postings, &mut out);
    out
}

/// Encodes postings sorted by `(doc, ordinal)`, each place once, appending to `out` (one buffer
/// for a whole segment's blocks).
pub fn encode_into(postings: &[Posting], out: &mut Vec<u8>) {
    debug_assert!(postings.windows(2).all(|w| (w[0].doc, w[0].ordinal) < (w[1].doc, w[1].ordinal)));
    varint::put(out, postings.len() as u64);
    let mut prev = 0;
    for p in postings {
        varint::put(out, p.doc - prev);
        varint::put(out, u64::from(p.ordinal));
        varint::put(out, u64::from(p.tf));
        varint::put(out, u64::from(p.len));
        prev = p.doc;
    }
}

/// How many postings a block holds, read from its first bytes only.
pub fn count(bytes: &[u8]) -> Result<usize> {
    usize::try_from(get_varint(bytes, &mut 0)?).map_err(|_| bad())
}

/// Decodes a block, appending its postings to `out`. Total: malformed bytes give
/// `STORE_CORRUPT`, never a panic.
pub fn decode_into(bytes: &[u8], out: &mut Vec<Posting>) -> Result<()> {
    let mut at = 0;
    let n = get_varint(bytes, &mut at)?;
    // Each posting takes at least 4 bytes: a count beyond that is damage, not a size to reserve.
    if n > (bytes.len() / 4) as u64 {
        return Err(bad());
    }
    let mut doc: u64 = 0;
    for _ in 0..n {
        doc = doc.checked_add(get_varint(bytes, &mut at)?).ok_or_else(bad)?;
        let ordinal = get_u32(bytes, &mut at)?;
        let tf = get_u32(bytes, &mut at)?;
        let len = get_u32(bytes, &mut at)?;
        out.push(Posting { doc, ordinal, tf, len });
    }
    if at != bytes.len() {
        return Err(bad());
    }
    Ok(())
}

/// One term's block in a chunk, with the doc of its last posting (so merging can chain blocks
/// without decoding them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    pub term: &'a [u8],
    pub last: u64,
    pub block: &'a [u8],
}

/// A chunk: the blocks of many terms of one segment, packed into one value, so writing or merging a
/// segment puts a few dozen values instead of one key per term (as FTS5's leaves do).
/// Value: `count varint | count × (term length varint | term | last doc varint | block length
/// varint | block)`, terms strictly ascending.
pub fn encode_chunk<'a>(entries: impl ExactSizeIterator<Item = Entry<'a>> + Clone) -> Vec<u8> {
    // Sized first (each entry's lengths and last doc take at most 30 bytes of varints), so the
    // chunk is one allocation.
    let size: usize = entries.clone().map(|e| e.term.len() + e.block.len() + 30).sum();
    let mut out = Vec::with_capacity(size + 10);
    varint::put(&mut out, entries.len() as u64);
    for e in entries {
        varint::put(&mut out, e.term.len() as u64);
        out.extend_from_slice(e.term);
        varint::put(&mut out, e.last);
        varint::put(&mut out, e.block.len() as u64);
        out.extend_from_slice(e.block);
    }
    out
}

/// Reads the entry at `*at` of a chunk.
fn chunk_entry<'a>(bytes: &'a [u8], at: &mut usize) -> Result<Entry<'a>> {
    let take = |at: &mut usize| -> Result<&'a [u8]> {
        let n = usize::try_from(get_varint(bytes, at)?).map_err(|_| bad())?;
        let end = at.checked_add(n).ok_or_else(bad)?;
        let out = bytes.get(*at..end).ok_or_else(bad)?;
        *at = end;
        Ok(out)
    };
    let term = take(at)?;
    let last = get_varint(bytes, at)?;
    let block = take(at)?;
    Ok(Entry { term, last, block })
}

/// Every entry of a chunk, in term order. Total: malformed bytes (or terms out of order) give
/// `STORE_CORRUPT`, never a panic.
pub fn chunk_entries(bytes: &[u8]) -> Result<Vec<Entry<'_>>> {
    let mut at = 0;
    let n = get_varint(bytes, &mut at)?;
    // Each entry takes at least 4 bytes: a count beyond that is damage, not a size to reserve.
    if n > (bytes.len() / 4) as u64 {
        return Err(bad());
    }
    let mut out: Vec<Entry<'_>> = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let e = chunk_entry(bytes, &mut at)?;
        if e.term.is_empty() || out.last().is_some_and(|last| last.term >= e.term) {
            return Err(bad());
        }
        out.push(e);
    }
    if at != bytes.len() {
        return Err(bad());
    }
    Ok(out)
}

/// The block of `term` in a chunk, if it holds one (a scan that stops past the term).
pub fn find_in_chunk<'a>(bytes: &'a [u8], term: &[u8]) -> Result<Option<&'a [u8]>> {
    let mut at = 0;
    let n = get_varint(bytes, &mut at)?;
    for _ in 0..n {
        let e = chunk_entry(bytes, &mut at)?;
        match e.term.cmp(term) {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Equal => return Ok(Some(e.block)),
            std::cmp::Ordering::Greater => return Ok(None),
        }
    }
    Ok(None)
}

/// Appends the blocks `parts` (with their last docs), in order, to `out` as one block, without
/// decoding them: possible when each block's first doc is past the last doc of the one before
/// (the usual case when merging segments, whose batches took increasing doc ids), so only the
/// first delta of each changes. `false` (and `out` unchanged) when they do not chain (a
/// re-indexed passage keeps its old doc).
pub fn concat_into(parts: &[(u64, &[u8])], out: &mut Vec<u8>) -> Result<bool> {
    // Per part: (posting count, offset of its first delta, first doc, offset after it).
    let mut heads = Vec::with_capacity(parts.len());
    let mut total: u64 = 0;
    let mut size = 10;
    for (i, &(_, block)) in parts.iter().enumerate() {
        let mut at = 0;
        let n = get_varint(block, &mut at)?;
        let body = at;
        let first = get_varint(block, &mut at)?;
        if i > 0 && first <= parts[i - 1].0 {
            return Ok(false);
        }
        total = total.checked_add(n).ok_or_else(bad)?;
        size += block.len();
        heads.push((body, first, at));
    }
    out.reserve(size);
    varint::put(out, total);
    for (i, (&(_, block), &(body, first, after))) in parts.iter().zip(&heads).enumerate() {
        if i == 0 {
            out.extend_from_slice(&block[body..]);
        } else {
            varint::put(out, first - parts[i - 1].0);
            out.extend_from_slice(&block[after..]);
        }
    }
    Ok(true)
}

/// Appends `block` with every posting's doc raised by `base`: only the first delta (from 0)
/// changes, the others are differences. A block laid out with a batch's local doc numbers
/// (`Indexer::prepare`) becomes the block of the docs the transaction assigned.
pub fn rebase_into(block: &[u8], base: u64, out: &mut Vec<u8>) -> Result<()> {
    let mut at = 0;
    let n = get_varint(block, &mut at)?;
    let first = get_varint(block, &mut at)?;
    varint::put(out, n);
    varint::put(out, first.checked_add(base).ok_or_else(bad)?);
    out.extend_from_slice(&block[at..]);
    Ok(())
}

/// Decodes a block.
pub fn decode(bytes: &[u8]) -> Result<Vec<Posting>> {
    let mut out = Vec::new();
    decode_into(bytes, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rebased_block_is_the_block_of_the_raised_docs() {
        let local = [Posting { doc: 0, ordinal: 0, tf: 2, len: 9 }, Posting { doc: 3, ordinal: 1, tf: 1, len: 4 }];
        let raised: Vec<Posting> = local.iter().map(|p| Posting { doc: p.doc + 1_000, ..*p }).collect();
        let mut out = Vec::new();
        rebase_into(&encode(&local), 1_000, &mut out).unwrap();
        assert_eq!(out, encode(&raised));
        assert!(rebase_into(&[], 1, &mut Vec::new()).is_err());
    }

    #[test]
    fn blocks_round_trip_and_reject_garbage() {
        let postings = vec![
            Posting { doc: 3, ordinal: 0, tf: 1, len: 120 },
            Posting { doc: 3, ordinal: 7, tf: 2, len: 90 },
            Posting { doc: u64::MAX, ordinal: u32::MAX, tf: u32::MAX, len: 0 },
        ];
        let bytes = encode(&postings);
        assert_eq!(decode(&bytes).unwrap(), postings);
        assert_eq!(count(&bytes).unwrap(), 3);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "a block cut at {cut} decodes");
        }
        assert!(decode(&[bytes.as_slice(), &[0]].concat()).is_err());
        assert!(decode(&[0xff; 12]).is_err());
        assert_eq!(decode(&encode(&[])).unwrap(), Vec::new());
    }

    #[test]
    fn chunks_round_trip_find_their_terms_and_reject_garbage() {
        let a = encode(&[Posting { doc: 1, ordinal: 0, tf: 1, len: 3 }]);
        let b = encode(&[Posting { doc: 2, ordinal: 1, tf: 2, len: 5 }, Posting { doc: 9, ordinal: 0, tf: 1, len: 1 }]);
        let entries = vec![Entry { term: b"apple", last: 1, block: &a }, Entry { term: b"pear", last: 9, block: &b }];
        let chunk = encode_chunk(entries.iter().copied());
        assert_eq!(chunk_entries(&chunk).unwrap(), entries);
        assert_eq!(find_in_chunk(&chunk, b"pear").unwrap(), Some(b.as_slice()));
        assert_eq!(find_in_chunk(&chunk, b"apple").unwrap(), Some(a.as_slice()));
        for absent in [&b"a"[..], b"banana", b"zebra", b"pea"] {
            assert_eq!(find_in_chunk(&chunk, absent).unwrap(), None);
        }
        for cut in 0..chunk.len() {
            assert!(chunk_entries(&chunk[..cut]).is_err(), "a chunk cut at {cut} decodes");
        }
        let unordered = encode_chunk([entries[1], entries[0]].into_iter());
        assert!(chunk_entries(&unordered).is_err());
        assert!(chunk_entries(&[0xff; 9]).is_err());
        assert!(chunk_entries(&[]).is_err());
        assert!(chunk_entries(&encode_chunk(std::iter::empty())).unwrap().is_empty());
    }

    #[test]
    fn blocks_that_chain_concatenate_to_their_union() {
        let p = |doc: u64, ordinal: u32| Posting { doc, ordinal, tf: 1 + ordinal, len: 7 };
        let a = vec![p(3, 0), p(3, 2), p(200, 1)];
        let b = vec![p(201, 0)];
        let c = vec![p(1_000_000, 4), p(1_000_001, 0)];
        let (ea, eb, ec) = (encode(&a), encode(&b), encode(&c));
        let concat = |parts: &[(u64, &[u8])]| {
            let mut out = vec![7];
            concat_into(parts, &mut out).unwrap().then(|| out[1..].to_vec()).or_else(|| {
                assert_eq!(out, [7], "a refused concatenation leaves the buffer as it was");
                None
            })
        };
        let joined = concat(&[(200, &ea), (201, &eb), (1_000_001, &ec)]).unwrap();
        assert_eq!(decode(&joined).unwrap(), [a.clone(), b.clone(), c].concat());
        assert_eq!(concat(&[(200, &ea)]).unwrap(), ea);
        // A block starting at or before the doc the previous one ends on does not chain.
        let back = encode(&[p(200, 5)]);
        assert_eq!(concat(&[(200, &ea), (200, &back)]), None);
        assert_eq!(concat(&[(201, &eb), (200, &ea)]), None);
    }
}
