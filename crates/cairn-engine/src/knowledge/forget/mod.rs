//! Forgetting, in every form DESIGN.md §2 names for knowledge: a subject, a fact, a document
//! (`passage`), a source label, an attribute, a whole scope, and a whole user. Each form removes
//! its records from every tree that can reach them (records, name and adjacency indexes, mention
//! links, full-text postings and totals) in the caller's transaction, so nothing forgotten is
//! readable once the write is durable. A form that finds nothing answers "already forgotten" when
//! its tombstone says it went before, else "not found"; tombstones hold a hash of the target, never
//! its content.

mod all;
mod attribute;
mod fact;
mod history;
mod passage;
mod retire;
mod source;
mod source_attributes;
mod subject;

pub use all::{UserDeleted, delete_user, forget_scope};
pub use attribute::forget_attribute;
pub use fact::{FactRef, forget_fact};
pub use passage::forget_document;
pub(crate) use retire::{kept, kept_in};
pub use source::forget_source;
pub use subject::{Forgot, forget_subject, rehash_forgotten};

use super::docs::{Document, PassageSpan, add_hash, hash_key, remove_hash, stored_doc};
use super::facts_between::Between;
use super::graph::{Relation, Source};
use super::part::Partition;
use super::records::decode;
use super::tally::Tally;
use super::trees::{
    DOC, ENT, ENT_NAME, FORGOTTEN, HASHED, MENTION, MENTIONED, PSG, REL, ent_key, name_prefix, rel_key, trailing_id,
};
use crate::error::Result;
use crate::fts;
use crate::store::{CompactOptions, CompactReport, Store};
use crate::text::fold;
use crate::write::WriteTxn;
use history::{Strip, strip_events};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// `part | form \0 | sha256(target)` → forgotten-at (ms): forms other than `subject` (which keeps
/// `k.forgotten`) remember here that something went, so forgetting it again is "already".
pub(crate) const TOMBSTONE: &str = "k.tombstone";

/// How many records of each kind a forget removed. Notes and handoffs go only with a whole
/// scope (`all`, `delete_user`); a single note goes through `note_forget`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub entities: u64,
    pub facts: u64,
    pub documents: u64,
    pub passages: u64,
    pub attributes: u64,
    /// Current notes, each with every version.
    pub notes: u64,
    pub handoffs: u64,
}

impl Counts {
    /// Whether nothing was removed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Counts::default()
    }
}

/// Something a forget left in place on purpose, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kept {
    pub what: &'static str,
    pub count: u64,
    pub why: &'static str,
}

/// What a forget did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Forgotten {
        counts: Counts,
        kept: Vec<Kept>,
    },
    /// It went before; nothing changed.
    AlreadyForgotten,
    /// Nothing like it was ever stored in this partition; `did_you_mean` holds near names of the
    /// same partition only, and `stored_between` the live facts joining the two stored ends of a
    /// fact named with another type or direction (`facts_between.rs`).
    NotFound {
        message: String,
        did_you_mean: Vec<String>,
        stored_between: Vec<Between>,
    },
}

/// `form \0 | sha256(target)`: a tombstone's key after its partition's prefix.
fn tombstone_tail(form: &str, target: &str) -> Vec<u8> {
    [form.as_bytes(), b"\0", &Sha256::digest(target.as_bytes())].concat()
}

fn tombstone_key(part: &Partition, form: &str, target: &str) -> Vec<u8> {
    part.key(&[&tombstone_tail(form, target)])
}

/// Remembers that `target` of `form` was forgotten at `now`.
pub(crate) fn bury(tx: &mut WriteTxn<'_>, part: &Partition, form: &str, target: &str, now: i64) -> Result<()> {
    tx.put(TOMBSTONE, &tombstone_key(part, form, target), &now.to_be_bytes())
}

/// Remembers that document `doc` went, whichever form removed it, so the `passage` form answers
/// "already" for its id, and the `source` form for its label once nothing of that label is left.
pub(crate) fn bury_document(tx: &mut WriteTxn<'_>, part: &Partition, doc: &Document, now: i64) -> Result<()> {
    bury(tx, part, "passage", &doc.id.to_string(), now)?;
    if let Some(label) = &doc.label {
        bury(tx, part, "source", label, now)?;
    }
    Ok(())
}

/// Remembers that relation `rel` (whose fact target is `target`, see `fact_target`) went,
/// whichever form removed it: the `fact` form answers "already" for its id and its ends, and the
/// `source` form for its label once nothing of that label is left.
pub(crate) fn bury_relation(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    rel: &Relation,
    target: &str,
    now: i64,
) -> Result<()> {
    bury(tx, part, "fact_id", &rel.id.to_string(), now)?;
    bury(tx, part, "fact", target, now)?;
    let (Source::Asserted { label: Some(label) } | Source::Document { label: Some(label), .. }) = &rel.source else {
        return Ok(());
    };
    bury(tx, part, "source", label, now)
}

