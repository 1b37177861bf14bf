//! Documents and passages: `remember_text` stores a text once (same text and date again is
//! `already`), cuts it into passages, indexes them for full-text search, and links each passage
//! to every stored entity it names.

use super::graph::entities_in;
use super::ids::next_id;
use super::part::Partition;
use super::records::{decode, encode};
use super::trees::{DOC, DOC_HASH, DOC_HASH8, MENTION, MENTIONED, PSG};
use crate::error::{Error, Result};
use crate::fts;
use crate::text::{Linker, Passage, char_slice, chunk_text, mentions_name};
use crate::write::WriteTxn;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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
#[derive(Debug, Clone, Default)]
pub(crate) struct DocHash {
    /// `part | first 8 bytes of sha256(sha256(text) | date)` in `DOC_HASH8`.
    key: Vec<u8>,
    /// `part | sha256(text) | date` in `DOC_HASH`, the layout before (still read, never written).
    old: Vec<u8>,
    /// The ids filed under `key` when `stored_doc` last looked (none found matching), so adding
    /// the new document needs no second look-up.
    seen: Vec<u8>,
}

pub(crate) fn hash_key(part: &Partition, text: &str, date: Option<&str>) -> DocHash {
    let digest = Sha256::digest(text.as_bytes());
    let date = date.unwrap_or("").as_bytes();
    let short = Sha256::new().chain_update(digest).chain_update(date).finalize();
    DocHash { key: part.key(&[&short[..8]]), old: part.key(&[&digest, date]), seen: Vec::new() }
}

/// The ids of a `DOC_HASH8` value (u64 BE each).
fn hash_ids(value: &[u8]) -> Result<impl Iterator<Item = u64> + '_> {
    if value.is_empty() || !value.len().is_multiple_of(8) {
        return Err(Error::corrupt(None, "a document hash entry is not a list of 8-byte ids"));
    }
    Ok(value.chunks_exact(8).map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes"))))
}

/// The id of the document of `part` stored with exactly `text` and `date` (whose `hash_key` is
/// `hash`), if any. Remembers what it saw under the key for `add_hash`.
pub(crate) fn stored_doc(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    hash: &mut DocHash,
    text: &str,
    date: Option<&str>,
) -> Result<Option<u64>> {
    hash.seen = tx.get(DOC_HASH8, &hash.key)?.unwrap_or_default();
    if !hash.seen.is_empty() {
        for id in hash_ids(&hash.seen)? {
            let Some(bytes) = tx.get(DOC, &part.key(&[&id.to_be_bytes()]))? else { continue };
            let d: Document = decode(&bytes, "document")?;
            if d.text == text && d.date.as_deref() == date {
                return Ok(Some(id));
            }
        }
    }
    // A store written before the short keys: its documents are filed by full digest (exact).
    tx.get(DOC_HASH, &hash.old)?
        .map(|id| {
            id.as_slice()
                .try_into()
                .map(u64::from_be_bytes)
                .map_err(|_| Error::corrupt(None, "a document hash entry is not 8 bytes"))
        })
        .transpose()
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

/// Takes document `id` (stored with `text` and `date`) out of the document index.
pub(crate) fn remove_hash(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    text: &str,
    date: Option<&str>,
    id: u64,
) -> Result<()> {
    let hash = hash_key(part, text, date);
    if let Some(value) = tx.get(DOC_HASH8, &hash.key)? {
        let kept: Vec<u8> = hash_ids(&value)?.filter(|&have| have != id).flat_map(u64::to_be_bytes).collect();
        if kept.is_empty() {
            tx.delete(DOC_HASH8, &hash.key)?;
        } else if kept.len() != value.len() {
            tx.put(DOC_HASH8, &hash.key, &kept)?;
        }
    }
    // The layout before files one document a key: taken out only if it is this one.
    if tx.get(DOC_HASH, &hash.old)?.is_some_and(|v| v == id.to_be_bytes()) {
        tx.delete(DOC_HASH, &hash.old)?;
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
    let stored = store_document(tx, part, &doc, chunks, &mut index, &|passage: &str| {
        linker.find(passage).into_iter().map(|m| m.entity).collect()
    })?;
    index.finish(tx)?;
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
    index: &mut fts::Indexer,
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
    add_hash(tx, doc.hash, doc_id)?;
    let mut out = Remembered { doc_id, already: false, passages: 0, mentions: Vec::new(), unlinked: Vec::new() };
    for (ordinal, NewPassage { passage, given, tokenized }) in passages.into_iter().enumerate() {
        let ordinal = u32::try_from(ordinal).map_err(|_| Error::InvalidArgument("too many passages".into()))?;
        let span = PassageSpan { start: passage.start, end: passage.end };
        let at = [&doc_id.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
        tx.put(PSG, &part.key(&[&at]), &encode(&span))?;
        // The document is new (its id fresh from the counter): no passage of it is indexed yet.
        let terms = match tokenized {
            Some(t) => t,
            None => index.tokenize(&passage.text)?,
        };
        index.add_tokenized(doc_id, ordinal, terms, true);
        let mut entities: Vec<u64> = link(&passage.text);
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

/// Links a new entity to the passages already stored that name it (whole word, any case), so
/// the order of remembering and relating does not matter. Returns how many it linked.
pub(crate) fn link_existing(tx: &mut WriteTxn<'_>, part: &Partition, entity: u64, name: &str) -> Result<u32> {
    let mut linked = 0;
    for (doc, ordinal) in fts::passages_with_all_terms(tx, part.raw(), name)? {
        if passage_text(tx, part, doc, ordinal)?.is_some_and(|text| mentions_name(&text, name)) {
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
