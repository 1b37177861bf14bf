//! Posting blocks: the postings of one term from one indexing batch, packed into one value.
//! A batch of passages writes one key per distinct term instead of one per (term, passage), and a
//! posting costs a few bytes instead of a whole leaf cell, which is what makes ingest fast.
//!
//! Value: `count varint | count × (doc delta varint | ordinal varint | tf varint | length varint)`,
//! postings in ascending `(doc, ordinal)`; the first doc delta is from 0, each later one from the
//! previous posting's doc (0 when two passages share a document).

use crate::{Error, Result};

/// One passage holding a term: where it is, how often the term occurs there, and the passage's
/// length in tokens (so scoring needs no lookup per hit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Posting {
    pub doc: u64,
    pub ordinal: u32,
    pub tf: u32,
    pub len: u32,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // Truncation intended: the low 7 bits with the continuation bit.
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bad() -> Error {
    Error::corrupt(None, "a full-text posting block is malformed")
}

/// Reads a varint at `*at`, advancing it.
fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at).ok_or_else(bad)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(bad())
}

fn get_u32(bytes: &[u8], at: &mut usize) -> Result<u32> {
    u32::try_from(get_varint(bytes, at)?).map_err(|_| bad())
}

/// Encodes postings sorted by `(doc, ordinal)`, each place once.
pub fn encode(postings: &[Posting]) -> Vec<u8> {
    debug_assert!(postings.windows(2).all(|w| (w[0].doc, w[0].ordinal) < (w[1].doc, w[1].ordinal)));
    let mut out = Vec::with_capacity(2 + postings.len() * 5);
    put_varint(&mut out, postings.len() as u64);
    let mut prev = 0;
    for p in postings {
        put_varint(&mut out, p.doc - prev);
        put_varint(&mut out, u64::from(p.ordinal));
        put_varint(&mut out, u64::from(p.tf));
        put_varint(&mut out, u64::from(p.len));
        prev = p.doc;
    }
    out
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

/// Whether a block's postings are in ascending `(doc, ordinal)`, each place once.
pub fn sorted(postings: &[Posting]) -> bool {
    postings.windows(2).all(|w| (w[0].doc, w[0].ordinal) < (w[1].doc, w[1].ordinal))
}

/// A chunk: the blocks of many terms of one segment, packed into one value, so writing or merging a
/// segment puts a few dozen values instead of one key per term (as FTS5's leaves do).
/// Value: `count varint | count × (term length varint | term | block length varint | block)`,
/// terms strictly ascending.
pub fn encode_chunk<'a>(entries: impl ExactSizeIterator<Item = (&'a [u8], &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, entries.len() as u64);
    for (term, block) in entries {
        put_varint(&mut out, term.len() as u64);
        out.extend_from_slice(term);
        put_varint(&mut out, block.len() as u64);
        out.extend_from_slice(block);
    }
    out
}

/// Reads the entry at `*at` of a chunk: (term, block).
fn chunk_entry<'a>(bytes: &'a [u8], at: &mut usize) -> Result<(&'a [u8], &'a [u8])> {
    let take = |at: &mut usize| -> Result<&'a [u8]> {
        let n = usize::try_from(get_varint(bytes, at)?).map_err(|_| bad())?;
        let end = at.checked_add(n).ok_or_else(bad)?;
        let out = bytes.get(*at..end).ok_or_else(bad)?;
        *at = end;
        Ok(out)
    };
    let term = take(at)?;
    let block = take(at)?;
    Ok((term, block))
}

/// Every (term, block) of a chunk, in term order. Total: malformed bytes (or terms out of
/// order) give `STORE_CORRUPT`, never a panic.
pub fn chunk_entries(bytes: &[u8]) -> Result<Vec<(&[u8], &[u8])>> {
    let mut at = 0;
    let n = get_varint(bytes, &mut at)?;
    // Each entry takes at least 3 bytes: a count beyond that is damage, not a size to reserve.
    if n > (bytes.len() / 3) as u64 {
        return Err(bad());
    }
    let mut out: Vec<(&[u8], &[u8])> = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (term, block) = chunk_entry(bytes, &mut at)?;
        if term.is_empty() || out.last().is_some_and(|(last, _)| *last >= term) {
            return Err(bad());
        }
        out.push((term, block));
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
        let (t, block) = chunk_entry(bytes, &mut at)?;
        match t.cmp(term) {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Equal => return Ok(Some(block)),
            std::cmp::Ordering::Greater => return Ok(None),
        }
    }
    Ok(None)
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
        let entries: Vec<(&[u8], &[u8])> = vec![(b"apple", &a), (b"pear", &b)];
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
        let unordered = encode_chunk([(&b"pear"[..], b.as_slice()), (&b"apple"[..], a.as_slice())].into_iter());
        assert!(chunk_entries(&unordered).is_err());
        assert!(chunk_entries(&[0xff; 9]).is_err());
        assert!(chunk_entries(&[]).is_err());
        assert!(chunk_entries(&encode_chunk(std::iter::empty())).unwrap().is_empty());
    }
}