/// The name of entity `id` of `part` as `tx` sees it (empty when it is gone).
pub(crate) fn name_of(tx: &mut WriteTxn<'_>, part: &Partition, id: u64) -> Result<String> {
    Ok(tx
        .get(ENT, &ent_key(part, id))?
        .map(|b| decode::<super::graph::Entity>(&b, "entity"))
        .transpose()?
        .map_or_else(String::new, |e| e.name))
}

/// Whether `target` of `form` was forgotten (its tombstone is kept).
pub(crate) fn buried(tx: &mut WriteTxn<'_>, part: &Partition, form: &str, target: &str) -> Result<bool> {
    Ok(kept(tx, TOMBSTONE, part, &tombstone_tail(form, target))?.is_some())
}

/// `buried` on a snapshot.
pub(crate) fn buried_in(snap: &crate::snapshot::Snapshot, part: &Partition, form: &str, target: &str) -> Result<bool> {
    Ok(kept_in(snap, TOMBSTONE, part, &tombstone_tail(form, target))?.is_some())
}

/// The answer when a form finds nothing to remove.
pub(crate) fn missing(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    form: &str,
    target: &str,
    message: String,
) -> Result<Outcome> {
    if buried(tx, part, form, target)? {
        return Ok(Outcome::AlreadyForgotten);
    }
    Ok(Outcome::NotFound { message, did_you_mean: Vec::new(), stored_between: Vec::new() })
}

/// The folded fact target `from \0 type \0 to` that tombstones and history name a fact by.
pub(crate) fn fact_target(from: &str, rel_type: &str, to: &str) -> String {
    format!("{}\0{}\0{}", fold(from.trim()), fold(rel_type.trim()), fold(to.trim()))
}

/// Removes a relation (as stored) and both its adjacency entries, uncounting it in `tally`.
pub(crate) fn remove_relation(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    rel: &Relation,
    tally: &mut Tally,
) -> Result<()> {
    super::past_adjacency::remove(tx, part, rel)?;
    if tx.delete(REL, &rel_key(part, rel.id))? {
        tally.relation(part, Some(rel), None);
    }
    super::fact_writes::remove(tx, part, rel.id)?;
    super::source_index::refile(tx, part, Some(rel), None)
}

