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
use super::search::{Features, Query, grams, min_grams};
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use crate::text::tokens;
use crate::write::WriteTxn;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(crate) const TOK: &str = "n.tok";
pub(crate) const TRI: &str = "n.tri";
/// `part | trigram` → u32 BE: how many current notes of the sample (`sampled`) hold the trigram.
/// Guides a query to its rarest trigrams first; it never decides a match (postings do), so an
/// estimate is enough, and counting one note in `SAMPLE` keeps the writes it costs small.
pub(crate) const TRI_COUNT: &str = "n.tric";
/// One note in this many (by id, which a note keeps across versions) is counted in `TRI_COUNT`.
pub(crate) const SAMPLE: u64 = 8;

/// Whether `note` is counted in `TRI_COUNT`.
pub(crate) fn sampled(note: &NoteRecord) -> bool {
    note.id.is_multiple_of(SAMPLE)
}

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
    // A note keeps its id across versions, so old and new are both sampled or both not.
    let counted = sampled(new);
    for g in old_grams.difference(&grams) {
        tx.delete(TRI, &tri_key(g))?;
        if counted {
            count(tx, part, g, -1)?;
        }
    }
    for g in &grams {
        let added = !old_grams.contains(g);
        if added && counted {
            count(tx, part, g, 1)?;
        }
        if old.is_none() || old_flags != new_flags || added {
            tx.put(TRI, &tri_key(g), &new_flags)?;
        }
    }
    Ok(())
}

/// Adds `delta` to the note count of trigram `g` (saturating at 0; a zero count is deleted).
fn count(tx: &mut WriteTxn<'_>, part: &Partition, g: &str, delta: i64) -> Result<()> {
    let key = part.key(&[g.as_bytes()]);
    let now = tx.get(TRI_COUNT, &key)?.as_deref().map_or(0, decode_count);
    let next = u32::try_from((i64::from(now) + delta).max(0)).unwrap_or(u32::MAX);
    if next == 0 {
        tx.delete(TRI_COUNT, &key)?;
        Ok(())
    } else {
        tx.put(TRI_COUNT, &key, &next.to_be_bytes())
    }
}

fn decode_count(b: &[u8]) -> u32 {
    b.try_into().map_or(u32::MAX, u32::from_be_bytes)
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
        if sampled(note) {
            count(tx, part, &g, -1)?;
        }
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
    lookup_grams(snap, part, query, &mut out, &blank)?;
    Ok(out)
}

/// The trigram channel's side of `lookup`. A note enters the channel only when it holds at least
/// `need` (`min_grams`: ⌈G/2⌉) of the query's G trigrams, so it must hold one of any G − need + 1 of them:
/// the postings of the rarest G − need + 1 (by `TRI_COUNT`) give every candidate, and the other
/// trigrams are then counted for the candidates only — by reading a trigram's postings when they
/// are few, else by point reads — stopping for a candidate once it cannot reach `need`. Counts
/// are exact for every note that can enter the channel; a note that cannot gets none recorded
/// here (its share is below the threshold either way), so ranking equals a full read.
fn lookup_grams(
    snap: &Snapshot,
    part: &Partition,
    query: &Query,
    out: &mut BTreeMap<String, (Features, Flags)>,
    blank: &dyn Fn() -> Features,
) -> Result<()> {
    let total = query.grams.len();
    if total == 0 {
        return Ok(());
    }
    let need = min_grams(total);
    let mut by_count: Vec<(u32, &String)> = Vec::with_capacity(total);
    for g in &query.grams {
        let n = snap.get_with(TRI_COUNT, &part.key(&[g.as_bytes()]), |v| v.map_or(0, decode_count))?;
        by_count.push((n, g));
    }
    by_count.sort();
    let (scan, rest) = by_count.split_at(total - need + 1);
    // Candidates: identity bytes → (trigrams held so far, flags). Sized from the sampled counts.
    let estimate = scan.iter().map(|(n, _)| u64::from(*n) * SAMPLE).sum::<u64>();
    let mut cands: FastMap<Vec<u8>, (usize, Flags)> =
        FastMap::with_capacity_and_hasher(usize::try_from(estimate.min(1 << 20)).unwrap_or(0), BuildFx::default());
    for (_, g) in scan {
        let prefix = part.key(&[g.as_bytes(), b"\0"]);
        for kv in snap.prefix(TRI, &prefix)? {
            let (mut k, v) = kv?;
            let flags = decode_flags(&v)?;
            k.drain(..prefix.len());
            cands.entry(k).or_insert((0, flags)).0 += 1;
        }
    }
    let mut key = Vec::new();
    for (i, (n, g)) in rest.iter().enumerate() {
        let left_after = rest.len() - i - 1;
        // Drop candidates that cannot reach `need` even holding this and every later trigram.
        cands.retain(|_, (held, _)| *held + 1 + left_after >= need);
        if cands.is_empty() {
            break;
        }
        let prefix = part.key(&[g.as_bytes(), b"\0"]);
        if u64::from(*n) * SAMPLE <= (cands.len() as u64).saturating_mul(4) {
            for kv in snap.prefix(TRI, &prefix)? {
                let (k, _) = kv?;
                if let Some(c) = cands.get_mut(&k[prefix.len()..]) {
                    c.0 += 1;
                }
            }
        } else {
            for (id, c) in &mut cands {
                key.clear();
                key.extend_from_slice(&prefix);
                key.extend_from_slice(id);
                if snap.get_with(TRI, &key, |v| v.is_some())? {
                    c.0 += 1;
                }
            }
        }
    }
    for (id, (held, flags)) in cands {
        if held >= need {
            let id =
                String::from_utf8(id).map_err(|_| Error::corrupt(None, "a notes posting's identity is not UTF-8"))?;
            let entry = out.entry(id).or_insert_with(|| (blank(), flags));
            entry.0.grams = u32::try_from(held).unwrap_or(u32::MAX);
            entry.1 = flags;
        }
    }
    Ok(())
}

/// `FxHash` (rustc's): identities are not attacker-chosen across users (a partition's own keys),
/// and the candidate map is the hot loop of a query.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(c.try_into().expect("8 bytes"))).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type BuildFx = std::hash::BuildHasherDefault<Fx>;
type FastMap<K, V> = HashMap<K, V, BuildFx>;

fn identity_of(key: &[u8], prefix_len: usize) -> Result<String> {
    String::from_utf8(key[prefix_len..].to_vec())
        .map_err(|_| Error::corrupt(None, "a notes posting's identity is not UTF-8"))
}
