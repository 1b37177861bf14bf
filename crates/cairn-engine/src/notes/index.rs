//! The query index of current notes, so `note_list` with a `query` reads the postings of the
//! query's terms and trigrams instead of every note. Written in the note's own transaction
//! (a replace rewrites the entries that changed; a forget removes them), so it never disagrees
//! with `n.cur`.
//!
//! Postings are packed in blocks of 128 consecutive note ids (`block.rs`): `n.term`
//! `part | term \0 | block` → entries `tf varint`; `n.gram` `part | trigram \0 | block` → empty
//! entries; `n.doc` `part | block` → entries `len varint | meta`, meta = `private u8 | kind u8 |
//! visibility u8 | owner` (the kind's position in `KINDS`; visibility 0 user, 1 task, 2 agent;
//! the owner as in the identity, empty for user notes). A query (`lookup.rs`) walks its terms'
//! and trigrams' blocks, then reads the doc blocks of the candidates once each, which decide
//! visibility and the filters and give the lengths BM25 needs. A note's length and meta live once, in `n.doc`,
//! so an edit that changes the length rewrites one doc entry and the entries of the terms whose
//! counts changed, not every posting. `n.id` `part | id u64 BE` → identity leads from a hit to
//! its record, read only for the notes of the page. Postings carry the note's id (which it
//! keeps across versions), not its identity. Terms and trigrams hold no NUL, so `term \0`
//! prefixes are unambiguous; a term too long for its key is keyed by its head and a digest
//! (`term_prefix`).

use super::block::{self, block_of};
use super::record::{CUR, KINDS, NoteRecord, Visibility};
use super::search::{packed_grams, unpack_gram};
use super::search_text::SearchText;
use crate::error::{Error, Result};
use crate::key_text::fit;
use crate::knowledge::Partition;
use crate::store::Store;
use crate::varint;
use crate::write::WriteTxn;
use std::collections::HashMap;

pub(crate) const TERM: &str = "n.term";
pub(crate) const GRAM: &str = "n.gram";
pub(crate) const DOC: &str = "n.doc";
/// The trees of the index's first layout (one key per posting, meta on each), rebuilt into the
/// blocks above by `upgrade`.
const OLD_TREES: [&str; 2] = ["n.tok", "n.tri"];
/// `[]` → `LAYOUT`: the index holds folded terms and trigrams (case, accents and NFC/NFD folded,
/// `text::fold_text`) of what `search_text::SearchText` gives now. A store indexed before lacks
/// it (its keys are unfolded spellings that neither a query nor a note's removal would find) or
/// holds `[1]` to `[4]` (its notes' keys were not split into parts, or not at camelCase
/// humps nor given the words their parts abbreviate, `key_words.rs`; or the identifiers of its
/// values' strings were not given their parts by the tokenizer, `text::ident_parts`; or a task
/// note's task id was not indexed; a rewrite
/// would not add them: `replace` writes only the difference from the old version's terms as cut
/// now), and `upgrade` rebuilds its index once.
const FOLDED: &str = "n.folded";
/// The layout `FOLDED` marks: 2 since note keys are indexed as their parts too, 3 since as their
/// camelCase parts and the words those abbreviate, 4 since the identifiers in a value's strings
/// give their parts (`config.ts`, `retryPolicy`, `MAX_RETRY_COUNT`; a key's come from
/// `key_words` alone, as before), 5 since a task note's task id is searched too (`search_text.rs`).
const LAYOUT: &[u8] = &[5];
/// `part | id u64 BE` → the note's encoded identity.
pub(crate) const IDS: &str = "n.id";
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

pub(crate) fn decode_meta(b: &[u8]) -> Result<Meta<'_>> {
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

/// `part | term \0`: the prefix of a term's posting blocks. A term too long for the key (one
/// unbroken token: a JWT, base64, a long URL) is kept as its head and a digest
/// (`key_text::fit`), so it still matches exactly.
pub(crate) fn term_prefix(part: &Partition, term: &str) -> Vec<u8> {
    part.key(&[&keyed_term(part, term), b"\0"])
}

/// `part | term \0 | block`: one posting block of a term.
fn term_key(part: &Partition, term: &str, blk: [u8; 8]) -> Vec<u8> {
    part.key(&[&keyed_term(part, term), b"\0", &blk])
}

fn keyed_term<'a>(part: &Partition, term: &'a str) -> std::borrow::Cow<'a, [u8]> {
    fit(term, part.prefix().len() + 1 + 8)
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
    /// Packed (`search::packed_grams`): sorted and distinct.
    grams: Vec<u64>,
}

impl Postings {
    pub(crate) fn of(key: &str, task: Option<&str>, value: &serde_json::Value) -> Postings {
        let SearchText { text, terms } = SearchText::of(key, task, value);
        let len = u32::try_from(terms.len()).unwrap_or(u32::MAX);
        let mut tf: HashMap<String, u32> = HashMap::new();
        for term in terms.into_iter().filter(|t| !t.contains('\0')) {
            *tf.entry(term).or_default() += 1;
        }
        Postings { tf, len, grams: packed_grams(&text) }
    }