/// Removes passage `(doc, ordinal)`'s mention links and its span record, counted in `tally`;
/// not its full-text postings, which the caller removes for many passages at once
/// (`fts::remove_passages`, `fts::remove_docs`). Returns the entities it was linked to.
pub(super) fn unlink_passage(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (doc, ordinal): (u64, u32),
    tally: &mut Tally,
) -> Result<Vec<u64>> {
    let at = [&doc.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
    let mut linked = Vec::new();
    for (link, _) in tx.prefix(MENTIONED, &part.key(&[&at]))? {
        let entity = trailing_id(&link)?;
        tx.delete(MENTION, &part.key(&[&entity.to_be_bytes(), &at]))?;
        tx.delete(MENTIONED, &link)?;
        linked.push(entity);
    }
    if tx.delete(PSG, &part.key(&[&at]))? {
        tally.passages(part, -1);
    }
    Ok(linked)
}

/// Removes a document with all its passages but their full-text postings (the caller's:
/// `fts::remove_docs`, for many documents at once); returns how many passages it had.
pub(crate) fn unlink_document(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    doc: &Document,
    tally: &mut Tally,
) -> Result<u64> {
    let mut passages = 0;
    let doc_prefix = part.key(&[&doc.id.to_be_bytes()]);
    for (key, _) in tx.prefix(PSG, &doc_prefix)? {
        let ordinal = key
            .get(key.len().saturating_sub(4)..)
            .and_then(|t| t.try_into().ok())
            .map(u32::from_be_bytes)
            .ok_or_else(|| crate::error::Error::corrupt(None, "a passage key is too short"))?;
        unlink_passage(tx, part, (doc.id, ordinal), tally)?;
        passages += 1;
    }
    remove_hash(tx, part, &doc.text, doc.date.as_deref(), doc.id)?;
    if tx.delete(DOC, &doc_prefix)? {
        tally.documents(part, -1);
    }
    super::source_index::unfile_document(tx, part, doc)?;
    Ok(passages)
}

/// Removes a document with all its passages, their full-text postings included; returns how
/// many passages it had.
pub(crate) fn remove_document(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    doc: &Document,
    tally: &mut Tally,
) -> Result<u64> {
    let passages = unlink_document(tx, part, doc, tally)?;
    // Every passage indexed under the document goes, a span record or not.
    fts::remove_docs(tx, part.raw(), &[doc.id])?;
    Ok(passages)
}

/// The entity named exactly `name` (up to case and spacing), this transaction's writes included.
pub(crate) fn entity_in(tx: &mut WriteTxn<'_>, part: &Partition, name: &str) -> Result<Option<super::graph::Entity>> {
    let Some((key, _)) = tx.prefix(ENT_NAME, &name_prefix(part, &fold(name.trim())))?.into_iter().next() else {
        return Ok(None);
    };
    let id = trailing_id(&key)?;
    tx.get(ENT, &ent_key(part, id))?.map(|b| decode(&b, "entity")).transpose()
}

/// Blanks the text of forgotten passages `spans` of a document that keeps others: each code
/// point but line breaks becomes a space, so the live passages' code-point offsets still hold
/// and the forgotten words are nowhere in the store. The content hash follows the new text.
pub(crate) fn blank_spans(tx: &mut WriteTxn<'_>, part: &Partition, doc: u64, spans: &[PassageSpan]) -> Result<()> {
    let key = part.key(&[&doc.to_be_bytes()]);
    let Some(bytes) = tx.get(DOC, &key)? else { return Ok(()) };
    // Its label stays: its source index entry too.
    let mut d: Document = decode(&bytes, "document")?;
    // One flag a code point, set span by span: linear in the text and the spans together, where
    // testing every span at every code point was their product (a large document losing many
    // passages).
    let mut blank = vec![false; d.text.chars().count()];
    for s in spans {
        let end = s.end.min(blank.len());
        blank.get_mut(s.start.min(end)..end).into_iter().flatten().for_each(|b| *b = true);
    }
    let text: String = d.text.chars().zip(blank).map(|(c, b)| if b && c != '\n' { ' ' } else { c }).collect();
    remove_hash(tx, part, &d.text, d.date.as_deref(), doc)?;
    d.text = text;
    let mut hash = hash_key(part, &d.text, d.date.as_deref());
    // Looked up first so that `add_hash` keeps any other document filed under the same key.
    stored_doc(tx, part, &mut hash, &d.text, d.date.as_deref())?;
    add_hash(tx, &hash, doc)?;
    tx.put(DOC, &key, &super::records::encode(&d))?;
    Ok(())
}

/// `Store::compact` for a store holding knowledge. With `purge`, what a store written before may
/// still spell is rewritten first, each in a write of its own before the compaction's
/// checkpoint: partitions forgotten whole are retired (`retire::retire_forgotten`) and plain
/// forgotten names rewritten to their hashed keys, so the purge zeroes the pages and log records
/// that spelled them and no forgotten word stays on disk. The CLI and the node's admin route
/// compact through this.
///
/// # Errors
/// As `Store::write` and `Store::compact`.
pub fn compact(store: &Store, opts: CompactOptions) -> Result<CompactReport> {
    if opts.purge {
        store.write(retire::retire_forgotten)?;
    }
    if opts.purge && holds_plain_forgotten(&store.snapshot()?)? {
        store.write(subject::rehash_forgotten)?;
    }
    store.compact(opts)
}

/// Whether any `FORGOTTEN` entry of `snap` is plain (see `rehash_forgotten`).
fn holds_plain_forgotten(snap: &crate::snapshot::Snapshot) -> Result<bool> {
    for item in snap.prefix(FORGOTTEN, b"")? {
        let (key, _) = item?;
        let part = Partition::of_key(&key)?;
        if key.get(part.prefix().len()) != Some(&HASHED) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Converts `forget_subject`'s answer to the common outcome.
#[must_use]
pub fn subject_outcome(forgot: Forgot, name: &str) -> Outcome {
    match forgot {
        Forgot::Forgotten { entity, relations, passages, documents, attributes, kept_entities, kept_documents } => {
            let mut kept = Vec::new();
            if kept_documents > 0 {
                kept.push(Kept {
                    what: "documents",
                    count: u64::from(kept_documents),
                    why: "their other passages do not name the subject; the text of those that did is blanked",
                });
            }
            if !kept_entities.is_empty() {
                kept.push(Kept {
                    what: "entities",
                    count: kept_entities.len() as u64,
                    why: "named in a forgotten passage but stored in their own right",
                });
            }
            let counts = Counts {
                entities: u64::from(entity.is_some()),
                facts: u64::from(relations),
                documents: u64::from(documents),
                passages: u64::from(passages),
                attributes: u64::from(attributes),
                ..Counts::default()
            };
            Outcome::Forgotten { counts, kept }
        }
        Forgot::AlreadyForgotten => Outcome::AlreadyForgotten,
        Forgot::NotFound { did_you_mean } => Outcome::NotFound {
            message: format!("no entity is named exactly {name:?}"),
            did_you_mean,
            stored_between: Vec::new(),
        },
    }
}

#[cfg(test)]
mod purge_tests;
#[cfg(test)]
mod scope_tests;
#[cfg(test)]
mod source_hub_tests;
#[cfg(test)]
mod source_scale_tests;
#[cfg(test)]
mod tests;
