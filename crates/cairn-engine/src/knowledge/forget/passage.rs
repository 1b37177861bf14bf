//! Forgetting a document by id (the `passage` form): the document, every passage of it, their
//! full-text postings and mention links, and its content hash (so remembering the same text again
//! stores it anew). Facts whose provenance is the document stay and are reported as kept: they
//! were asserted as facts; forgetting the `source` label removes them too. One another
//! provenance states too cites that one instead (`fact_sources.rs`). The entities its
//! passages named stay as well (they are stored in their own right) and are reported as kept.

use super::super::docs::Document;
use super::super::fact_sources::{Left, without};
use super::super::graph::Source;
use super::super::part::Partition;
use super::super::records::{decode, encode};
use super::super::source_index;
use super::super::tally::Tally;
use super::super::trees::{DOC, MENTIONED, REL, rel_key, trailing_id};
use super::{Counts, Kept, Outcome, Strip, bury_document, missing, remove_document, strip_events};
use crate::error::Result;
use crate::write::WriteTxn;

/// Forgets document `doc` of `part`.
pub fn forget_document(tx: &mut WriteTxn<'_>, part: &Partition, doc: u64, now: i64) -> Result<Outcome> {
    let target = doc.to_string();
    let Some(bytes) = tx.get(DOC, &part.key(&[&doc.to_be_bytes()]))? else {
        return missing(tx, part, "passage", &target, format!("no document has id {doc}"));
    };
    let document: Document = decode(&bytes, "document")?;
    let mut named: Vec<u64> = Vec::new();
    for (link, _) in tx.prefix(MENTIONED, &part.key(&[&doc.to_be_bytes()]))? {
        named.push(trailing_id(&link)?);
    }
    named.sort_unstable();
    named.dedup();
    let mut tally = Tally::default();
    let passages = remove_document(tx, part, &document, &mut tally)?;
    tally.flush(tx)?;
    bury_document(tx, part, &document, now)?;
    strip_events(tx, part, &Strip::Documents(&[doc]))?;
    // Counted one fact at a time: a scope's facts may not fit in memory at once. A fact another
    // provenance states too cites that one from now on, the document taken out of it
    // (`fact_sources::without`); one the document alone stated keeps citing it.
    let of_doc = |source: &Source| matches!(source, Source::Document { doc_id, .. } if *doc_id == doc);
    // The facts citing it, through the source index once it is built (`source_index.rs`).
    let filed = if source_index::built(tx)? { Some(source_index::citing(tx, part, doc)?) } else { None };
    let (mut citing, mut promoted) = (0, Vec::new());
    source_index::each_relation(tx, part, filed.as_ref(), |rel| {
        match without(&rel, &of_doc) {
            Left::Untouched => {}
            // Earlier versions of a fact are not facts of their own.
            Left::Gone => citing += u64::from(rel.version_of.is_none()),
            Left::Rewritten(kept) => promoted.push((rel, kept)),
        }
        Ok(())
    })?;
    let restated = promoted.iter().filter(|(rel, _)| rel.version_of.is_none()).count() as u64;
    for (was, rel) in promoted {
        // Its liveness and type stay: nothing to count.
        tx.put(REL, &rel_key(part, rel.id), &encode(&*rel))?;
        source_index::refile(tx, part, Some(&was), Some(&rel))?;
    }
    let mut kept = Vec::new();
    if citing > 0 {
        kept.push(Kept {
            what: "facts",
            count: citing,
            why: "facts taken from this document stay (their citation has no span now); forget the source to remove them",
        });
    }
    if restated > 0 {
        kept.push(Kept { what: "facts", count: restated, why: "another source states them too; they cite it now" });
    }
    if !named.is_empty() {
        kept.push(Kept {
            what: "entities",
            count: named.len() as u64,
            why: "named in a forgotten passage but stored in their own right; forget the subject to remove one",
        });
    }
    Ok(Outcome::Forgotten { counts: Counts { documents: 1, passages, ..Counts::default() }, kept })
}
