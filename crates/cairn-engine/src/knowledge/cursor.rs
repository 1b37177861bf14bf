//! Export cursors: where the next page starts, as `(record kind, last key)`, bound to the
//! partition that made it. On the wire a cursor is base64url (no padding) of
//! `version u8 | sha256(partition)[..8] | kind len u8 | kind | last key`, where the last key is
//! the key suffix after the partition prefix (empty: the kind has not started). A page may also
//! stop inside a stored value that makes several records (a note whose versions are split over
//! records, `notes::exchange_windows`): the kind length byte then has its high bit set and the
//! last number returned of that value follows the kind, `| part-way u64 BE |` before the key,
//! whose value is then continued, not passed. Kind names are short, so a cursor issued before
//! (high bit clear) reads as it did. A cursor that does not decode, names an unknown kind, or was
//! made for another partition is refused by name.

use super::part::Partition;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};

const VERSION: u8 = 1;
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A decoded cursor: the kind to continue and the last key suffix already returned in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub kind: String,
    /// Empty when the kind has not started.
    pub after: Vec<u8>,
    /// The page stopped inside the value at `after`: the last version of it already returned
    /// (its records continue after that one); `None` when `after` was returned whole.
    pub part_way: Option<u64>,
}

/// The bit of the kind length byte saying a part-way number follows the kind.
const PART_WAY: u8 = 0x80;

fn bind(part: &Partition) -> [u8; 8] {
    Sha256::digest(part.raw())[..8].try_into().expect("8 bytes")
}

fn refused(why: &str) -> Error {
    Error::InvalidArgument(format!("cursor: {why}"))
}

impl Cursor {
    /// The wire form of this cursor for `part`.
    pub fn encode(&self, part: &Partition) -> String {
        let kind_len = u8::try_from(self.kind.len()).ok().filter(|l| l & PART_WAY == 0).expect("kind names are short");
        let (flag, way) = match self.part_way {
            Some(v) => (PART_WAY, v.to_be_bytes().to_vec()),
            None => (0, Vec::new()),
        };
        let raw = [&[VERSION][..], &bind(part), &[kind_len | flag], self.kind.as_bytes(), &way, &self.after].concat();
        base64url(&raw)
    }

    /// Decodes `text` for `part`; `kinds` are the kinds a cursor may name.
    pub fn decode(text: &str, part: &Partition, kinds: &[&str]) -> Result<Cursor> {
        let raw = unbase64url(text).ok_or_else(|| refused("not a cursor this node issued"))?;
        let (&version, rest) = raw.split_first().ok_or_else(|| refused("empty"))?;
        if version != VERSION {
            return Err(refused("not a `next` of memory_export in this format (another tool's, or an older export's)"));
        }
        let (bound, rest) = rest.split_at_checked(8).ok_or_else(|| refused("truncated"))?;
        if bound != bind(part) {
            // Another tool's cursors (recall, note_list) share the version byte: say both.
            return Err(refused(
                "not a `next` of memory_export for this scope and user (another tool's, scope's or user's)",
            ));
        }
        let (&len_byte, rest) = rest.split_first().ok_or_else(|| refused("truncated"))?;
        let kind_len = usize::from(len_byte & !PART_WAY);
        let (kind, mut after) = rest.split_at_checked(kind_len).ok_or_else(|| refused("truncated"))?;
        let part_way = if len_byte & PART_WAY == 0 {
            None
        } else {
            let (way, rest) = after.split_at_checked(8).ok_or_else(|| refused("truncated"))?;
            after = rest;
            Some(u64::from_be_bytes(way.try_into().expect("8 bytes")))
        };
        let kind = std::str::from_utf8(kind)
            .ok()
            .filter(|k| kinds.contains(k))
            .ok_or_else(|| refused("unknown record kind"))?;
        Ok(Cursor { kind: kind.to_owned(), after: after.to_vec(), part_way })
    }
}

/// base64url without padding (RFC 4648 §5).
pub(crate) fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// The bytes of canonical base64url `text`; `None` for anything else.
pub(crate) fn unbase64url(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let digits: Vec<u32> = text
        .bytes()
        .map(|c| ALPHABET.iter().position(|&a| a == c).and_then(|p| u32::try_from(p).ok()))
        .collect::<Option<_>>()?;
    for chunk in digits.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &d)| n | d << (18 - 6 * i));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i) & 0xff) as u8);
        }
    }
    // A canonical encoding round-trips; anything else (stray low bits) is not ours.
    (base64url(&out) == text).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [&str; 2] = ["entity", "fact"];

    #[test]
    fn base64url_round_trips_every_length() {
        for len in 0..20u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(97).wrapping_add(200)).collect();
            let text = base64url(&bytes);
            assert!(text.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
            assert_eq!(unbase64url(&text), Some(bytes));
        }
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn a_cursor_is_bound_to_its_partition_and_kinds() {
        let mine = Partition::new("local", "u1", "default").unwrap();
        let theirs = Partition::new("local", "u2", "default").unwrap();
        let c = Cursor { kind: "fact".into(), after: vec![0, 0, 0, 0, 0, 0, 0, 7], part_way: None };
        let text = c.encode(&mine);
        assert_eq!(Cursor::decode(&text, &mine, &KINDS).unwrap(), c);
        for (bad, part) in [(text.as_str(), &theirs), ("%%", &mine), ("", &mine), ("QQ", &mine)] {
            let err = Cursor::decode(bad, part, &KINDS).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT");
            assert!(err.to_string().contains("cursor: "), "{err}");
        }
        let err = Cursor::decode(&text, &theirs, &KINDS).unwrap_err().to_string();
        assert!(err.contains("not a `next` of memory_export for this scope and user"), "{err}");
        let other_kind = Cursor { kind: "note".into(), after: vec![], part_way: None }.encode(&mine);
        assert!(Cursor::decode(&other_kind, &mine, &KINDS).is_err());
    }

    #[test]
    fn a_part_way_cursor_round_trips_and_an_older_one_reads_as_before() {
        let part = Partition::new("local", "u1", "default").unwrap();
        let kinds = ["note"];
        let c = Cursor { kind: "note".into(), after: b"user\0k".to_vec(), part_way: Some(70) };
        assert_eq!(Cursor::decode(&c.encode(&part), &part, &kinds).unwrap(), c);
        // A cursor as issued before part-way cursors: the same bytes without the flag.
        let old = [&[VERSION][..], &bind(&part), &[4], b"note", b"user\0k"].concat();
        let read = Cursor::decode(&base64url(&old), &part, &kinds).unwrap();
        assert_eq!(read, Cursor { kind: "note".into(), after: b"user\0k".to_vec(), part_way: None });
        let cut = [&[VERSION][..], &bind(&part), &[4 | PART_WAY], b"note", &[0, 0, 1]].concat();
        assert!(Cursor::decode(&base64url(&cut), &part, &kinds).is_err());
    }
}
