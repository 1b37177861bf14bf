//! LEB128 unsigned varints: seven bits a byte, low bits first, the high bit set on every byte but
//! the last. Small numbers (counts, deltas, lengths) take one byte.

use crate::error::{Error, Result};

/// Appends `v`.
pub(crate) fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // Truncation intended: the low 7 bits with the continuation bit.
        #[allow(clippy::cast_possible_truncation, reason = "the low seven bits")]
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    #[allow(clippy::cast_possible_truncation, reason = "below 0x80")]
    out.push(v as u8);
}

/// Reads the varint at `*at` and advances past it; `what` names the damaged structure in the
/// error when the bytes end early or run past 64 bits.
pub(crate) fn get(bytes: &[u8], at: &mut usize, what: &str) -> Result<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let Some(&b) = bytes.get(*at) else { break };
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(Error::corrupt(None, format!("{what} holds a malformed number")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn numbers_read_back(vs in proptest::collection::vec(any::<u64>(), 0..50)) {
            let mut out = Vec::new();
            for &v in &vs {
                put(&mut out, v);
            }
            let mut at = 0;
            for &v in &vs {
                prop_assert_eq!(get(&out, &mut at, "test").unwrap(), v);
            }
            prop_assert_eq!(at, out.len());
        }
    }

    #[test]
    fn a_cut_number_is_an_error() {
        let mut out = Vec::new();
        put(&mut out, 300);
        let mut at = 0;
        assert!(get(&out[..1], &mut at, "test").is_err());
        assert!(get(&[0xff; 11], &mut 0, "test").is_err());
    }
}
