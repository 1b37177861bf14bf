//! Posting blocks of the notes index: the entries of up to 128 consecutive note ids packed into
//! one value, keyed by the ids' block (`id >> 7`). A common word's postings are then a few dozen
//! values that a query decodes byte by byte, instead of thousands of B-tree cells, and a note's
//! id (which it keeps across versions) says which block holds its entry, so a write finds it
//! with one lookup.
//!
//! Value: entries ascending by slot (`id & 127`), each `slot u8 | payload length varint |
//! payload`. What the payload holds is the tree's business (`index.rs`).

use crate::error::{Error, Result};
use crate::varint;
use crate::write::WriteTxn;

/// Bits of a note id that pick its slot in a block.
pub(crate) const BLOCK_BITS: u32 = 7;
const SLOT_MASK: u64 = (1 << BLOCK_BITS) - 1;

/// The block of a note id, big-endian (key order is id order).
pub(crate) fn block_of(id: u64) -> [u8; 8] {
    (id >> BLOCK_BITS).to_be_bytes()
}

/// The slot of a note id in its block.
pub(crate) fn slot_of(id: u64) -> u8 {
    u8::try_from(id & SLOT_MASK).expect("seven bits")
}

/// The block number in the last eight bytes of a posting key.
pub(crate) fn block_at(key: &[u8]) -> Result<u64> {
    let at = key.len().checked_sub(8).ok_or_else(|| damaged("key"))?;
    Ok(u64::from_be_bytes(key[at..].try_into().expect("8 bytes")))
}

/// The note id of `slot` in block number `block`.
pub(crate) fn id_in(block: u64, slot: u8) -> u64 {
    (block << BLOCK_BITS) | u64::from(slot)
}

/// The slots present in a block value, as bits.
pub(crate) fn slots(value: &[u8]) -> Result<u128> {
    let mut bits = 0u128;
    let mut at = 0;
    // Trigram postings carry no payload: `slot 0` pairs, read without the general decoder.
    while let [slot, 0, ..] = value[at..] {
        bits |= 1u128 << (slot & 127);
        at += 2;
    }
    for entry in entries(&value[at..]) {
        bits |= 1u128 << (entry?.0 & 127);
    }
    Ok(bits)
}

fn damaged(what: &str) -> Error {
    Error::corrupt(None, format!("a notes posting block's {what} is damaged"))
}

/// The entries of a block value, in slot order.
pub(crate) fn entries(value: &[u8]) -> Entries<'_> {
    Entries { value, at: 0 }
}

/// Iterator over `(slot, payload)`.
pub(crate) struct Entries<'a> {
    value: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<(u8, &'a [u8])>;

    fn next(&mut self) -> Option<Self::Item> {
        let &slot = self.value.get(self.at)?;
        self.at += 1;
        let entry = varint::get(self.value, &mut self.at, "notes posting block")
            .and_then(|n| usize::try_from(n).map_err(|_| damaged("length")))
            .and_then(|n| {
                let end = self.at.checked_add(n).filter(|&e| e <= self.value.len()).ok_or_else(|| damaged("entry"))?;
                let payload = &self.value[self.at..end];
                self.at = end;
                Ok((slot, payload))
            });
        if entry.is_err() {
            // Stop after reporting: the rest of a damaged value cannot be trusted.
            self.at = self.value.len();
        }
        Some(entry)
    }
}

fn push(out: &mut Vec<u8>, slot: u8, payload: &[u8]) {
    out.push(slot);
    varint::put(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// Sets (`Some`) or removes (`None`) the entry of `id` in the block at `key` of `tree`; a block
/// left empty is deleted.
pub(crate) fn set(tx: &mut WriteTxn<'_>, tree: &str, key: &[u8], id: u64, payload: Option<&[u8]>) -> Result<()> {
    let slot = slot_of(id);
    let old = tx.get(tree, key)?.unwrap_or_default();
    let mut out = Vec::with_capacity(old.len() + payload.map_or(0, |p| p.len() + 2));
    let mut placed = payload.is_none();
    for entry in entries(&old) {
        let (s, p) = entry?;
        if !placed && s >= slot {
            push(&mut out, slot, payload.expect("not placed yet"));
            placed = true;
        }
        if s != slot {
            push(&mut out, s, p);
        }
    }
    if !placed {
        push(&mut out, slot, payload.expect("not placed yet"));
    }
    if out.is_empty() {
        if !old.is_empty() {
            tx.delete(tree, key)?;
        }
        Ok(())
    } else if out == old {
        Ok(())
    } else {
        tx.put(tree, key, &out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(list: &[(u8, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (s, p) in list {
            push(&mut out, *s, p);
        }
        out
    }

    #[test]
    fn entries_read_back_in_order() {
        let v = encode(&[(0, b""), (5, b"ab"), (127, &[7; 200])]);
        let got: Vec<(u8, Vec<u8>)> =
            entries(&v).map(|e| e.map(|(s, p)| (s, p.to_vec()))).collect::<Result<_>>().unwrap();
        assert_eq!(got, vec![(0, vec![]), (5, b"ab".to_vec()), (127, vec![7; 200])]);
    }

    #[test]
    fn a_damaged_block_is_an_error_not_a_panic() {
        let v = encode(&[(1, b"abc")]);
        let cut = &v[..v.len() - 1];
        assert!(entries(cut).any(|e| e.is_err()));
        assert_eq!(entries(&[3, 0xff]).filter(Result::is_err).count(), 1);
    }

    #[test]
    fn ids_map_to_blocks_and_back() {
        for id in [0, 1, 127, 128, 129, 1 << 40, u64::MAX] {
            let key = [&b"prefix\0"[..], &block_of(id)].concat();
            assert_eq!(id_in(block_at(&key).unwrap(), slot_of(id)), id);
        }
        assert_eq!(block_of(127), block_of(0));
        assert_ne!(block_of(128), block_of(127));
    }
}
