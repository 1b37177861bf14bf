//! The query index of current notes, so `note_list` with a `query` reads the postings of the
//! query's terms and trigrams instead of every note. Written in the note's own transaction
//! (a replace rewrites the entries that changed; a forget removes them), so it never disagrees
//! with `n.cur`.
//!
//! Postings are packed in blocks of 128 consecutive note ids (`block.rs`): `n.term`
//! `part | term \0 | block` → entries `tf varint`; `n.gram` `part | trigram \0 | block` → empty
//! entries; `n.doc` `part | block` → entries `len varint | meta`, meta = `private u8 | kind u8 |
//! visibility u8 | owner` (the kind's position in `KINDS`; visibility 0 user, 1 task, 2 agent;
//! the owner as in the identity, empty for user notes). A query walks its terms' and trigrams'
//! blocks, then reads the doc blocks of the candidates once each, which decide visibility and
//! the filters and give the lengths BM25 needs. A note's length and meta live once, in `n.doc`,
//! so an edit that changes the length rewrites one doc entry and the entries of the terms whose
//! counts changed, not every posting. `n.id` `part | id u64 BE` → identity leads from a hit to
//! its record, read only for the notes of the page. Postings carry the note's id (which it
//! keeps across versions), not its identity. Terms and trigrams hold no NUL, so `term \0`
//! prefixes are unambiguous.

use super::block::{self, block_of, id_at, slot_of};
use super::record::{CUR, KINDS, NoteRecord, Visibility, search_text};
use super::search::{Counts, Features, Query, grams, min_grams};
use crate::error::{Error, Result};
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::text::tokens;
use crate::varint;
use crate::write::WriteTxn;
use std::collections::{BTreeSet, HashMap};

pub(crate) const TERM: &str = "n.term";
pub(crate) const GRAM: &str = "n.gram";
pub(crate) const DOC: &str = "n.doc";
/// The trees of the index's first layout (one key per posting, meta on each), rebuilt into the
/// blocks above by `upgrade`.
const OLD_TREES: [&str; 2] = ["n.tok", "n.tri"];
/// `part | id u64 BE` → the note's encoded identity.
pub(crate) const IDS: &str = "n.id";
/// `part | trigram` → u32 BE: how many current notes of the sample (`sampled`) hold the trigram.
/// Guides a query to its rarest trigrams first; it never decides a match (postings do), so an
/// estimate is enough, and counting one note in `SAMPLE` keeps the writes it costs small.
pub(crate) const TRI_COUNT: &str = "n.tric";
/// One note in this many (by id, which a note keeps across versions) is counted in `TRI_COUNT`.
pub(crate) const SAMPLE: u64 = 8;
/// A trigram's postings are walked (rather than its blocks read once per candidate block) while
/// they number at most this many times the candidates: a walk decodes every posting, a read
/// descends the tree.
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

/// `admit` over notes' metas, remembering its answers: a partition's notes carry few distinct
/// metas (kinds × visibilities × owners), so most are decided by comparing a few bytes.
struct Admit<'a> {
    decide: &'a dyn Fn(&Meta<'_>) -> bool,
    /// Metas decided so far with their answers, at most `REMEMBERED`.
    seen: Vec<(Vec<u8>, bool)>,
}

/// How many distinct metas `Admit` keeps; past that, the rest are decided each time.
const REMEMBERED: usize = 16;

impl<'a> Admit<'a> {
    fn new(admit: &'a dyn Fn(&Meta<'_>) -> bool) -> Self {
        Admit { decide: admit, seen: Vec::new() }
    }

    fn check(&mut self, meta: &[u8]) -> Result<bool> {
        if let Some((_, ok)) = self.seen.iter().find(|(m, _)| m.as_slice() == meta) {
            return Ok(*ok);
        }
        let ok = (self.decide)(&decode_meta(meta)?);
        if self.seen.len() < REMEMBERED {
            self.seen.push((meta.to_vec(), ok));
        }
        Ok(ok)
    }
}

/// `part | id BE`: where `IDS` keeps a note's identity.
pub(crate) fn id_key(part: &Partition, id: u64) -> Vec<u8> {
    part.key(&[&id.to_be_bytes()])
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

/// The `n.doc` payload of a note: its length in terms and its meta.
fn doc_payload(len: u32, meta: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + meta.len());
    varint::put(&mut out, u64::from(len));
    out.extend_from_slice(meta);
    out
}

fn tf_payload(n: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(5);
    varint::put(&mut out, u64::from(n));
    out
}

