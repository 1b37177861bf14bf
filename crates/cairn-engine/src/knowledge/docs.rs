//! Documents and passages: `remember_text` stores a text once (same text and date again is
//! `already`), cuts it into passages, indexes them for full-text search, and links each passage
//! to every stored entity it names.

use super::graph::entities_in;
use super::ids::next_id;
use super::part::Partition;
use super::records::{decode, encode};
use super::tally::Tally;
use super::trees::{DOC, DOC_HASH, DOC_HASH8, MENTION, MENTIONED, PSG};
use super::valid::instant;
use crate::error::{Error, Result};
use crate::fts;
use crate::text::{Linker, Passage, char_slice, chunk_text, heading_path, headings, mentions_name, with_headings};
use crate::time::iso_ms;
use crate::write::WriteTxn;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// The most text one call stores (DESIGN.md §2: 1 MiB of text per call).
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    pub id: u64,
    pub text: String,
    /// The label citations show (`source`).
    pub label: Option<String>,
    /// When it was said or true (ISO 8601, as given).
    pub date: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub ingested_at: i64,
}

/// A stored passage: a code-point span of its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassageSpan {
    pub start: usize,
    pub end: usize,
}

/// What `remember_text` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    pub doc_id: u64,
    /// The same text with the same date was stored before: nothing changed.
    pub already: bool,
    pub passages: u32,
    /// (passage ordinal, entity id) links made.
    pub mentions: Vec<(u32, u64)>,
    /// Ordinals of passages that name no stored entity.
    pub unlinked: Vec<u32>,
}

/// Where the document index files a document's text and date (`hash_key`), computed off the
/// writer thread where it can be. Keys are short (`DOC_HASH8`: 8 bytes of digest, no date), so a
/// leaf holds several times more of them and a commit's random inserts dirty fewer pages; a short
/// key may be shared by different texts, so a match is confirmed against the stored document.
/// The date is filed as the instant it names (`filed_date`): the same text with the same instant
/// spelled two ways is one document. Indexes written before filed the date as given, so the
/// spellings of the instant a caller is likely to have sent are looked up too (`spellings`).
#[derive(Debug, Clone, Default)]
pub(crate) struct DocHash {
    /// `part | first 8 bytes of sha256(sha256(text) | filed date)` in `DOC_HASH8`.
    key: Vec<u8>,
    /// The same with each other spelling of the date, where an index written before filed by the
    /// date as given (still read and emptied, never added to).
    spelled: Vec<Vec<u8>>,
    /// `part | sha256(text) | date` in `DOC_HASH` for each spelling, the layout before short keys
    /// (still read, never written).
    old: Vec<Vec<u8>>,
    /// The ids filed under `key` when `stored_doc` last looked (none found matching), so adding
    /// the new document needs no second look-up.
    seen: Vec<u8>,
}

/// A document's date as the index files it: the instant it names in the reply form (`iso_ms`:
/// `2024-01-01`, `2024-01-01T00:00:00Z`, `…T00:00:00.000Z` and `…T05:00:00+05:00` are one), or as
/// given when it names none (only an import of an older export stores such a date).
fn filed_date(date: &str) -> Cow<'_, str> {
    match instant(date) {
        Some(ms) => Cow::Owned(iso_ms(ms)),
        None => Cow::Borrowed(date),
    }
}

