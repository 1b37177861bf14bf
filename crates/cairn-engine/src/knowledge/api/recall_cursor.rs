//! Recall's cursor: where the next page of one recall starts, bound to the whole request. On the
//! wire it is base64url (no padding) of `version u8 | offset u32 | read_at i64 | given [8] |
//! tag [8]` (big-endian): `offset` counts the facts earlier pages gave, `read_at` is the first
//! page's time, which every later page reads as of (so a write between pages cannot shift the
//! order), `given` is a hash of the facts already given (a page whose earlier facts read
//! differently, say one was forgotten, is refused rather than repeating or skipping one), and
//! `tag` hashes the request's binding (tenant, user, scope, agent and every field that shapes the
//! answer) with the bytes before it. A cursor reused with another request or caller, or altered,
//! fails the tag and is refused naming `cursor`; it never pages through something else.

use crate::error::{Error, Result};
use crate::knowledge::api::Caller;
use crate::knowledge::cursor::{base64url, unbase64url};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const VERSION: u8 = 1;
/// `version | offset | read_at | given`.
const BODY: usize = 1 + 4 + 8 + 8;
const TAG: usize = 8;

/// Where a page starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Page {
    /// How many entries of the whole list earlier pages gave.
    pub offset: usize,
    /// The first page's time (ms): the moment every page reads.
    pub read_at: i64,
    /// `given` of the entries before `offset`.
    pub given: [u8; 8],
}

/// What a recall cursor is bound to: the caller and the request's answer-shaping fields.
pub(super) struct Binding([u8; 32]);

impl Binding {
    /// The binding of a recall by `caller` whose answer-shaping fields are `request`.
    pub(super) fn new(caller: &Caller, request: &Value) -> Binding {
        let (tenant, user, scope) = caller.part.parts();
        let all = json!(["recall", tenant, user, scope, caller.agent, request]);
        Binding(Sha256::digest(serde_json::to_vec(&all).expect("JSON serialises")).into())
    }

    fn tag(&self, body: &[u8]) -> [u8; TAG] {
        Sha256::digest([&self.0[..], body].concat())[..TAG].try_into().expect("8 bytes of a 32-byte digest")
    }

    /// The cursor of `page` for this request.
    pub(super) fn cursor(&self, page: &Page) -> String {
        let offset = u32::try_from(page.offset).expect("a recall lists far fewer than 2^32 facts");
        let body = [&[VERSION][..], &offset.to_be_bytes(), &page.read_at.to_be_bytes(), &page.given].concat();
        base64url(&[&body[..], &self.tag(&body)].concat())
    }

    /// The page `text` starts; refuses a cursor of another request or caller, or an altered one.
    pub(super) fn open(&self, text: &str) -> Result<Page> {
        let raw = unbase64url(text)
            .filter(|raw| raw.len() == BODY + TAG && raw[0] == VERSION)
            .ok_or_else(|| refused("is not a recall cursor this node gave out"))?;
        let (body, tag) = raw.split_at(BODY);
        if tag != self.tag(body) {
            return Err(refused(
                "belongs to another request (subject or attribute, k, as_of, valid_at, hops, compact), user, \
                 scope or agent, or was altered; send the request again without it",
            ));
        }
        let offset = u32::from_be_bytes(body[1..5].try_into().expect("4 bytes"));
        Ok(Page {
            offset: usize::try_from(offset).expect("u32 fits usize"),
            read_at: i64::from_be_bytes(body[5..13].try_into().expect("8 bytes")),
            given: body[13..].try_into().expect("8 bytes"),
        })
    }
}

/// A refusal of the cursor, which the node reports as a `VALIDATION_ERROR` of the field `cursor`.
pub(super) fn refused(why: &str) -> Error {
    Error::InvalidArgument(format!("cursor: {why}"))
}

/// A hash of the entries a recall of `subject` gave, each named by `keys` in order.
pub(super) fn given(subject: u64, keys: impl IntoIterator<Item = String>) -> [u8; 8] {
    let mut h = Sha256::new();
    h.update(subject.to_be_bytes());
    for key in keys {
        h.update(key.as_bytes());
        h.update([0]);
    }
    h.finalize()[..8].try_into().expect("8 bytes of a 32-byte digest")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Partition;

    fn caller(user: &str, agent: &str) -> Caller {
        Caller { part: Partition::new("local", user, "default").unwrap(), agent: agent.into(), now: 0 }
    }

    #[test]
    fn a_cursor_opens_only_for_its_own_request_and_caller_unaltered() {
        let q = json!({"subject": "Priya", "k": 10});
        let b = Binding::new(&caller("u1", "a"), &q);
        let page = Page { offset: 20, read_at: 1_790_000_000_000, given: [7; 8] };
        let text = b.cursor(&page);
        assert_eq!(b.open(&text).unwrap(), page);
        for other in [
            Binding::new(&caller("u2", "a"), &q),
            Binding::new(&caller("u1", "b"), &q),
            Binding::new(&caller("u1", "a"), &json!({"subject": "Priya", "k": 11})),
        ] {
            let err = other.open(&text).unwrap_err();
            assert!(err.to_string().contains("cursor: belongs to another request"), "{err}");
        }
        // Every single-character change of the text is refused.
        for i in 0..text.len() {
            let mut altered = text.clone().into_bytes();
            altered[i] = if altered[i] == b'A' { b'B' } else { b'A' };
            let altered = String::from_utf8(altered).unwrap();
            assert!(b.open(&altered).is_err(), "{altered}");
        }
        for garbage in ["", "!!", "QQ", &text[..text.len() - 4]] {
            assert!(b.open(garbage).unwrap_err().to_string().contains("cursor: is not a recall cursor"), "{garbage}");
        }
    }
}
