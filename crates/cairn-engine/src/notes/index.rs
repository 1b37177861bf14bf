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
use std::collections::{BTreeSet, HashMap};

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

/// A trigram's postings are walked (rather than probed once per candidate) while they number at
/// most this many times the candidates: a walk costs a comparison per posting, a probe a descent
/// of the tree (4 to 64 measured alike on the bench's data).
const SCAN_RATIO: u64 = 4;

/// Where an identity lies in `Hits::arena`: (start, end).
type Span = (u32, u32);

/// Every current note holding a query term or trigram, in identity order, with its features.
/// Identities are copied into one arena rather than allocated one by one: a common word has
/// thousands of postings, and the query's cost is the scan of them.
pub(crate) struct Hits {
    arena: Vec<u8>,
    pub docs: Vec<Hit>,
}

/// One note of `Hits`.
pub(crate) struct Hit {
    span: Span,
    pub features: Features,
    pub flags: Flags,
}

impl Hits {
    /// The encoded identity of `hit` (`Identity::encode`).
    pub(crate) fn identity(&self, hit: &Hit) -> &[u8] {
        &self.arena[hit.span.0 as usize..hit.span.1 as usize]
    }

    fn at(&self, span: Span) -> &[u8] {
        &self.arena[span.0 as usize..span.1 as usize]
    }

    /// Copies `id` into the arena.
    fn keep(&mut self, id: &[u8]) -> Span {
        let start = u32::try_from(self.arena.len()).expect("a query's identities fit in 4 GiB");
        self.arena.extend_from_slice(id);
        (start, start + u32::try_from(id.len()).expect("a short identity"))
    }
}

/// Every current note holding a query term or trigram, in identity order (the order candidates
/// keep on ties), with its features.
pub(crate) fn lookup(snap: &Snapshot, part: &Partition, query: &Query) -> Result<Hits> {
    let mut hits = Hits { arena: Vec::new(), docs: Vec::new() };
    let blank = || Features { tf: vec![0; query.terms.len()], ..Features::default() };
    // The trigram channel first; each term's postings (sorted by identity, like every posting
    // list) are then merged in.
    let grams = lookup_grams(snap, part, query, &mut hits)?;
    hits.docs = grams
        .into_iter()
        .map(|c| Hit { span: c.span, features: Features { grams: c.held, ..blank() }, flags: c.flags })
        .collect();
    let mut list: Vec<(Span, u32, u32, Flags)> = Vec::new();
    for (t, term) in query.terms.iter().enumerate() {
        let prefix = part.key(&[term.as_bytes(), b"\0"]);
        list.clear();
        snap.scan_prefix(TOK, &prefix, |k, v| {
            let (Some(tf), Some(len), Some(flags)) = (v.get(..4), v.get(4..8), v.get(8..)) else {
                return Err(Error::corrupt(None, "a notes term posting is not 10 bytes"));
            };
            let flags = decode_flags(flags)?;
            let word = |b: &[u8]| u32::from_be_bytes(b.try_into().expect("4 bytes"));
            let span = hits.keep(&k[prefix.len()..]);
            list.push((span, word(tf), word(len), flags));
            Ok(true)
        })?;
        let docs = std::mem::take(&mut hits.docs);
        let mut merged = Vec::with_capacity(docs.len().max(list.len()));
        let mut docs = docs.into_iter().peekable();
        for &(span, tf, len, flags) in &list {
            while let Some(d) = docs.next_if(|d| hits.at(d.span) < hits.at(span)) {
                merged.push(d);
            }
            let mut hit = match docs.next_if(|d| hits.at(d.span) == hits.at(span)) {
                Some(d) => d,
                None => Hit { span, features: blank(), flags },
            };
            hit.features.tf[t] = tf;
            hit.features.len = len;
            hit.flags = flags;
            merged.push(hit);
        }
        merged.extend(docs);
        hits.docs = merged;
    }
    Ok(hits)
}

/// A trigram-channel candidate: its identity, the query trigrams it holds so far, its flags.
#[derive(Clone, Copy)]
struct Candidate {
    span: Span,
    held: u32,
    flags: Flags,
}