/// The spellings of `date` an index written before may have filed its instant under, other than
/// the filed form: as given, and in UTC as a date alone (a midnight), without a fraction (whole
/// seconds) and with one. A document stored before with the instant spelled otherwise (another
/// zone, other fraction digits) is found only when sent again as it was stored.
fn spellings(date: &str) -> Vec<String> {
    let mut out = vec![date.to_owned()];
    if let Some(ms) = instant(date) {
        let full = iso_ms(ms);
        if ms % 86_400_000 == 0 {
            out.push(full[..10].to_owned());
        }
        if ms % 1000 == 0 {
            out.push(format!("{}Z", &full[..19]));
        }
        out.push(full);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether two document dates name the same instant (or are the same text, when they name none).
fn same_date(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b || instant(a).is_some_and(|t| instant(b) == Some(t)),
        (a, b) => a == b,
    }
}

pub(crate) fn hash_key(part: &Partition, text: &str, date: Option<&str>) -> DocHash {
    let digest = Sha256::digest(text.as_bytes());
    let short = |date: &str| part.key(&[&Sha256::new().chain_update(digest).chain_update(date).finalize()[..8]]);
    let Some(date) = date else {
        return DocHash { key: short(""), spelled: Vec::new(), old: vec![part.key(&[&digest])], seen: Vec::new() };
    };
    let filed = filed_date(date);
    let spelled = spellings(date);
    DocHash {
        key: short(&filed),
        spelled: spelled.iter().filter(|d| **d != *filed).map(|d| short(d)).collect(),
        old: spelled.iter().map(|d| part.key(&[&digest, d.as_bytes()])).collect(),
        seen: Vec::new(),
    }
}

/// The ids of a `DOC_HASH8` value (u64 BE each).
fn hash_ids(value: &[u8]) -> Result<impl Iterator<Item = u64> + '_> {
    if value.is_empty() || !value.len().is_multiple_of(8) {
        return Err(Error::corrupt(None, "a document hash entry is not a list of 8-byte ids"));
    }
    Ok(value.chunks_exact(8).map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes"))))
}

/// The id of the document of `part` stored with exactly `text` and the instant `date` names
/// (whose `hash_key` is `hash`), if any. Remembers what it saw under the key for `add_hash`.
pub(crate) fn stored_doc(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    hash: &mut DocHash,
    text: &str,
    date: Option<&str>,
) -> Result<Option<u64>> {
    let seen = tx.get(DOC_HASH8, &hash.key)?.unwrap_or_default();
    let found = filed_match(tx, part, &seen, text, date)?;
    hash.seen = seen;
    if found.is_some() {
        return Ok(found);
    }
    // An index written before filed the date as given: another spelling of the same instant.
    for key in &hash.spelled {
        let ids = tx.get(DOC_HASH8, key)?.unwrap_or_default();
        if let Some(id) = filed_match(tx, part, &ids, text, date)? {
            return Ok(Some(id));
        }
    }
    // A store written before the short keys: its documents are filed by full digest (exact).
    for key in &hash.old {
        if let Some(id) = tx.get(DOC_HASH, key)? {
            let id = id
                .as_slice()
                .try_into()
                .map(u64::from_be_bytes)
                .map_err(|_| Error::corrupt(None, "a document hash entry is not 8 bytes"))?;
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// The first of the ids `filed` (a `DOC_HASH8` value, empty for none) whose document has `text`
/// and names the instant `date` names.
fn filed_match(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    filed: &[u8],
    text: &str,
    date: Option<&str>,
) -> Result<Option<u64>> {
    if filed.is_empty() {
        return Ok(None);
    }
    for id in hash_ids(filed)? {
        let Some(bytes) = tx.get(DOC, &part.key(&[&id.to_be_bytes()]))? else { continue };
        let d: Document = decode(&bytes, "document")?;
        if d.text == text && same_date(d.date.as_deref(), date) {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// The stored document `id` of `part`, read in the caller's transaction.
pub(crate) fn document_in(tx: &mut WriteTxn<'_>, part: &Partition, id: u64) -> Result<Option<Document>> {
    tx.get(DOC, &part.key(&[&id.to_be_bytes()]))?.map(|bytes| decode(&bytes, "document")).transpose()
}

/// Files document `id` under `hash`, after `stored_doc` found no document with its text and date.
pub(crate) fn add_hash(tx: &mut WriteTxn<'_>, hash: &DocHash, id: u64) -> Result<()> {
    let mut ids = hash.seen.clone();
    ids.extend_from_slice(&id.to_be_bytes());
    tx.put(DOC_HASH8, &hash.key, &ids)
}

/// Takes document `id` (stored with `text` and `date`) out of the document index, wherever it is
/// filed (under its filed date, or a spelling an index written before used).
pub(crate) fn remove_hash(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    text: &str,
    date: Option<&str>,
    id: u64,
) -> Result<()> {
    let hash = hash_key(part, text, date);
    for key in std::iter::once(&hash.key).chain(&hash.spelled) {
        let Some(value) = tx.get(DOC_HASH8, key)? else { continue };
        let kept: Vec<u8> = hash_ids(&value)?.filter(|&have| have != id).flat_map(u64::to_be_bytes).collect();
        if kept.is_empty() {
            tx.delete(DOC_HASH8, key)?;
        } else if kept.len() != value.len() {
            tx.put(DOC_HASH8, key, &kept)?;
        }
    }
    // The layout before files one document a key: taken out only if it is this one.
    for key in &hash.old {
        if tx.get(DOC_HASH, key)?.is_some_and(|v| v == id.to_be_bytes()) {
            tx.delete(DOC_HASH, key)?;
        }
    }
    Ok(())
}

/// Stores `text` as a document of `part`, with its passages, full-text postings and mentions, in
/// the caller's transaction.
pub fn remember_text(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    text: &str,
    label: Option<&str>,
    date: Option<&str>,
    now: i64,
) -> Result<Remembered> {
    if text.trim().is_empty() || text.len() > MAX_TEXT_BYTES {
        return Err(Error::InvalidArgument(format!(
            "content must be 1..={MAX_TEXT_BYTES} bytes of text, got {}",
            text.len()
        )));
    }
    let mut hash = hash_key(part, text, date);
    if let Some(doc_id) = stored_doc(tx, part, &mut hash, text, date)? {
        return Ok(Remembered { doc_id, already: true, passages: 0, mentions: Vec::new(), unlinked: Vec::new() });
    }
    let linker = partition_linker(tx, part)?;
    let chunks = chunk_text(text)
        .into_iter()
        .map(|passage| NewPassage { passage, given: Vec::new(), tokenized: None })
        .collect();
    let doc = NewDocument { text, label, date, now, about: None, id: None, hash: &hash };
    let mut index = fts::Indexer::new(part.raw())?;
    let mut tally = Tally::default();
    let stored = store_document(tx, part, &doc, chunks, (&mut index, &mut tally), &|passage: &str| {
        linker.find(passage).into_iter().map(|m| m.entity).collect()
    })?;
    index.finish(tx)?;
    tally.flush(tx)?;
    Ok(stored)
}

/// A document about to be stored.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewDocument<'a> {
    pub text: &'a str,
    pub label: Option<&'a str>,
    pub date: Option<&'a str>,
    pub now: i64,
    /// The entity the document is about (its label names it): its mention links are marked
    /// `ABOUT`, so a reader finds an entity's own passages before the many that merely name it.
    pub about: Option<u64>,
    /// The id reserved for it (`trees::reserve_ids`), else it takes the next.
    pub id: Option<u64>,
    /// Its `hash_key` (computed by the caller, off the writer thread where it can be), as
    /// `stored_doc` left it.
    pub hash: &'a DocHash,
}

/// A passage of a document about to be stored.
#[derive(Debug)]
pub(crate) struct NewPassage {
    /// Its span of the document's text, and its text.
    pub passage: Passage,
    /// Entities it is linked to whatever `link` finds.
    pub given: Vec<u64>,
    /// Its terms, when the caller tokenized it before the transaction (for the same `Indexer`).
    pub tokenized: Option<fts::Tokenized>,
}

/// The value of a mention link from a passage to the entity its document is about.
pub(crate) const ABOUT: &[u8] = &[1];

/// Stores `doc` with the given passages (spans into its text), each linked to the entities
/// `link` finds in it and to the entity ids given with it; adds them to `index` for full text
/// (the caller finishes it, so a call's documents share its blocks). The caller has checked that
/// the same text and date are not stored yet (`stored_doc` with `doc.hash`).
pub(crate) fn store_document(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    doc: &NewDocument<'_>,
    passages: Vec<NewPassage>,
    (index, tally): (&mut fts::Indexer, &mut Tally),
    link: &dyn Fn(&str) -> Vec<u64>,
) -> Result<Remembered> {
    let doc_id = match doc.id {
        Some(id) => id,
        None => next_id(tx, part)?,
    };
    let record = Document {
        id: doc_id,
        text: doc.text.to_owned(),
        label: doc.label.map(str::to_owned),
        date: doc.date.map(str::to_owned),
        ingested_at: doc.now,
    };
    tx.put(DOC, &part.key(&[&doc_id.to_be_bytes()]), &encode(&record))?;
    super::source_index::document(tx, part, &record)?;
    tally.documents(part, 1);
    tally.passages(part, super::tally::delta(passages.len()));
    add_hash(tx, doc.hash, doc_id)?;
    let mut out = Remembered { doc_id, already: false, passages: 0, mentions: Vec::new(), unlinked: Vec::new() };
    super::fts_terms_build::mark_first(tx)?;
    for (ordinal, NewPassage { passage, given, tokenized }) in passages.into_iter().enumerate() {
        let ordinal = u32::try_from(ordinal).map_err(|_| Error::InvalidArgument("too many passages".into()))?;
        let span = PassageSpan { start: passage.start, end: passage.end };
        let at = [&doc_id.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
        tx.put(PSG, &part.key(&[&at]), &encode(&span))?;
        // The document is new (its id fresh from the counter): no passage of it is indexed yet.
        let terms = match tokenized {
            Some(t) => t,
            None => index.tokenize(&passage.index_text())?,
        };
        index.add_tokenized(doc_id, ordinal, terms, true);
        let mut entities: Vec<u64> = link(&passage.index_text());
        entities.extend(given);
        entities.sort_unstable();
        entities.dedup();
        if entities.is_empty() {
            out.unlinked.push(ordinal);
        }
        for entity in entities {
            let mark: &[u8] = if doc.about == Some(entity) { ABOUT } else { &[] };
            tx.put(MENTION, &part.key(&[&entity.to_be_bytes(), &at]), mark)?;
            tx.put(MENTIONED, &part.key(&[&at, &entity.to_be_bytes()]), &[])?;
            out.mentions.push((ordinal, entity));
        }
        out.passages += 1;
    }
    Ok(out)
}

/// The text of a stored passage, sliced from its document; `None` when it is gone.
pub(crate) fn passage_text(tx: &mut WriteTxn<'_>, part: &Partition, doc: u64, ordinal: u32) -> Result<Option<String>> {
    let at = [&doc.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
    let Some(span) = tx.get(PSG, &part.key(&[&at]))? else { return Ok(None) };
    let span: PassageSpan = decode(&span, "passage")?;
    let Some(d) = tx.get(DOC, &part.key(&[&doc.to_be_bytes()]))? else { return Ok(None) };
    let d: Document = decode(&d, "document")?;
    Ok(char_slice(&d.text, span.start, span.end).map(str::to_owned))
}

/// A stored passage as full text and the linker read it: its text under the titles of the
/// headings above it in its document (`Passage::index_text`); `None` when it is gone.
pub(crate) fn passage_index_text(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    doc: u64,
    ordinal: u32,
) -> Result<Option<String>> {
    let at = [&doc.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
    let Some(span) = tx.get(PSG, &part.key(&[&at]))? else { return Ok(None) };
    let span: PassageSpan = decode(&span, "passage")?;
    let Some(d) = tx.get(DOC, &part.key(&[&doc.to_be_bytes()]))? else { return Ok(None) };
    let d: Document = decode(&d, "document")?;
    let Some(text) = char_slice(&d.text, span.start, span.end) else { return Ok(None) };
    let path = heading_path(&headings(&d.text), span.start, span.end);
    Ok(Some(with_headings(&path, text).into_owned()))
}

/// Links a new entity to the passages already stored that name it (whole word, any case), so
/// the order of remembering and relating does not matter. Returns how many it linked.
pub(crate) fn link_existing(tx: &mut WriteTxn<'_>, part: &Partition, entity: u64, name: &str) -> Result<u32> {
    let mut linked = 0;
    for (doc, ordinal) in fts::passages_with_all_terms(tx, part.raw(), name)? {
        if passage_index_text(tx, part, doc, ordinal)?.is_some_and(|text| mentions_name(&text, name)) {
            let at = [&doc.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
            tx.put(MENTION, &part.key(&[&entity.to_be_bytes(), &at]), &[])?;
            tx.put(MENTIONED, &part.key(&[&at, &entity.to_be_bytes()]), &[])?;
            linked += 1;
        }
    }
    Ok(linked)
}

/// A linker over every entity name of the partition. Built per call for now (about 0.45 s at
/// 100k names); keeping one per partition is the next step.
fn partition_linker(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<Linker> {
    let names = entities_in(tx, part)?;
    Ok(Linker::new(names.iter().map(|e| (e.id, e.name.as_str()))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::testing::{assertion, fresh};
    use crate::knowledge::{entity_by_name, relate};
    use serde_json::Map;

    const TEXT: &str = "Priya Raman joined Acme in 2024. She leads the storage team in Berlin. \
                        The lighthouse project ships next spring.";

    #[test]
    fn text_is_stored_once_indexed_and_linked() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        let (first, _) = store
            .write(move |tx| {
                relate(tx, &p, assertion("Priya Raman", "Acme", "works_at", &Map::new(), "claude"), 1)?;
                remember_text(tx, &p, TEXT, Some("chat"), Some("2024-05-01"), 2)
            })
            .unwrap();
        assert!(!first.already);
        assert_eq!(first.passages, 1);
        let snap = store.snapshot().unwrap();
        let priya = entity_by_name(&snap, &part, "priya raman").unwrap().unwrap();
        let acme = entity_by_name(&snap, &part, "Acme").unwrap().unwrap();
        assert_eq!(first.mentions, vec![(0, priya.id.min(acme.id)), (0, priya.id.max(acme.id))]);
        let hits = fts::search(&snap, part.raw(), "lighthouse", 5).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].doc, first.doc_id);

        let p = part.clone();
        let (again, _) =
            store.write(move |tx| remember_text(tx, &p, TEXT, Some("chat"), Some("2024-05-01"), 3)).unwrap();
        assert!(again.already);
        assert_eq!(again.doc_id, first.doc_id);
        let p = part.clone();
        let (other_date, _) = store.write(move |tx| remember_text(tx, &p, TEXT, None, Some("2025-01-01"), 4)).unwrap();
        assert!(!other_date.already);
        assert_ne!(other_date.doc_id, first.doc_id);
    }

    #[test]
    fn texts_sharing_a_short_hash_key_are_told_apart_by_their_stored_text() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        let (first, _) = store.write(move |tx| remember_text(tx, &p, "First text.", None, None, 1)).unwrap();
        let a = first.doc_id;
        // A collision of 8 digest bytes, forged: the second text's key already files the first.
        let second_key = hash_key(&part, "Second text.", None).key;
        let k = second_key.clone();
        store.write(move |tx| tx.put(DOC_HASH8, &k, &a.to_be_bytes())).unwrap();
        let p = part.clone();
        let (second, _) = store.write(move |tx| remember_text(tx, &p, "Second text.", None, None, 2)).unwrap();
        assert!(!second.already, "a different text under the same key is a new document");
        let b = second.doc_id;
        assert_ne!(a, b);
        let filed = store.snapshot().unwrap().get(DOC_HASH8, &second_key).unwrap().unwrap();
        assert_eq!(filed, [a.to_be_bytes(), b.to_be_bytes()].concat(), "both ids kept under the key");
        for (text, id) in [("Second text.", b), ("First text.", a)] {
            let p = part.clone();
            let (again, _) = store.write(move |tx| remember_text(tx, &p, text, None, None, 3)).unwrap();
            assert_eq!((again.already, again.doc_id), (true, id), "{text}");
        }
        // Taking the first out leaves the second filed alone.
        let p = part.clone();
        store.write(move |tx| remove_hash(tx, &p, "Second text.", None, a)).unwrap();
        let filed = store.snapshot().unwrap().get(DOC_HASH8, &second_key).unwrap().unwrap();
        assert_eq!(filed, b.to_be_bytes());
        let p = part.clone();
        store.write(move |tx| remove_hash(tx, &p, "Second text.", None, b)).unwrap();
        assert!(store.snapshot().unwrap().get(DOC_HASH8, &second_key).unwrap().is_none(), "an emptied key goes");
    }

    #[test]
    fn a_document_filed_in_the_layout_before_short_keys_is_found_and_removed() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        // As a store written before `DOC_HASH8` holds it: the full digest and date as the key.
        let old = Document {
            id: 500,
            text: "Old text.".into(),
            label: None,
            date: Some("2024-01-01".into()),
            ingested_at: 1,
        };
        let old_key = p.key(&[&Sha256::digest(old.text.as_bytes()), b"2024-01-01"]);
        let k = old_key.clone();
        store
            .write(move |tx| {
                tx.put(DOC, &p.key(&[&500_u64.to_be_bytes()]), &encode(&old))?;
                tx.put(DOC_HASH, &k, &500_u64.to_be_bytes())
            })
            .unwrap();
        let remember = |now| {
            let p = part.clone();
            store.write(move |tx| remember_text(tx, &p, "Old text.", None, Some("2024-01-01"), now)).unwrap().0
        };
        let again = remember(2);
        assert_eq!((again.already, again.doc_id), (true, 500));
        let p = part.clone();
        store.write(move |tx| remove_hash(tx, &p, "Old text.", Some("2024-01-01"), 500)).unwrap();
        assert!(store.snapshot().unwrap().get(DOC_HASH, &old_key).unwrap().is_none());
        let fresh_doc = remember(3);
        assert!(!fresh_doc.already, "once removed, the text is new again");
        assert_ne!(fresh_doc.doc_id, 500);
    }

    /// DESIGN.md §2: "Same content + same date again = no change", a date alone being the first
    /// instant of that day in UTC. (Found by an audit: `2024-01-01` then `2024-01-01T00:00:00Z`
    /// stored the text twice.)
    #[test]
    fn the_same_instant_spelled_another_way_is_the_same_date() {
        let (_dir, store, part) = fresh();
        let remember = |date: &'static str, now| {
            let p = part.clone();
            store.write(move |tx| remember_text(tx, &p, "Same words.", None, Some(date), now)).unwrap().0
        };
        let first = remember("2024-01-01", 1);
        assert!(!first.already);
        for date in [
            "2024-01-01",
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00.000Z",
            "2024-01-01T00:00:00+00:00",
            "2024-01-01t00:00z",
            "2024-01-01T05:30:00+05:30",
            "2023-12-31T23:00:00-01:00",
        ] {
            let again = remember(date, 2);
            assert_eq!((again.already, again.doc_id), (true, first.doc_id), "{date}");
        }
        let later = remember("2024-01-01T00:00:00.001Z", 3);
        assert!(!later.already, "another instant is another date");
        // The date is stored as given.
        let snap = store.snapshot().unwrap();
        let doc: Document =
            decode(&snap.get(DOC, &part.key(&[&first.doc_id.to_be_bytes()])).unwrap().unwrap(), "doc").unwrap();
        assert_eq!(doc.date.as_deref(), Some("2024-01-01"));
    }

    #[test]
    fn a_document_filed_by_its_date_as_given_is_found_by_its_instant_and_removed() {
        let (_dir, store, part) = fresh();
        // As an index written before filed dates: the short key over the date as given.
        let old = Document {
            id: 600,
            text: "Filed before.".into(),
            label: None,
            date: Some("2024-03-01T00:00:00Z".into()),
            ingested_at: 1,
        };
        let digest = Sha256::digest(old.text.as_bytes());
        let short = Sha256::new().chain_update(digest).chain_update(b"2024-03-01T00:00:00Z").finalize();
        let old_key = part.key(&[&short[..8]]);
        assert_ne!(old_key, hash_key(&part, &old.text, old.date.as_deref()).key, "the filed form differs");
        let (p, k) = (part.clone(), old_key.clone());
        store
            .write(move |tx| {
                tx.put(DOC, &p.key(&[&600_u64.to_be_bytes()]), &encode(&old))?;
                tx.put(DOC_HASH8, &k, &600_u64.to_be_bytes())
            })
            .unwrap();
        let remember = |date: &'static str, now| {
            let p = part.clone();
            store.write(move |tx| remember_text(tx, &p, "Filed before.", None, Some(date), now)).unwrap().0
        };
        for date in ["2024-03-01T00:00:00Z", "2024-03-01", "2024-03-01T00:00:00.000Z"] {
            let again = remember(date, 2);
            assert_eq!((again.already, again.doc_id), (true, 600), "{date}");
        }
        let p = part.clone();
        store.write(move |tx| remove_hash(tx, &p, "Filed before.", Some("2024-03-01T00:00:00Z"), 600)).unwrap();
        assert!(store.snapshot().unwrap().get(DOC_HASH8, &old_key).unwrap().is_none(), "taken out where it was filed");
        assert!(!remember("2024-03-01", 3).already, "once removed, the text is new again");
    }

    #[test]
    fn an_entity_created_later_is_linked_to_passages_already_stored() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        store
            .write(move |tx| {
                remember_text(tx, &p, TEXT, None, None, 1)?;
                relate(tx, &p, assertion("Priya Raman", "Acme", "works_at", &Map::new(), "claude"), 2)
            })
            .unwrap();
        let snap = store.snapshot().unwrap();
        let priya = entity_by_name(&snap, &part, "Priya Raman").unwrap().unwrap();
        let c = crate::knowledge::context(&snap, &part, "Priya Raman", 1, 8).unwrap();
        let passage = c.items.iter().find(|i| i.text.contains("lighthouse")).expect("the passage is found");
        assert!(
            passage.ranks.iter().any(|(ch, _)| *ch == crate::knowledge::Channel::Mentions),
            "the passage reached Priya through a mention link: {:?}",
            passage.ranks
        );
        assert_eq!(snap.prefix(MENTION, &part.key(&[&priya.id.to_be_bytes()])).unwrap().count(), 1);
    }

    #[test]
    fn passages_without_known_names_are_reported_unlinked() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        let (r, _) =
            store.write(move |tx| remember_text(tx, &p, "Nothing here names anyone we know.", None, None, 1)).unwrap();
        assert_eq!(r.unlinked, vec![0]);
        assert!(r.mentions.is_empty());
    }

    #[test]
    fn other_partitions_neither_link_nor_find() {
        let (_dir, store, _) = fresh();
        let mine = Partition::new("local", "u1", "default").unwrap();
        let theirs = Partition::new("local", "u2", "default").unwrap();
        let m = mine.clone();
        let t = theirs.clone();
        let (r, _) = store
            .write(move |tx| {
                relate(tx, &m, assertion("Priya Raman", "Acme", "works_at", &Map::new(), "claude"), 1)?;
                remember_text(tx, &t, TEXT, None, None, 2)
            })
            .unwrap();
        assert!(r.mentions.is_empty(), "a name from another partition linked: {:?}", r.mentions);
        let snap = store.snapshot().unwrap();
        assert!(fts::search(&snap, mine.raw(), "lighthouse", 5).unwrap().is_empty());
        assert_eq!(fts::search(&snap, theirs.raw(), "lighthouse", 5).unwrap().len(), 1);
    }

    #[test]
    fn empty_or_oversized_text_is_refused_and_changes_nothing() {
        let (_dir, store, part) = fresh();
        for text in ["   ".to_owned(), "x".repeat(MAX_TEXT_BYTES + 1)] {
            let p = part.clone();
            let err = store.write(move |tx| remember_text(tx, &p, &text, None, None, 1)).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT");
        }
        assert_eq!(store.snapshot().unwrap().tree_len(DOC).unwrap(), 0);
    }
}
