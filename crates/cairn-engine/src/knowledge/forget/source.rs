//! Forgetting a source label: every document stored with that label (with its passages,
//! postings and mention links), every fact whose provenance is one of those documents, and every
//! fact asserted with that label (a label names where knowledge came from, whichever form it was
//! sent in). Entities stay: they may be known from elsewhere.

use super::super::docs::Document;
use super::super::graph::{Relation, Source};
use super::super::part::Partition;
use super::super::records::decode;
use super::super::trees::{DOC, REL};
use super::{
    Counts, Kept, Outcome, Strip, bury, bury_document, bury_relation, fact_target, missing, name_of, remove_document,
    remove_relation, strip_events,
};
use crate::error::{Error, Result};
use crate::write::WriteTxn;

/// Forgets everything `part` holds from source `label` (matched exactly).
pub fn forget_source(tx: &mut WriteTxn<'_>, part: &Partition, label: &str, now: i64) -> Result<Outcome> {
    if label.is_empty() {
        return Err(Error::InvalidArgument("source must not be empty".into()));
    }
    let mut counts = Counts::default();
    let mut docs = Vec::new();
    for (_, bytes) in tx.prefix(DOC, part.prefix())? {
        let doc: Document = decode(&bytes, "document")?;
        if doc.label.as_deref() == Some(label) {
            docs.push(doc);
        }
    }
    for doc in &docs {
        counts.passages += remove_document(tx, part, doc)?;
        counts.documents += 1;
        // The `passage` form of a document that went with its source answers "already".
        bury_document(tx, part, doc, now)?;
    }
    let mut ends = std::collections::BTreeSet::new();
    let mut fact_targets = Vec::new();
    for (_, bytes) in tx.prefix(REL, part.prefix())? {
        let rel: Relation = decode(&bytes, "relation")?;
        let from_here = match &rel.source {
            Source::Document { doc_id, label: l } => {
                docs.iter().any(|d| d.id == *doc_id) || l.as_deref() == Some(label)
            }
            Source::Asserted { label: l } => l.as_deref() == Some(label),
        };
        if from_here {
            let target = fact_target(&name_of(tx, part, rel.from)?, &rel.rel_type, &name_of(tx, part, rel.to)?);
            remove_relation(tx, part, &rel)?;
            bury_relation(tx, part, &rel, &target, now)?;
            if !fact_targets.contains(&target) {
                fact_targets.push(target);
            }
            ends.extend([rel.from, rel.to]);
            counts.facts += 1;
        }
    }
    if counts.is_empty() {
        return missing(tx, part, "source", label, format!("nothing is stored from source {label:?}"));
    }
    bury(tx, part, "source", label, now)?;
    let doc_ids: Vec<u64> = docs.iter().map(|d| d.id).collect();
    strip_events(tx, part, &Strip::Documents(&doc_ids))?;
    strip_events(tx, part, &Strip::Facts(&fact_targets))?;
    let mut kept = Vec::new();
    if !ends.is_empty() {
        kept.push(Kept {
            what: "entities",
            count: ends.len() as u64,
            why: "entities may be known from other sources; forget the subject to remove one",
        });
    }
    Ok(Outcome::Forgotten { counts, kept })
}
