//! The query index of current notes, so `note_list` with a `query` reads the postings of the
//! query's terms and trigrams instead of every note. Written in the note's own transaction
//! (a replace rewrites the postings that changed; a forget removes them),
//! so it never disagrees with `n.cur`.
//!
//! Trees: `n.tok` `part | term \0 | id u64 BE` → `tf u32 BE | len u32 BE | meta`; `n.tri`
//! `part | trigram \0 | id u64 BE` → `meta`; meta = `private u8 | kind u8 | visibility u8 |
//! owner` (the kind's position in `KINDS`; visibility 0 user, 1 task, 2 agent; the owner as in
//! the identity, empty for user notes), so visibility and filters are decided from the postings
//! alone. `n.id` `part | id u64 BE` → identity leads from a hit to its record, read only for the
//! notes of the page. Postings carry the note's id (which it keeps across versions), not its
//! identity: short keys, compared as integers, so a query's scan of thousands of postings costs
//! little. Terms and trigrams hold no NUL, so `term \0` prefixes are unambiguous.

use super::record::{KINDS, NoteRecord, Visibility, search_text};
use super::search::{Counts, Features, Query, grams, min_grams};
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use crate::text::tokens;
use crate::write::WriteTxn;
use std::collections::{BTreeSet, HashMap};

pub(crate) const TOK: &str = "n.tok";
pub(crate) const TRI: &str = "n.tri";
/// `part | id u64 BE` → the note's encoded identity.
pub(crate) const IDS: &str = "n.id";
/// `part | trigram` → u32 BE: how many current notes of the sample (`sampled`) hold the trigram.
/// Guides a query to its rarest trigrams first; it never decides a match (postings do), so an
/// estimate is enough, and counting one note in `SAMPLE` keeps the writes it costs small.
pub(crate) const TRI_COUNT: &str = "n.tric";
/// One note in this many (by id, which a note keeps across versions) is counted in `TRI_COUNT`.
pub(crate) const SAMPLE: u64 = 8;
/// A trigram's postings are walked (rather than probed once per candidate) while they number at
/// most this many times the candidates: a walk costs a comparison per posting, a probe a descent
/// of the tree.
const SCAN_RATIO: u64 = 4;

/// Whether `note` is counted in `TRI_COUNT`.
pub(crate) fn sampled(note: &NoteRecord) -> bool {
    note.id.is_multiple_of(SAMPLE)
}

/// What a posting says about its note besides the match: enough to decide visibility and the
/// filters of a list without reading the note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta<'a> {
    pub private: bool,
    /// Position in `KINDS`.
    pub kind: u8,
    pub visibility: Visibility,
    /// The task id (`task`), the owning agent (`agent`), or empty (`user`).
    pub owner: &'a str,
}

fn meta(note: &NoteRecord) -> Vec<u8> {
    let kind = KINDS.iter().position(|k| *k == note.kind).unwrap_or(0);
    let visibility = match note.visibility() {
        Visibility::User => 0,
        Visibility::Task => 1,
        Visibility::Agent => 2,
    };
    [&[u8::from(note.private), u8::try_from(kind).expect("four kinds"), visibility][..], note.owner.as_bytes()].concat()
}

fn decode_meta(b: &[u8]) -> Result<Meta<'_>> {
    let bad = || Error::corrupt(None, "a notes posting's meta is damaged");
    let [private, kind, visibility, owner @ ..] = b else { return Err(bad()) };
    let visibility = match visibility {
        0 => Visibility::User,
        1 => Visibility::Task,
        2 => Visibility::Agent,
        _ => return Err(bad()),
    };
    let owner = std::str::from_utf8(owner).map_err(|_| bad())?;
    Ok(Meta { private: *private != 0, kind: *kind, visibility, owner })
}

/// `admit` over postings' metas, remembering its last answer: most postings of a list carry the
/// same few metas, so most are decided by comparing a few bytes.
struct Admit<'a> {
    decide: &'a dyn Fn(&Meta<'_>) -> bool,
    /// The last meta decided (empty before the first: a meta is never empty).
    last: Vec<u8>,
    ok: bool,
}

impl<'a> Admit<'a> {
    fn new(admit: &'a dyn Fn(&Meta<'_>) -> bool) -> Self {
        Admit { decide: admit, last: Vec::new(), ok: false }
    }

    fn check(&mut self, meta: &[u8]) -> Result<bool> {
        if self.last != meta {
            self.ok = (self.decide)(&decode_meta(meta)?);
            self.last.clear();
            self.last.extend_from_slice(meta);
        }
        Ok(self.ok)
    }
}

