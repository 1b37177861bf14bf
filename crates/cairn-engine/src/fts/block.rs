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
}
