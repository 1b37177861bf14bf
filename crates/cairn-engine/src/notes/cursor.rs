//! Opaque cursors bound to the whole request: `base64url(binding[16] | position)`, where the
//! binding is a hash of the caller (tenant, user, scope, agent) and every field that shapes the
//! result. A cursor reused with another query, user, agent or scope fails the binding and is
//! refused naming `cursor`; it never silently pages through something else. Reads always build
//! their keys from the caller's own partition, so even a forged position stays inside it.

use super::{Outcome, invalid};
use crate::knowledge::api::Caller;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const BINDING: usize = 16;
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// What a cursor is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Binding([u8; BINDING]);

impl Binding {
    /// The binding of `verb` for `caller` with the result-shaping fields `query`.
    pub(crate) fn new(verb: &str, caller: &Caller, query: &Value) -> Binding {
        let (tenant, user, scope) = caller.part.parts();
        let all = json!([verb, tenant, user, scope, caller.agent, query]);
        let digest = Sha256::digest(serde_json::to_vec(&all).expect("JSON serialises"));
        Binding(digest[..BINDING].try_into().expect("16 bytes of a 32-byte digest"))
    }

    /// A cursor that resumes at `position`.
    pub(crate) fn cursor(&self, position: &[u8]) -> String {
        encode(&[&self.0[..], position].concat())
    }

    /// The position a cursor of this binding holds; refuses any other cursor.
    pub(crate) fn position(&self, cursor: &str) -> Outcome<Vec<u8>> {
        let bytes = decode(cursor).ok_or_else(|| invalid("cursor", "is not a cursor this node gave out"))?;
        if bytes.len() < BINDING || bytes[..BINDING] != self.0 {
            return Err(invalid("cursor", "belongs to another query, user, agent or scope; start again without it"));
        }
        Ok(bytes[BINDING..].to_vec())
    }
}

/// A position that is one big-endian u64.
pub(crate) fn u64_position(bytes: &[u8]) -> Outcome<u64> {
    let arr: [u8; 8] = bytes.try_into().map_err(|_| invalid("cursor", "is damaged"))?;
    Ok(u64::from_be_bytes(arr))
}

fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn decode(text: &str) -> Option<Vec<u8>> {
    let sextets: Vec<u32> = text
        .bytes()
        .map(|c| ALPHABET.iter().position(|&a| a == c).map(|p| u32::try_from(p).expect("under 64")))
        .collect::<Option<_>>()?;
    if sextets.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(sextets.len() * 3 / 4);
    for chunk in sextets.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, s)| acc | s << (18 - 6 * i));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    // Canonical only: re-encoding must give the same text (no stray low bits).
    (encode(&out) == text).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Partition;

    fn caller(user: &str, agent: &str) -> Caller {
        Caller { part: Partition::new("local", user, "default").unwrap(), agent: agent.into(), now: 0 }
    }

    #[test]
    fn base64url_round_trips_every_length() {
        for len in 0..40u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37).wrapping_add(250)).collect();
            assert_eq!(decode(&encode(&bytes)), Some(bytes));
        }
        assert_eq!(decode("a"), None);
        assert_eq!(decode("ab=="), None);
        assert_eq!(decode("ab"), None, "stray low bits are not canonical");
    }

    #[test]
    fn a_cursor_only_opens_for_its_own_query_and_caller() {
        let q = json!({"query": "x"});
        let b = Binding::new("note_list", &caller("u1", "a"), &q);
        let c = b.cursor(&7u64.to_be_bytes());
        assert_eq!(u64_position(&b.position(&c).unwrap()).unwrap(), 7);
        for other in [
            Binding::new("note_list", &caller("u2", "a"), &q),
            Binding::new("note_list", &caller("u1", "b"), &q),
            Binding::new("note_list", &caller("u1", "a"), &json!({"query": "y"})),
            Binding::new("history", &caller("u1", "a"), &q),
        ] {
            assert!(other.position(&c).is_err());
        }
        assert!(b.position("!!").is_err());
    }
}
