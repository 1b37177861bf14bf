//! Where an exported record's ids were handed out. Ids are per partition (one counter each), so
//! two scopes' exports share ids: `k.import_map` keys a source id by its origin, and an export
//! names its origin in the header and in every record, so any page alone says where its ids come
//! from, in whatever order pages are imported. The origin is the first 16 bytes of
//! SHA-256(`cairn.export.origin\0` | store id | partition key): it spells no tenant, user or scope
//! (the store id is random, so a guessed name cannot be confirmed from it either), and it stays
//! the same for every export of one scope of one store. A record without one (an export made
//! before origins, or a hand-made record) has no origin: its ids share one namespace, the layout
//! stores kept before, and `import` checks every match it finds there against the record's own
//! names and text.

use super::part::Partition;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// Bytes of an origin in a map key; twice as many hex digits in a record.
pub(crate) const ORIGIN_LEN: usize = 16;

/// The origin of a record's ids; `None`: the record names none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin(Option<[u8; ORIGIN_LEN]>);

impl Origin {
    /// A record that names no origin.
    pub(crate) const NONE: Origin = Origin(None);

    /// The origin of `part`'s ids in the store `store_id`.
    #[must_use]
    pub fn of(store_id: u64, part: &Partition) -> Origin {
        let mut h = Sha256::new();
        h.update(b"cairn.export.origin\0");
        h.update(store_id.to_be_bytes());
        h.update(part.raw());
        let digest = h.finalize();
        let mut out = [0u8; ORIGIN_LEN];
        out.copy_from_slice(&digest[..ORIGIN_LEN]);
        Origin(Some(out))
    }

    /// The bytes a map key carries between its kind byte and the source id (none without one).
    pub(crate) fn key_bytes(&self) -> &[u8] {
        self.0.as_ref().map_or(&[], |b| &b[..])
    }

    /// As a record carries it: lowercase hex, `None` without one.
    #[must_use]
    pub fn hex(&self) -> Option<String> {
        self.0.map(|b| {
            b.iter().fold(String::with_capacity(2 * ORIGIN_LEN), |mut hex, x| {
                let _ = write!(hex, "{x:02x}");
                hex
            })
        })
    }

    /// The `origin` field of a record: absent or null is no origin; anything else must be the
    /// 32 lowercase hex digits an export writes.
    pub(crate) fn of_record(r: &Map<String, Value>) -> std::result::Result<Origin, String> {
        match r.get("origin") {
            None | Some(Value::Null) => Ok(Origin::NONE),
            Some(Value::String(s)) => Origin::parse(s).ok_or_else(Origin::bad),
            Some(_) => Err(Origin::bad()),
        }
    }

    /// `s` as an origin, if it is 32 lowercase hex digits.
    pub(crate) fn parse(s: &str) -> Option<Origin> {
        let digit = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let bytes = s.as_bytes();
        if bytes.len() != 2 * ORIGIN_LEN {
            return None;
        }
        let mut out = [0u8; ORIGIN_LEN];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Some(Origin(Some(out)))
    }

    fn bad() -> String {
        format!("origin: must be the {} lowercase hex digits an export gives, or absent", 2 * ORIGIN_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_is_a_digest_and_round_trips_as_hex() {
        let part = Partition::new("acme", "alice-secret", "travel").unwrap();
        let o = Origin::of(7, &part);
        let hex = o.hex().unwrap();
        assert_eq!(hex.len(), 32);
        assert!(!hex.contains("alice") && !hex.contains("travel"));
        assert_eq!(Origin::parse(&hex), Some(o));
        assert_ne!(Origin::of(8, &part), o, "another store, another origin");
        assert_ne!(Origin::of(7, &Partition::new("acme", "alice-secret", "work").unwrap()), o);
        assert_eq!(Origin::parse(&hex.to_uppercase()), None);
        assert_eq!(Origin::parse("12"), None);
        assert_eq!(Origin::NONE.key_bytes(), b"");
    }
}