/// `part | id BE`: where `IDS` keeps a note's identity.
pub(crate) fn id_key(part: &Partition, id: u64) -> Vec<u8> {
    part.key(&[&id.to_be_bytes()])
}

/// The note id at the end of a posting key.
fn id_of(key: &[u8]) -> Result<u64> {
    key.len()
        .checked_sub(8)
        .map(|at| u64::from_be_bytes(key[at..].try_into().expect("8 bytes")))
        .ok_or_else(|| Error::corrupt(None, "a notes posting key has no id"))
}

/// What the index holds of a note's text (its key and value): each term with its count, the
/// length in terms, and the trigrams. Cutting them is the costly part of indexing, so
/// `note_write` does it before its write transaction when it can.
pub(crate) struct Postings {
    tf: HashMap<String, u32>,
    len: u32,
    grams: BTreeSet<String>,
}

impl Postings {
    pub(crate) fn of(key: &str, value: &serde_json::Value) -> Postings {
        let text = search_text(key, value);
        let all = tokens(&text);
        let len = u32::try_from(all.len()).unwrap_or(u32::MAX);
        let mut tf: HashMap<String, u32> = HashMap::new();
        for t in all.into_iter().filter(|t| !t.term.contains('\0')) {
            *tf.entry(t.term).or_default() += 1;
        }
        Postings { tf, len, grams: grams(&text) }
    }

    fn of_note(note: &NoteRecord) -> Postings {
        Postings::of(&note.key, &note.value)
    }
}

