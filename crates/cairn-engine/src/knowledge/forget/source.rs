//! Forgetting a source label: every document stored with that label (with its passages,
//! postings and mention links), every fact whose provenance is one of those documents, every
//! fact asserted with that label (a label names where knowledge came from, whichever form it was
//! sent in), and the entity attributes set under it (`source_attributes.rs`). A fact another
//! provenance states too stays, citing that one (`fact_sources.rs`), its label taken out of its
//! record and events. Entities stay: each is stored in its own right, and the reply says so.
//! What the label holds is found through the source index (`source_index.rs`), so the form reads
//! pages by what the source holds, not by what its scope holds.

use super::super::docs::Document;
use super::super::edge_reads;
use super::super::edge_view::EdgeView;
use super::super::fact_sources::{Left, without};
use super::super::graph::{Relation, Source};
use super::super::part::Partition;
use super::super::records::{decode, encode};
use super::super::source_index;
use super::super::tally::Tally;
use super::super::trees::{DOC, REL, rel_key};
use super::source_attributes::forget_labelled_attributes;
use super::{
    Counts, Kept, Outcome, Strip, bury, bury_document, bury_relation, fact_target, missing, name_of, remove_relation,
    strip_events, unlink_document,
};
use crate::error::{Error, Result};
use crate::fts;
use crate::text::{LookupOptions, MatchKind, NameIndex, fold};
use crate::write::WriteTxn;

/// Whether `part` still holds a version of the fact `from` -[`folded_type`]-> `to`, read from the
/// shorter of its ends' lists (`edge_reads`): reading `from`'s whole list of the type, once a fact,
/// made a source's facts on a hub cost their number times the hub's (7.7M pages and 3 s for 500
/// facts on a hub of 20,000).
fn any_version(tx: &mut WriteTxn<'_>, part: &Partition, from: u64, to: u64, folded_type: &str) -> Result<bool> {
    Ok(!edge_reads::of_type::<EdgeView>(tx, part, (from, to), folded_type)?.is_empty())
}

/// The documents of `part` stored with `label`, in id order. They come from the source index
/// (`source_index.rs`), each checked as a scan would; a store whose index is not built yet reads
/// the scope's documents one at a time and keeps only the source's (a scope's texts may not fit
/// in memory). So do its facts (`source_index::each_relation`).
fn documents(tx: &mut WriteTxn<'_>, part: &Partition, label: &str, indexed: bool) -> Result<Vec<Document>> {
    let mut docs = Vec::new();
    let mut theirs = |doc: Document| {
        if doc.label.as_deref() == Some(label) {
            docs.push(doc);
        }
    };
    if indexed {
        for id in source_index::documents_of(tx, part, label)? {
            if let Some(bytes) = tx.get(DOC, &part.key(&[&id.to_be_bytes()]))? {
                theirs(decode(&bytes, "document")?);
            }
        }
    } else {
        tx.scan_prefix(DOC, part.prefix(), |_, bytes| {
            theirs(decode(bytes, "document")?);
            Ok(())
        })?;
    }
    Ok(docs)
}