fn u32_of(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Replaces the postings of `old` (the previous version, if any, with its postings) with those
/// of `new`, writing only what changed: a small edit of a large note touches few entries.
pub(crate) fn replace(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    old: Option<(&NoteRecord, &Postings)>,
    new: (&NoteRecord, &Postings),
) -> Result<()> {
    let (new, Postings { tf, len, grams }) = new;
    let (id, blk) = (new.id, block_of(new.id));
    let new_meta = meta(new);
    if old.is_none() {
        tx.put(IDS, &id_key(part, id), new.identity().encode().as_bytes())?;
    }
    let empty = (HashMap::new(), BTreeSet::new());
    let (old_tf, old_len, old_grams, old_meta) = match old {
        Some((prev, p)) => (&p.tf, p.len, &p.grams, Some(meta(prev))),
        None => (&empty.0, 0, &empty.1, None),
    };
    if old_meta.as_ref() != Some(&new_meta) || old_len != *len {
        block::set(tx, DOC, &part.key(&[&blk]), id, Some(&doc_payload(*len, &new_meta)))?;
    }
    let term_key = |term: &str| part.key(&[term.as_bytes(), b"\0", &blk]);
    for term in old_tf.keys().filter(|t| !tf.contains_key(*t)) {
        block::set(tx, TERM, &term_key(term), id, None)?;
    }
    for (term, n) in tf {
        if old_tf.get(term) != Some(n) {
            block::set(tx, TERM, &term_key(term), id, Some(&tf_payload(*n)))?;
        }
    }
    let gram_key = |g: &str| part.key(&[g.as_bytes(), b"\0", &blk]);
    // A note keeps its id across versions, so old and new are both sampled or both not.
    let counted = sampled(new);
    for g in old_grams.difference(grams) {
        block::set(tx, GRAM, &gram_key(g), id, None)?;
        if counted {
            count(tx, part, g, -1)?;
        }
    }
    for g in grams.difference(old_grams) {
        block::set(tx, GRAM, &gram_key(g), id, Some(&[]))?;
        if counted {
            count(tx, part, g, 1)?;
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
    let (id, blk) = (note.id, block_of(note.id));
    tx.delete(IDS, &id_key(part, id))?;
    block::set(tx, DOC, &part.key(&[&blk]), id, None)?;
    let Postings { tf, grams, .. } = Postings::of_note(note);
    for term in tf.keys() {
        block::set(tx, TERM, &part.key(&[term.as_bytes(), b"\0", &blk]), id, None)?;
    }
    for g in grams {
        block::set(tx, GRAM, &part.key(&[g.as_bytes(), b"\0", &blk]), id, None)?;
        if sampled(note) {
            count(tx, part, &g, -1)?;
        }
    }
    Ok(())
}

/// Rebuilds the index of a store written with the first layout (`OLD_TREES`) into posting
/// blocks, in one transaction; a store already in blocks (or without notes) is left alone.
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    let snap = store.snapshot()?;
    let mut old = false;
    for tree in OLD_TREES {
        snap.scan_prefix(tree, &[], |_, _| {
            old = true;
            Ok(false)
        })?;
    }
    if !old {
        return Ok(());
    }
    store.write(|tx| {
        // Another call may have rebuilt it between the snapshot and this transaction.
        let mut stale = Vec::new();
        for tree in OLD_TREES {
            stale.extend(tx.prefix(tree, &[])?.into_iter().map(|(key, _)| (tree, key)));
        }
        if stale.is_empty() {
            return Ok(());
        }
        for (tree, key) in stale {
            tx.delete(tree, &key)?;
        }
        for (key, _) in tx.prefix(TRI_COUNT, &[])? {
            tx.delete(TRI_COUNT, &key)?;
        }
        for (key, value) in tx.prefix(CUR, &[])? {
            let part = Partition::of_key(&key)?;
            let note = NoteRecord::decode(&value)?;
            let postings = Postings::of_note(&note);
            replace(tx, &part, None, (&note, &postings))?;
        }
        Ok(())
    })?;
    Ok(())
}

/// One note holding a query term or trigram: its id and features.
pub(crate) struct Hit {
    pub id: u64,
    pub features: Features,
}

/// Every current note holding a query term or trigram that `admit` lets through (it sees each
/// note's `Meta`), in id order (the order candidates keep on ties), with its features.
pub(crate) fn lookup(
    snap: &Snapshot,
    part: &Partition,
    query: &Query,
    admit: &dyn Fn(&Meta<'_>) -> bool,
) -> Result<Vec<Hit>> {
    let blank = || Features { tf: Counts::zeros(query.terms.len()), ..Features::default() };
    // The trigram channel first; each term's postings (sorted by id, like every posting list)
    // are then merged in.
    let mut docs: Vec<Hit> = lookup_grams(snap, part, query)?
        .into_iter()
        .map(|c| Hit { id: c.id, features: Features { grams: c.held, ..blank() } })
        .collect();
    let mut list: Vec<(u64, u32)> = Vec::new();
    for (t, term) in query.terms.iter().enumerate() {
        let prefix = part.key(&[term.as_bytes(), b"\0"]);
        list.clear();
        snap.scan_prefix(TERM, &prefix, |k, v| {
            for entry in block::entries(v) {
                let (slot, payload) = entry?;
                let tf = varint::get(payload, &mut 0, "a notes term posting")?;
                list.push((id_at(k, slot)?, u32_of(tf)));
            }
            Ok(true)
        })?;
        let mut merged = Vec::with_capacity(docs.len().max(list.len()));
        let mut old = docs.into_iter().peekable();
        for &(id, tf) in &list {
            while let Some(d) = old.next_if(|d| d.id < id) {
                merged.push(d);
            }
            let mut hit = old.next_if(|d| d.id == id).unwrap_or_else(|| Hit { id, features: blank() });
            hit.features.tf[t] = tf;
            merged.push(hit);
        }
        merged.extend(old);
        docs = merged;
    }
    admitted(snap, part, docs, admit)
}

/// The hits `admit` lets through, with their lengths: the doc block of each run of hits is read
/// once (hits are in id order, so a block's hits are consecutive).
fn admitted(snap: &Snapshot, part: &Partition, hits: Vec<Hit>, admit: &dyn Fn(&Meta<'_>) -> bool) -> Result<Vec<Hit>> {
    let mut admit = Admit::new(admit);
    let mut out = Vec::with_capacity(hits.len());
    let mut hits = hits.into_iter().peekable();
    while let Some(first) = hits.peek() {
        let blk = block_of(first.id);
        // Per slot: the note's length when admitted.
        let mut lens = [None::<u32>; 128];
        snap.get_with(DOC, &part.key(&[&blk]), |v| -> Result<()> {
            for entry in block::entries(v.unwrap_or_default()) {
                let (slot, payload) = entry?;
                let mut at = 0;
                let len = u32_of(varint::get(payload, &mut at, "a notes doc entry")?);
                if admit.check(&payload[at..])? {
                    lens[usize::from(slot)] = Some(len);
                }
            }
            Ok(())
        })??;
        while let Some(mut hit) = hits.next_if(|h| block_of(h.id) == blk) {
            if let Some(len) = lens[usize::from(slot_of(hit.id))] {
                hit.features.len = len;
                out.push(hit);
            }
        }
    }
    Ok(out)
}

/// A trigram-channel candidate: its id and the query trigrams it holds so far.
#[derive(Clone, Copy)]
struct Candidate {
    id: u64,
    held: u32,
}

/// The slots present in a block value, as bits.
fn slots(value: &[u8]) -> Result<u128> {
    let mut bits = 0u128;
    for entry in block::entries(value) {
        bits |= 1u128 << entry?.0;
    }
    Ok(bits)
}

/// The trigram channel's side of `lookup`: the notes that hold at least `need` (`min_grams`:
/// ⌈G/2⌉) of the query's G trigrams, in id order, with the count they hold. Such a note holds one
/// of any G − need + 1 of them: the postings of the rarest G − need + 1 (by `TRI_COUNT`) give
/// every candidate, and the other trigrams are then counted for the candidates only — by walking
/// a trigram's postings when they are few, else by reading the blocks that hold candidates —
/// stopping for a candidate once it cannot reach `need`. Counts are exact for every note that can
/// enter the channel; a note that cannot is left out (its share is below the threshold either
/// way), so ranking equals a full read. Posting lists are sorted by id, so candidates are
/// gathered and counted by merging sorted lists. Visibility is decided afterwards, per note.
fn lookup_grams(snap: &Snapshot, part: &Partition, query: &Query) -> Result<Vec<Candidate>> {
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
    for (_, g) in scan {
        let prefix = part.key(&[g.as_bytes(), b"\0"]);
        list.clear();
        snap.scan_prefix(GRAM, &prefix, |k, v| {
            for entry in block::entries(v) {
                list.push(id_at(k, entry?.0)?);
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
            snap.scan_prefix(GRAM, &prefix, |k, v| {
                for entry in block::entries(v) {
                    let id = id_at(k, entry?.0)?;
                    while at < cands.len() && cands[at].id < id {
                        at += 1;
                    }
                    if at == cands.len() {
                        return Ok(false);
                    }
                    if cands[at].id == id {
                        cands[at].held += 1;
                    }
                }
                Ok(true)
            })?;
        } else {
            let mut at = 0;
            while at < cands.len() {
                let blk = block_of(cands[at].id);
                key.clear();
                key.extend_from_slice(&prefix);
                key.extend_from_slice(&blk);
                let bits = snap.get_with(GRAM, &key, |v| v.map_or(Ok(0), slots))??;
                while at < cands.len() && block_of(cands[at].id) == blk {
                    if bits & (1u128 << slot_of(cands[at].id)) != 0 {
                        cands[at].held += 1;
                    }
                    at += 1;
                }
            }
        }
    }
    cands.retain(|c| c.held >= need);
    Ok(cands)
}
