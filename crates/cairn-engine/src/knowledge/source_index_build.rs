//! Building the source index (`source_index.rs`) of a store written before it existed: one scan
//! of every document, relation record and history event of the store, once, in one transaction, then the marker
//! (the empty key of `k.source`). Run before a verb (`knowledge::api::call`), as the tally's build
//! is; until it has run, the readers of the index scan the scope instead, so a store written
//! before forgets exactly what it did.
//!
//! Writers keep the index whether or not the marker is there, so a store created by this version
//! is complete from its first write; the build still starts from empty, so what it leaves is
//! exactly what the records hold.

use super::attribute_time::source_of;
use super::build_once::build_once;
use super::docs::Document;
use super::graph::Relation;
use super::part::Partition;
use super::records::decode;
use super::source_index::{document_key, event_key, relation_keys};
use super::trees::{DOC, ENT, REL, SOURCES};
use crate::error::Result;
use crate::history::{EVENT, Event};
use crate::store::Store;
use crate::write::WriteTxn;

/// Builds the source index, once a store holds a document, a relation or an entity (`build_once`:
/// one point read when it is built). An event filed under a label is an entity's, so a store of
/// notes alone (whose events it files none of) is left as it is, as the tally's build leaves it:
/// a read on it never writes (a `status` on a full disk answers).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, SOURCES, &[DOC, REL, ENT], build)
}

/// Replaces the index of every partition by one filed from its records, and marks it built.
pub(crate) fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    tx.delete_prefix(SOURCES, &[])?;
    let mut keys = Vec::new();
    let mut last: Option<Partition> = None;
    let mut part_of = |key: &[u8]| -> Result<Partition> {
        if !last.as_ref().is_some_and(|p| key.starts_with(p.prefix())) {
            last = Some(Partition::of_key(key)?);
        }
        Ok(last.clone().expect("set above"))
    };
    tx.scan_prefix(DOC, &[], |key, value| {
        let doc: Document = decode(value, "document")?;
        keys.extend(document_key(&part_of(key)?, &doc));
        Ok(())
    })?;
    tx.scan_prefix(REL, &[], |key, value| {
        let rel: Relation = decode(value, "relation")?;
        keys.extend(relation_keys(&part_of(key)?, &rel));
        Ok(())
    })?;
    tx.scan_prefix(EVENT, &[], |key, value| {
        let event: Event = decode(value, "history event")?;
        if let Some(label) = source_of(&event) {
            keys.push(event_key(&part_of(key)?, label, event.seq));
        }
        Ok(())
    })?;
    keys.sort_unstable();
    keys.dedup();
    let mut run = tx.sorted_run(SOURCES, true)?;
    for key in &keys {
        run.push(key, &[])?;
    }
    run.finish()?;
    tx.put(SOURCES, &[], &[1])
}