/// Forgets everything `part` holds from source `label` (matched exactly).
pub fn forget_source(tx: &mut WriteTxn<'_>, part: &Partition, label: &str, now: i64) -> Result<Outcome> {
    if label.is_empty() {
        return Err(Error::InvalidArgument("source must not be empty".into()));
    }
    let mut counts = Counts::default();
    let mut tally = Tally::default();
    let indexed = source_index::built(tx)?;
    let docs = documents(tx, part, label, indexed)?;
    for doc in &docs {
        counts.passages += unlink_document(tx, part, doc, &mut tally)?;
        counts.documents += 1;
        // The `passage` form of a document that went with its source answers "already".
        bury_document(tx, part, doc, now)?;
    }
    // Sorted, as `Strip` reads it: looked up once a fact of the scope.
    let mut doc_ids: Vec<u64> = docs.iter().map(|d| d.id).collect();
    doc_ids.sort_unstable();
    fts::remove_docs(tx, part.raw(), &doc_ids)?;
    // A provenance is from here when it is one of those documents or carries the label. A
    // version goes when every provenance it had is from here; one another still states is kept,
    // rewritten without the label's (`fact_sources::without`).
    let from_here = |source: &Source| match source {
        Source::Document { doc_id, label: l } => doc_ids.binary_search(doc_id).is_ok() || l.as_deref() == Some(label),
        Source::Asserted { label: l } => l.as_deref() == Some(label),
    };
    let left = |rel: &Relation| without(rel, &from_here);
    let mut ends = std::collections::BTreeSet::new();
    // Each fact touched: its target, ends and folded type (a map: a source may state many).
    let mut facts: std::collections::BTreeMap<String, (u64, u64, String)> = std::collections::BTreeMap::new();
    let mut stated = Vec::new();
    let filed = if indexed { Some(source_index::facts_of(tx, part, label, &doc_ids)?) } else { None };
    source_index::each_relation(tx, part, filed.as_ref(), |rel| {
        match left(&rel) {
            Left::Untouched => {}
            Left::Gone => stated.push((rel, None)),
            Left::Rewritten(kept) => stated.push((rel, Some(kept))),
        }
        Ok(())
    })?;
    // Facts (not earlier versions) kept, and whether any record was kept or removed.
    let (mut still_stated, mut touched) = (0, false);
    for (rel, kept) in stated {
        let target = fact_target(&name_of(tx, part, rel.from)?, &rel.rel_type, &name_of(tx, part, rel.to)?);
        facts.entry(target.clone()).or_insert_with(|| (rel.from, rel.to, fold(&rel.rel_type)));
        if let Some(kept) = kept {
            // Its liveness and type stay: nothing to count.
            tx.put(REL, &rel_key(part, kept.id), &encode(&*kept))?;
            source_index::refile(tx, part, Some(&rel), Some(&kept))?;
            still_stated += u64::from(kept.version_of.is_none());
            touched = true;
            continue;
        }
        remove_relation(tx, part, &rel, &mut tally)?;
        bury_relation(tx, part, &rel, &target, now)?;
        ends.extend([rel.from, rel.to]);
        // Earlier versions of a fact are not facts of their own.
        counts.facts += u64::from(rel.version_of.is_none());
        touched = true;
    }
    tally.flush(tx)?;
    let attributes = forget_labelled_attributes(tx, part, label, now)?;
    ends.extend(&attributes.entities);
    counts.attributes = attributes.gone;
    if counts.is_empty() && attributes.kept == 0 && !touched {
        return match missing(tx, part, "source", label, format!("nothing is stored from source {label:?}"))? {
            Outcome::NotFound { message, stored_between, .. } => {
                Ok(Outcome::NotFound { message, did_you_mean: labels_meant(tx, part, label)?, stored_between })
            }
            done => Ok(done),
        };
    }
    bury(tx, part, "source", label, now)?;
    // A fact the source stated only some versions of (another call restored or asserted it)
    // keeps the others, and with them the events of the writes that made them.
    // In target order (the map's), so both lists are sorted as `Strip` reads them.
    let mut emptied = Vec::new();
    for (target, (from, to, folded_type)) in &facts {
        if !any_version(tx, part, *from, *to, folded_type)? {
            emptied.push(target.clone());
        }
    }
    let targets: Vec<String> = facts.into_keys().collect();
    let what = Strip::Source { label, left: &left, docs: &doc_ids, facts: &targets, emptied: &emptied };
    strip_events(tx, part, &what)?;
    let mut kept = Vec::new();
    if !ends.is_empty() {
        kept.push(Kept {
            what: "entities",
            count: ends.len() as u64,
            why: "entities the forgotten facts joined or the source wrote are stored in their own right; forget the subject to remove one",
        });
    }
    if still_stated > 0 {
        kept.push(Kept {
            what: "facts",
            count: still_stated,
            why: "another source states them too; they cite it now, and go when it is forgotten",
        });
    }
    if attributes.kept > 0 {
        kept.push(Kept {
            what: "attributes",
            count: attributes.kept,
            why: "set under this source and by another write too; forget one with the attribute form",
        });
    }
    Ok(Outcome::Forgotten { counts, kept })
}

/// Labels read for "did you mean", at most.
const LABELS_READ: usize = 5_000;

/// Up to three stored labels `label` may mean: spelled alike but for case, a near spelling, a
/// word of one or one it begins. Found by playing a model: `forget {source: "infra-note"}` (or
/// `"Infra-Notes"`) was a bare `NOT_FOUND`, "nothing is stored", and the model told the user there
/// was nothing to forget while `infra-notes` held what they asked to erase.
fn labels_meant(tx: &mut WriteTxn<'_>, part: &Partition, label: &str) -> Result<Vec<String>> {
    let labels = source_index::labels(tx, part, LABELS_READ)?;
    let index = NameIndex::new((0..).zip(labels.iter().map(String::as_str)));
    let hits = index.lookup(label, LookupOptions { prefix: true, limit: usize::MAX, as_name: false });
    let mut meant: Vec<String> = Vec::new();
    for hit in hits.into_iter().filter(|h| h.how != MatchKind::Exact) {
        if meant.len() == 3 {
            break;
        }
        if !meant.contains(&hit.name) {
            meant.push(hit.name);
        }
    }
    Ok(meant)
}
