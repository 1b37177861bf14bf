//! The source index (`SOURCES`): which documents a source label stored, which relation records
//! (every version) have a provenance under a label, which entity events record a write under a
//! label, and which relation records cite a document. `forget {source}` reads it to find what the
//! label holds without reading the scope whole (`forget/source.rs`, `source_attributes.rs`),
//! `forget {passage}` to find the facts citing a document, and an import to repoint the citations
//! of a held document id. Every write of a document, relation record or history event keeps it in
//! the same transaction (`document`, `unfile_document`, `refile`, `refile_event`); a store
//! written before it existed gets it once (`source_index_build.rs`), and until then the readers
//! scan.
//!
//! Its entries name records, never decide for them: a reader decodes each record it finds and
//! checks it as the scan did, so a label that shares a keyed form with another (a long label
//! kept as its head and a digest) only adds a record to check.

use super::docs::Document;
use super::graph::{Relation, Source};
use super::part::Partition;
use super::records::decode;
use super::trees::{REL, SOURCES, rel_key, trailing_id};
use crate::error::Result;
use crate::key_text::{LONG, fit};
use crate::write::WriteTxn;
use std::collections::BTreeSet;
use std::ops::Bound;

/// `part | LABEL_DOC | keyed label \0 | doc id`: a document stored with the label.
const LABEL_DOC: u8 = b'd';
/// `part | LABEL_FACT | keyed label \0 | relation id`: a relation record (a fact or an earlier
/// version of one) with a provenance under the label (asserted with it, or a document cited with
/// it).
const LABEL_FACT: u8 = b'f';
/// `part | CITED | doc id | relation id`: a relation record with a provenance citing the document.
const CITED: u8 = b'c';
/// `part | LABEL_EVENT | keyed label \0 | seq`: an entity event whose write came under the label
/// (`attribute_time::source_of`: its input's `source`).
const LABEL_EVENT: u8 = b'e';

/// `part | kind | keyed label \0`: the entries of one label of one kind.
fn label_prefix(part: &Partition, kind: u8, label: &str) -> Vec<u8> {
    part.key(&[&[kind], &fit(label, part.prefix().len() + 2 + 8), b"\0"])
}

/// Up to `max` distinct labels that stored documents or facts in `part`, in key order; a label
/// too long to be kept whole in a key is left out (its key holds a digest, not the label).
pub(crate) fn labels(tx: &mut WriteTxn<'_>, part: &Partition, max: usize) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for kind in [LABEL_DOC, LABEL_FACT] {
        let (head, end) = (part.key(&[&[kind]]), part.key(&[&[kind + 1]]));
        let mut start = head.clone();
        while out.len() < max {
            // One seek a label: its entries (`label \0 id`) are skipped by starting after `label \0`.
            let first = tx.range_first(SOURCES, Bound::Included(&start), Bound::Excluded(&end), 1)?;
            let Some((key, _)) = first.into_iter().next() else { break };
            let Some(keyed) = key.get(head.len()..key.len().saturating_sub(9)) else { break };
            if let Ok(label) = std::str::from_utf8(keyed)
                && !keyed.contains(&LONG)
                && !out.iter().any(|l| l == label)
            {
                out.push(label.to_owned());
            }
            start = [&head[..], keyed, &[1]].concat();
        }
    }
    Ok(out)
}

fn label_key(part: &Partition, kind: u8, label: &str, id: u64) -> Vec<u8> {
    [label_prefix(part, kind, label), id.to_be_bytes().to_vec()].concat()
}

fn cited_prefix(part: &Partition, doc: u64) -> Vec<u8> {
    part.key(&[&[CITED], &doc.to_be_bytes()])
}

/// The entries relation record `rel` is filed under.
pub(crate) fn relation_keys(part: &Partition, rel: &Relation) -> BTreeSet<Vec<u8>> {
    let mut keys = BTreeSet::new();
    for source in std::iter::once(&rel.source).chain(rel.also.iter().map(|a| &a.source)) {
        let label = match source {
            Source::Asserted { label } => label,
            Source::Document { doc_id, label } => {
                keys.insert([cited_prefix(part, *doc_id), rel.id.to_be_bytes().to_vec()].concat());
                label
            }
        };
        if let Some(label) = label {
            keys.insert(label_key(part, LABEL_FACT, label, rel.id));
        }
    }
    keys
}

/// The entry of relation record `id` asserted under `label`, its only provenance (a bulk load's
/// facts: `load/runs.rs`).
pub(crate) fn asserted_key(part: &Partition, label: &str, id: u64) -> Vec<u8> {
    label_key(part, LABEL_FACT, label, id)
}

/// The entry of history event `seq` whose write came under `label`.
pub(crate) fn event_key(part: &Partition, label: &str, seq: u64) -> Vec<u8> {
    label_key(part, LABEL_EVENT, label, seq)
}

