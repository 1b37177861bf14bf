//! A fast, non-cryptographic hasher for short string keys (terms, words) in the tokenizer's and
//! the full-text indexer's maps: one folded multiply per 8 bytes. The default
//! `SipHash` resists hash flooding, which these maps do not need (their keys are the caller's own
//! text, bounded per call) and which cost a tenth of tokenizing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` hashed with `FastHasher`.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// The hasher of `FastMap`.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher {
    hash: u64,
}

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl FastHasher {
    /// Folded multiply (as foldhash does): the high half of the 128-bit product carries the low
    /// input bits upwards, the low half the high ones down, so every output bit depends on all.
    fn add(&mut self, word: u64) {
        let product = u128::from(self.hash ^ word) * u128::from(K);
        self.hash = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, mut bytes: &[u8]) {
        while let Some((chunk, rest)) = bytes.split_first_chunk::<8>() {
            self.add(u64::from_le_bytes(*chunk));
            bytes = rest;
        }
        if let Some((chunk, rest)) = bytes.split_first_chunk::<4>() {
            self.add(u64::from(u32::from_le_bytes(*chunk)));
            bytes = rest;
        }
        for &b in bytes {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_short_keys_rarely_share_a_bucket() {
        let mut map: FastMap<String, usize> = FastMap::default();
        for i in 0..10_000 {
            map.insert(format!("term{i}"), i);
        }
        assert!((0..10_000).all(|i| map[&format!("term{i}")] == i));
        // `str` hashing appends a 0xff terminator, so a key and its extension differ.
        let hash = |s: &str| {
            let mut h = FastHasher::default();
            std::hash::Hash::hash(s, &mut h);
            h.finish()
        };
        assert_ne!(hash("ab"), hash("abc"));
        assert_ne!(hash("abcdefgh"), hash("abcdefghi"));
        let buckets: std::collections::HashSet<u64> = (0..4096).map(|i| hash(&format!("w{i}")) & 4095).collect();
        assert!(buckets.len() > 2500, "{} of 4096 buckets used", buckets.len());
    }
}