    fn of_note(note: &NoteRecord) -> Postings {
        Postings::of(&note.key, note.task_id(), &note.value)
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

/// Replaces the postings of `old` (the previous version, if any, with its postings) with those
/// of `new`, writing only what changed: a small edit of a large note touches few entries.
pub(crate) fn replace(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    old: Option<(&NoteRecord, &Postings)>,
    new: (&NoteRecord, &Postings),
) -> Result<()> {
    let (new, Postings { tf, len, grams }) = new;
    // The first note of a store that had none (`upgrade` leaves such a store unmarked): its
    // postings are written folded from the start.
    if tx.get(FOLDED, &[])?.is_none() {
        tx.put(FOLDED, &[], LAYOUT)?;
    }
    let (id, blk) = (new.id, block_of(new.id));
    let new_meta = meta(new);
    if old.is_none() {
        tx.put(IDS, &id_key(part, id), new.identity().encode().as_bytes())?;
    }
    let empty = (HashMap::new(), Vec::new());
    let (old_tf, old_len, old_grams, old_meta) = match old {
        Some((prev, p)) => (&p.tf, p.len, &p.grams, Some(meta(prev))),
        None => (&empty.0, 0, &empty.1, None),
    };
    if old_meta.as_ref() != Some(&new_meta) || old_len != *len {
        block::set(tx, DOC, &part.key(&[&blk]), id, Some(&doc_payload(*len, &new_meta)))?;
    }
    let term_key = |term: &str| term_key(part, term, blk);
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
    for g in difference(old_grams, grams) {
        let g = unpack_gram(g);
        block::set(tx, GRAM, &gram_key(&g), id, None)?;
        if counted {
            count(tx, part, &g, -1)?;
        }
    }
    for g in difference(grams, old_grams) {
        let g = unpack_gram(g);
        block::set(tx, GRAM, &gram_key(&g), id, Some(&[]))?;
        if counted {
            count(tx, part, &g, 1)?;
        }
    }
    Ok(())
}

/// The items of `a` not in `b` (both sorted and distinct), in order.
fn difference<'a>(a: &'a [u64], b: &'a [u64]) -> impl Iterator<Item = u64> + 'a {
    let mut rest = b.iter().peekable();
    a.iter().copied().filter(move |x| {
        while rest.next_if(|y| **y < *x).is_some() {}
        rest.peek() != Some(&x)
    })
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

pub(crate) fn decode_count(b: &[u8]) -> u32 {
    b.try_into().map_or(u32::MAX, u32::from_be_bytes)
}

/// Removes `note`'s postings and id (as `replace` wrote them).
pub(crate) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, note: &NoteRecord) -> Result<()> {
    let (id, blk) = (note.id, block_of(note.id));
    tx.delete(IDS, &id_key(part, id))?;
    block::set(tx, DOC, &part.key(&[&blk]), id, None)?;
    let Postings { tf, grams, .. } = Postings::of_note(note);
    for term in tf.keys() {
        block::set(tx, TERM, &term_key(part, term, blk), id, None)?;
    }
    for g in grams.into_iter().map(unpack_gram) {
        block::set(tx, GRAM, &part.key(&[g.as_bytes(), b"\0", &blk]), id, None)?;
        if sampled(note) {
            count(tx, part, &g, -1)?;
        }
    }
    Ok(())
}

/// Whether the store's notes index needs no `upgrade`: nothing is left in the first layout, and
/// its terms and trigrams are folded (`FOLDED`).
pub(crate) fn current(store: &Store) -> Result<bool> {
    let snap = store.snapshot()?;
    if snap.get(FOLDED, &[])?.as_deref() != Some(LAYOUT) {
        return Ok(false);
    }
    let mut old = false;
    for tree in OLD_TREES {
        snap.scan_prefix(tree, &[], |_, _| {
            old = true;
            Ok(false)
        })?;
    }
    Ok(!old)
}

/// Whether the store holds no note and nothing of the first layout: its index has nothing to
/// rebuild, and its first note write marks it folded (`replace`).
fn unused(store: &Store) -> Result<bool> {
    let snap = store.snapshot()?;
    let mut any = false;
    for tree in OLD_TREES.into_iter().chain([CUR]) {
        snap.scan_prefix(tree, &[], |_, _| {
            any = true;
            Ok(false)
        })?;
    }
    Ok(!any)
}

/// Rebuilds the index of a store written with the first layout (`OLD_TREES`), or before terms
/// and trigrams were folded or keys split (`FOLDED`), from the current notes, in one transaction, and marks it folded; a
/// current store is left alone. A store without notes is left as it is, so a fresh store's first
/// call writes nothing unless it writes a note (a refused call changes nothing).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    if current(store)? || unused(store)? {
        return Ok(());
    }
    store.write(|tx| {
        // Another call may have rebuilt it between the snapshot and this transaction.
        let mut stale = false;
        for tree in OLD_TREES {
            stale |= !tx.prefix(tree, &[])?.is_empty();
        }
        if !stale && tx.get(FOLDED, &[])?.as_deref() == Some(LAYOUT) {
            return Ok(());
        }
        for tree in OLD_TREES.into_iter().chain([TERM, GRAM, DOC, IDS, TRI_COUNT]) {
            for (key, _) in tx.prefix(tree, &[])? {
                tx.delete(tree, &key)?;
            }
        }
        for (key, value) in tx.prefix(CUR, &[])? {
            let part = Partition::of_key(&key)?;
            let note = NoteRecord::decode(&value)?;
            let postings = Postings::of_note(&note);
            replace(tx, &part, None, (&note, &postings))?;
        }
        tx.put(FOLDED, &[], LAYOUT)
    })?;
    Ok(())
}