/// Files history event `seq` of `part`, whose write came under label `was` (`None`: under none,
/// or the event is new) and now under `is` (`None`: under none, or the event is gone).
pub(crate) fn refile_event(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    seq: u64,
    (was, is): (Option<&str>, Option<&str>),
) -> Result<()> {
    if was == is {
        return Ok(());
    }
    if let Some(label) = was {
        tx.delete(SOURCES, &event_key(part, label, seq))?;
    }
    if let Some(label) = is {
        tx.put(SOURCES, &event_key(part, label, seq), &[])?;
    }
    Ok(())
}

/// The entry document `doc` is filed under, if it has a label.
pub(crate) fn document_key(part: &Partition, doc: &Document) -> Option<Vec<u8>> {
    doc.label.as_deref().map(|label| label_key(part, LABEL_DOC, label, doc.id))
}

/// Files relation record `new` (`None`: removed), which was `old` (`None`: new): the entries only
/// one of them has are added or removed.
pub(crate) fn refile(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    old: Option<&Relation>,
    new: Option<&Relation>,
) -> Result<()> {
    let keys = |rel: Option<&Relation>| rel.map_or_else(BTreeSet::new, |r| relation_keys(part, r));
    let (was, is) = (keys(old), keys(new));
    for key in was.difference(&is) {
        tx.delete(SOURCES, key)?;
    }
    for key in is.difference(&was) {
        tx.put(SOURCES, key, &[])?;
    }
    Ok(())
}

/// Files a stored document (its label is fixed once stored).
pub(crate) fn document(tx: &mut WriteTxn<'_>, part: &Partition, doc: &Document) -> Result<()> {
    match document_key(part, doc) {
        Some(key) => tx.put(SOURCES, &key, &[]),
        None => Ok(()),
    }
}

/// Takes out a removed document.
pub(crate) fn unfile_document(tx: &mut WriteTxn<'_>, part: &Partition, doc: &Document) -> Result<()> {
    if let Some(key) = document_key(part, doc) {
        tx.delete(SOURCES, &key)?;
    }
    Ok(())
}

/// Whether the index is complete (the empty key marks it built; see `source_index_build.rs`).
pub(crate) fn built(tx: &mut WriteTxn<'_>) -> Result<bool> {
    Ok(tx.get(SOURCES, &[])?.is_some())
}

fn ids(tx: &mut WriteTxn<'_>, prefix: &[u8], into: &mut BTreeSet<u64>) -> Result<()> {
    for key in tx.prefix_keys(SOURCES, prefix)? {
        into.insert(trailing_id(&key)?);
    }
    Ok(())
}

/// The ids of the documents filed under `label`, in order.
pub(crate) fn documents_of(tx: &mut WriteTxn<'_>, part: &Partition, label: &str) -> Result<BTreeSet<u64>> {
    let mut out = BTreeSet::new();
    ids(tx, &label_prefix(part, LABEL_DOC, label), &mut out)?;
    Ok(out)
}

/// The ids of the relation records filed under `label` or citing one of `docs`, in order.
pub(crate) fn facts_of(tx: &mut WriteTxn<'_>, part: &Partition, label: &str, docs: &[u64]) -> Result<BTreeSet<u64>> {
    let mut out = BTreeSet::new();
    ids(tx, &label_prefix(part, LABEL_FACT, label), &mut out)?;
    for doc in docs {
        ids(tx, &cited_prefix(part, *doc), &mut out)?;
    }
    Ok(out)
}

/// The sequence numbers of the entity events filed under `label`, in order.
pub(crate) fn events_of(tx: &mut WriteTxn<'_>, part: &Partition, label: &str) -> Result<BTreeSet<u64>> {
    let mut out = BTreeSet::new();
    ids(tx, &label_prefix(part, LABEL_EVENT, label), &mut out)?;
    Ok(out)
}

/// The ids of the relation records citing document `doc`, in order.
pub(crate) fn citing(tx: &mut WriteTxn<'_>, part: &Partition, doc: u64) -> Result<BTreeSet<u64>> {
    let mut out = BTreeSet::new();
    ids(tx, &cited_prefix(part, doc), &mut out)?;
    Ok(out)
}

/// Hands `visit` the relation records of `part` with ids `ids` (an answer of the index), in id
/// order; with `None` (the index is not built yet) every relation record of `part`, one at a
/// time. Either way the caller checks each record as a scan would.
pub(crate) fn each_relation(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    ids: Option<&BTreeSet<u64>>,
    mut visit: impl FnMut(Relation) -> Result<()>,
) -> Result<()> {
    let Some(ids) = ids else {
        return tx.scan_prefix(REL, part.prefix(), |_, bytes| visit(decode(bytes, "relation")?));
    };
    for id in ids {
        if let Some(bytes) = tx.get(REL, &rel_key(part, *id))? {
            visit(decode(&bytes, "relation")?)?;
        }
    }
    Ok(())
}