/// The trigram channel's side of `lookup`: the notes that hold at least `need` (`min_grams`:
/// ⌈G/2⌉) of the query's G trigrams, in identity order, with the count they hold. Such a note
/// holds one of any G − need + 1 of them: the postings of the rarest G − need + 1 (by
/// `TRI_COUNT`) give every candidate, and the other trigrams are then counted for the candidates
/// only — by reading a trigram's postings when they are few, else by point reads — stopping for
/// a candidate once it cannot reach `need`. Counts are exact for every note that can enter the
/// channel; a note that cannot is left out (its share is below the threshold either way), so
/// ranking equals a full read. Posting lists are sorted by identity, so candidates are gathered
/// and counted by merging sorted lists, with no hashing.
fn lookup_grams(snap: &Snapshot, part: &Partition, query: &Query, hits: &mut Hits) -> Result<Vec<Candidate>> {
    let total = query.grams.len();
    if total == 0 {
        return Ok(Vec::new());
    }
    let need = u32::try_from(min_grams(total)).unwrap_or(u32::MAX);
    let mut by_count: Vec<(u32, &String)> = Vec::with_capacity(total);
    for g in &query.grams {
        let n = snap.get_with(TRI_COUNT, &part.key(&[g.as_bytes()]), |v| v.map_or(0, decode_count))?;
        by_count.push((n, g));
    }
    by_count.sort();
    let (scan, rest) = by_count.split_at(total - min_grams(total) + 1);
    let mut cands: Vec<Candidate> = Vec::new();
    let mut list: Vec<(Span, Flags)> = Vec::new();
    for (_, g) in scan {
        let prefix = part.key(&[g.as_bytes(), b"\0"]);
        list.clear();
        snap.scan_prefix(TRI, &prefix, |k, v| {
            let flags = decode_flags(v)?;
            list.push((hits.keep(&k[prefix.len()..]), flags));
            Ok(true)
        })?;
        // Merge the list into the candidates (both sorted by identity).
        let mut merged = Vec::with_capacity(cands.len() + list.len());
        let mut old = cands.iter().copied().peekable();
        for &(span, flags) in &list {
            while let Some(c) = old.next_if(|c| hits.at(c.span) < hits.at(span)) {
                merged.push(c);
            }
            match old.next_if(|c| hits.at(c.span) == hits.at(span)) {
                Some(c) => merged.push(Candidate { held: c.held + 1, ..c }),
                None => merged.push(Candidate { span, held: 1, flags }),
            }
        }
        merged.extend(old);
        cands = merged;
    }
    let mut key = Vec::new();
    for (i, (n, g)) in rest.iter().enumerate() {
        let left_after = u32::try_from(rest.len() - i - 1).unwrap_or(u32::MAX);
        // Drop candidates that cannot reach `need` even holding this and every later trigram.
        cands.retain(|c| c.held + 1 + left_after >= need);
        if cands.is_empty() {
            break;
        }
        let prefix = part.key(&[g.as_bytes(), b"\0"]);
        if u64::from(*n) * SAMPLE <= (cands.len() as u64).saturating_mul(SCAN_RATIO) {
            // Few postings: walk them alongside the (sorted) candidates.
            let mut at = 0;
            snap.scan_prefix(TRI, &prefix, |k, _| {
                let id = &k[prefix.len()..];
                while at < cands.len() && hits.at(cands[at].span) < id {
                    at += 1;
                }
                if at == cands.len() {
                    return Ok(false);
                }
                if hits.at(cands[at].span) == id {
                    cands[at].held += 1;
                }
                Ok(true)
            })?;
        } else {
            for c in &mut cands {
                key.clear();
                key.extend_from_slice(&prefix);
                key.extend_from_slice(hits.at(c.span));
                if snap.get_with(TRI, &key, |v| v.is_some())? {
                    c.held += 1;
                }
            }
        }
    }
    cands.retain(|c| c.held >= need);
    Ok(cands)
}