/// Replaces the postings of `old` (the previous version, if any, with its postings) with those
/// of `new`, writing only what changed: a small edit of a large note touches few postings.
pub(crate) fn replace(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    old: Option<(&NoteRecord, &Postings)>,
    new: (&NoteRecord, &Postings),
) -> Result<()> {
    let (new, Postings { tf, len, grams }) = new;
    let len = *len;
    let id = new.id.to_be_bytes();
    let new_meta = meta(new);
    if old.is_none() {
        tx.put(IDS, &id_key(part, new.id), new.identity().encode().as_bytes())?;
    }
    let empty = (HashMap::new(), BTreeSet::new());
    let (old_tf, old_len, old_grams, old_meta) = match old {
        Some((prev, p)) => (&p.tf, p.len, &p.grams, meta(prev)),
        None => (&empty.0, 0, &empty.1, new_meta.clone()),
    };
    let tok_key = |term: &str| part.key(&[term.as_bytes(), b"\0", &id]);
    for term in old_tf.keys().filter(|t| !tf.contains_key(*t)) {
        tx.delete(TOK, &tok_key(term))?;
    }
    for (term, n) in tf {
        if old.is_none() || old_meta != new_meta || old_len != len || old_tf.get(term) != Some(n) {
            tx.put(TOK, &tok_key(term), &[&n.to_be_bytes()[..], &len.to_be_bytes(), &new_meta].concat())?;
        }
    }
    let tri_key = |g: &str| part.key(&[g.as_bytes(), b"\0", &id]);
    // A note keeps its id across versions, so old and new are both sampled or both not.
    let counted = sampled(new);
    for g in old_grams.difference(grams) {
        tx.delete(TRI, &tri_key(g))?;
        if counted {
            count(tx, part, g, -1)?;
        }
    }
    for g in grams {
        let added = !old_grams.contains(g);
        if added && counted {
            count(tx, part, g, 1)?;
        }
        if old.is_none() || old_meta != new_meta || added {
            tx.put(TRI, &tri_key(g), &new_meta)?;
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

/// Removes `note`'s postings and id (as `replace` wrote them).
pub(crate) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, note: &NoteRecord) -> Result<()> {
    let id = note.id.to_be_bytes();
    tx.delete(IDS, &id_key(part, note.id))?;
    let Postings { tf, grams, .. } = Postings::of_note(note);
    for term in tf.keys() {
        tx.delete(TOK, &part.key(&[term.as_bytes(), b"\0", &id]))?;
    }
    for g in grams {
        tx.delete(TRI, &part.key(&[g.as_bytes(), b"\0", &id]))?;
        if sampled(note) {
            count(tx, part, &g, -1)?;
        }
    }
    Ok(())
}

/// One note holding a query term or trigram: its id and features.
pub(crate) struct Hit {
    pub id: u64,
    pub features: Features,
}

/// Every current note holding a query term or trigram that `admit` lets through (it sees each
/// posting's `Meta`; a note's postings all carry the same), in id order (the order candidates
/// keep on ties), with its features.
pub(crate) fn lookup(
    snap: &Snapshot,
    part: &Partition,
    query: &Query,
    admit: &dyn Fn(&Meta<'_>) -> bool,
) -> Result<Vec<Hit>> {
    let blank = || Features { tf: Counts::zeros(query.terms.len()), ..Features::default() };
    // The trigram channel first; each term's postings (sorted by id, like every posting list)
    // are then merged in.
    let mut docs: Vec<Hit> = lookup_grams(snap, part, query, admit)?
        .into_iter()
        .map(|c| Hit { id: c.id, features: Features { grams: c.held, ..blank() } })
        .collect();
    let mut list: Vec<(u64, u32, u32)> = Vec::new();
    let mut admit = Admit::new(admit);
    for (t, term) in query.terms.iter().enumerate() {
        let prefix = part.key(&[term.as_bytes(), b"\0"]);
        list.clear();
        snap.scan_prefix(TOK, &prefix, |k, v| {
            let (Some(tf), Some(len), Some(meta)) = (v.get(..4), v.get(4..8), v.get(8..)) else {
                return Err(Error::corrupt(None, "a notes term posting is too short"));
            };
            if admit.check(meta)? {
                let word = |b: &[u8]| u32::from_be_bytes(b.try_into().expect("4 bytes"));
                list.push((id_of(k)?, word(tf), word(len)));
            }
            Ok(true)
        })?;
        let mut merged = Vec::with_capacity(docs.len().max(list.len()));
        let mut old = docs.into_iter().peekable();
        for &(id, tf, len) in &list {
            while let Some(d) = old.next_if(|d| d.id < id) {
                merged.push(d);
            }
            let mut hit = old.next_if(|d| d.id == id).unwrap_or_else(|| Hit { id, features: blank() });
            hit.features.tf[t] = tf;
            hit.features.len = len;
            merged.push(hit);
        }
        merged.extend(old);
        docs = merged;
    }
    Ok(docs)
}

/// A trigram-channel candidate: its id and the query trigrams it holds so far.
#[derive(Clone, Copy)]
struct Candidate {
    id: u64,
    held: u32,
}

/// The trigram channel's side of `lookup`: the admitted notes that hold at least `need`
/// (`min_grams`: ⌈G/2⌉) of the query's G trigrams, in id order, with the count they hold. Such a
/// note holds one of any G − need + 1 of them: the postings of the rarest G − need + 1 (by
/// `TRI_COUNT`) give every candidate, and the other trigrams are then counted for the candidates
/// only — by walking a trigram's postings when they are few, else by point reads — stopping for
/// a candidate once it cannot reach `need`. Counts are exact for every note that can enter the
/// channel; a note that cannot is left out (its share is below the threshold either way), so
/// ranking equals a full read. Posting lists are sorted by id, so candidates are gathered and
/// counted by merging sorted lists.
fn lookup_grams(
    snap: &Snapshot,
    part: &Partition,
    query: &Query,
    admit: &dyn Fn(&Meta<'_>) -> bool,
) -> Result<Vec<Candidate>> {
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
    let mut list: Vec<u64> = Vec::new();
    let mut admit = Admit::new(admit);
    for (_, g) in scan {
        let prefix = part.key(&[g.as_bytes(), b"\0"]);
        list.clear();
        snap.scan_prefix(TRI, &prefix, |k, v| {
            if admit.check(v)? {
                list.push(id_of(k)?);
            }
            Ok(true)
        })?;
        // Merge the list into the candidates (both sorted by id).
        let mut merged = Vec::with_capacity(cands.len() + list.len());
        let mut old = cands.iter().copied().peekable();
        for &id in &list {
            while let Some(c) = old.next_if(|c| c.id < id) {
                merged.push(c);
            }
            match old.next_if(|c| c.id == id) {
                Some(c) => merged.push(Candidate { held: c.held + 1, ..c }),
                None => merged.push(Candidate { id, held: 1 }),
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
                let id = id_of(k)?;
                while at < cands.len() && cands[at].id < id {
                    at += 1;
                }
                if at == cands.len() {
                    return Ok(false);
                }
                if cands[at].id == id {
                    cands[at].held += 1;
                }
                Ok(true)
            })?;
        } else {
            for c in &mut cands {
                key.clear();
                key.extend_from_slice(&prefix);
                key.extend_from_slice(&c.id.to_be_bytes());
                if snap.get_with(TRI, &key, |v| v.is_some())? {
                    c.held += 1;
                }
            }
        }
    }
    cands.retain(|c| c.held >= need);
    Ok(cands)
}
