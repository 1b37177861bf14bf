//! The query index of current notes, so `note_list` with a `query` reads the postings of the
//! query's terms and trigrams instead of every note. Written in the note's own transaction
//! (a replace rewrites the postings that changed; a forget removes them),
//! so it never disagrees with `n.cur`.
//!
//! Trees: `n.tok` `part | term \0 | identity` → `tf u32 BE | len u32 BE | flags`; `n.tri`
//! `part | trigram \0 | identity` → `flags`; flags = `private u8 | kind u8` (the kind's position in
//! `KINDS`), so visibility and filters are decided from the postings alone and only the notes of
//! the page are read. Terms and trigrams hold no NUL, so `term \0` prefixes are unambiguous.

use super::record::{KINDS, NoteRecord};
use super::search::{Features, Query, grams};
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use crate::text::tokens;
use crate::write::WriteTxn;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(crate) const TOK: &str = "n.tok";
pub(crate) const TRI: &str = "n.tri";

/// What a posting says about its note besides the match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flags {
    pub private: bool,
    /// Position in `KINDS`.
    pub kind: u8,
}

fn flags(note: &NoteRecord) -> [u8; 2] {
    let kind = KINDS.iter().position(|k| *k == note.kind).unwrap_or(0);
    [u8::from(note.private), u8::try_from(kind).expect("four kinds")]
}

fn decode_flags(b: &[u8]) -> Result<Flags> {
    match b {
        [p, k] => Ok(Flags { private: *p != 0, kind: *k }),
        _ => Err(Error::corrupt(None, "a notes posting's flags are not 2 bytes")),
    }
}

/// The postings of one note: (term, tf) and trigrams, and its length in terms.
fn postings(note: &NoteRecord) -> (HashMap<String, u32>, u32, BTreeSet<String>) {
    let text = note.search_text();
    let all = tokens(&text);
    let len = u32::try_from(all.len()).unwrap_or(u32::MAX);
    let mut tf: HashMap<String, u32> = HashMap::new();
    for t in all.into_iter().filter(|t| !t.term.contains('\0')) {
        *tf.entry(t.term).or_default() += 1;
    }
    (tf, len, grams(&text))
}

/// Replaces the postings of `old` (the previous version, if any) with those of `new`, writing
/// only what changed: a small edit of a large note touches few postings.
pub(crate) fn replace(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    old: Option<&NoteRecord>,
    new: &NoteRecord,
) -> Result<()> {
    let id = new.identity().encode();
    let new_flags = flags(new);
    let (tf, len, grams) = postings(new);
    let (old_tf, old_len, old_grams, old_flags) = match old {
        Some(prev) => {
            let (terms, length, trigrams) = postings(prev);
            (terms, length, trigrams, flags(prev))
        }
        None => (HashMap::new(), 0, BTreeSet::new(), new_flags),
    };
    let tok_key = |term: &str| part.key(&[term.as_bytes(), b"\0", id.as_bytes()]);
    for term in old_tf.keys().filter(|t| !tf.contains_key(*t)) {
        tx.delete(TOK, &tok_key(term))?;
    }
    for (term, n) in &tf {
        if old.is_none() || old_flags != new_flags || old_len != len || old_tf.get(term) != Some(n) {
            tx.put(TOK, &tok_key(term), &[&n.to_be_bytes()[..], &len.to_be_bytes(), &new_flags].concat())?;
        }
    }
    let tri_key = |g: &str| part.key(&[g.as_bytes(), b"\0", id.as_bytes()]);
    for g in old_grams.difference(&grams) {
        tx.delete(TRI, &tri_key(g))?;
    }
    for g in &grams {
        if old.is_none() || old_flags != new_flags || !old_grams.contains(g) {
            tx.put(TRI, &tri_key(g), &new_flags)?;
        }
    }
    Ok(())
}

/// Removes `note`'s postings (as `add` wrote them).
pub(crate) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, note: &NoteRecord) -> Result<()> {
    let id = note.identity().encode();
    let (tf, _, grams) = postings(note);
    for term in tf.keys() {
        tx.delete(TOK, &part.key(&[term.as_bytes(), b"\0", id.as_bytes()]))?;
    }
    for g in grams {
        tx.delete(TRI, &part.key(&[g.as_bytes(), b"\0", id.as_bytes()]))?;
    }
    Ok(())
}

/// Every current note holding a query term or trigram, by identity (sorted), with its features.
pub(crate) fn lookup(snap: &Snapshot, part: &Partition, query: &Query) -> Result<BTreeMap<String, (Features, Flags)>> {
    let mut out: BTreeMap<String, (Features, Flags)> = BTreeMap::new();
    let blank = || Features { tf: vec![0; query.terms.len()], ..Features::default() };
    for (t, term) in query.terms.iter().enumerate() {
        let prefix = part.key(&[term.as_bytes(), b"\0"]);
        for kv in snap.prefix(TOK, &prefix)? {
            let (k, v) = kv?;
            let id = identity_of(&k, prefix.len())?;
            if v.len() != 10 {
                return Err(Error::corrupt(None, "a notes term posting is not 10 bytes"));
            }
            let word = |at: usize| u32::from_be_bytes(v[at..at + 4].try_into().expect("4 bytes"));
            let (tf, len, f) = (word(0), word(4), &v[8..]);
            let entry = out.entry(id).or_insert_with(|| (blank(), Flags { private: false, kind: 0 }));
            entry.0.tf[t] = tf;
            entry.0.len = len;
            entry.1 = decode_flags(f)?;
        }
    }
    for g in &query.grams {
        let prefix = part.key(&[g.as_bytes(), b"\0"]);
        for kv in snap.prefix(TRI, &prefix)? {
            let (k, v) = kv?;
            let id = identity_of(&k, prefix.len())?;
            let flags = decode_flags(&v)?;
            let entry = out.entry(id).or_insert_with(|| (blank(), flags));
            entry.0.grams += 1;
        }
    }
    Ok(out)
}

fn identity_of(key: &[u8], prefix_len: usize) -> Result<String> {
    String::from_utf8(key[prefix_len..].to_vec())
        .map_err(|_| Error::corrupt(None, "a notes posting's identity is not UTF-8"))
}
