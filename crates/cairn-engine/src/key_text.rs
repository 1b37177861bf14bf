//! Caller text inside keys. Index keys hold text a caller chose (an entity name, a relation type,
//! a history target, an agent, a word of a note) between a fixed prefix and a fixed tail, and a
//! key is at most `MAX_KEY_LEN` bytes, while the text may be as long as the contract allows (a
//! 1 KiB name in a partition of 256-byte user and scope, a 64 KiB note that is one unbroken
//! token). Text whose key fits is kept as it is, so every key a store written before holds is
//! still the key of its text and nothing needs migrating. Text whose key would not fit is kept as
//! its head (the leading bytes that fit, cut at a character boundary), `LONG`, and the first
//! `DIGEST` bytes of its SHA-256: exact lookups and uniqueness hold (a 128-bit digest), and keys
//! still sort by their text's head.

use crate::limits::MAX_KEY_LEN;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// Ends the head of a text kept by digest. Keyed text holds no control character (names refuse
/// them, the tokenizer never yields them), so a text kept whole never reads as a digested one.
pub(crate) const LONG: u8 = 0x01;
/// Bytes of the SHA-256 kept after the head.
pub(crate) const DIGEST: usize = 16;

/// `text` as it goes into a key whose other parts take `fixed` bytes.
pub(crate) fn fit(text: &str, fixed: usize) -> Cow<'_, [u8]> {
    let room = MAX_KEY_LEN.saturating_sub(fixed);
    if text.len() <= room {
        return Cow::Borrowed(text.as_bytes());
    }
    let mut head = room.saturating_sub(1 + DIGEST);
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut out = Vec::with_capacity(head + 1 + DIGEST);
    out.extend_from_slice(&text.as_bytes()[..head]);
    out.push(LONG);
    out.extend_from_slice(&Sha256::digest(text.as_bytes())[..DIGEST]);
    Cow::Owned(out)
}

/// Whether `fit` keeps `text` whole in a key with `fixed` other bytes.
pub(crate) fn fits(len: usize, fixed: usize) -> bool {
    len <= MAX_KEY_LEN.saturating_sub(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_fits_is_kept_whole() {
        assert_eq!(&*fit("Priya Raman", 40), b"Priya Raman");
        let exact = "x".repeat(MAX_KEY_LEN - 40);
        assert_eq!(&*fit(&exact, 40), exact.as_bytes());
    }

    #[test]
    fn longer_text_keeps_its_head_and_a_digest_within_the_room() {
        let long = "é".repeat(1000);
        let kept = fit(&long, 600);
        assert_eq!(kept.len() + 600, MAX_KEY_LEN - 1, "the head is cut before a split character");
        let head = kept.len() - 1 - DIGEST;
        assert!(std::str::from_utf8(&kept[..head]).is_ok());
        assert_eq!(kept[head], LONG);
        assert_eq!(&kept[head + 1..], &Sha256::digest(long.as_bytes())[..DIGEST]);
    }

    #[test]
    fn long_texts_differing_only_past_the_head_get_different_keys() {
        let a = format!("{}a", "x".repeat(2000));
        let b = format!("{}b", "x".repeat(2000));
        assert_ne!(fit(&a, 100), fit(&b, 100));
        assert_eq!(fit(&a, 100), fit(&a, 100));
        assert!(!fits(a.len(), 100) && fits(10, 100));
    }
}
