//! Building the tally (`tally.rs`) of a store written before it existed: one scan of every
//! entity, relation, document and passage of the store, once, in one transaction, then the
//! marker (the empty key of `k.tally`) that says the counts are complete. Run before a verb
//! reads or writes knowledge (`knowledge::api::call`), as the notes index's upgrade is.
//!
//! Writers keep the tally whether or not the marker is there, so a store created by this version
//! is exact from its first write; the build still replaces whatever counts it finds, because in
//! a store written before they are the changes since an arbitrary point, not counts.

use super::build_once::build_once;
use super::graph::{Entity, Relation};
use super::part::Partition;
use super::records::decode;
use super::tally::{TALLY, Tally};
use super::trees::{DOC, ENT, PSG, REL};
use crate::error::Result;
use crate::store::Store;
use crate::write::WriteTxn;

/// Whether the store's tally is complete.
#[cfg(test)]
pub(crate) fn built(store: &Store) -> Result<bool> {
    Ok(store.snapshot()?.get(TALLY, &[])?.is_some())
}

/// Builds the tally, once a store holds a record (`build_once`: one point read when it is built).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, TALLY, &[ENT, REL, DOC, PSG], build)
}

/// The partition a key starts with, parsed once per run of keys of one partition.
struct Parts {
    last: Option<Partition>,
}

impl Parts {
    fn of(&mut self, key: &[u8]) -> Result<&Partition> {
        if !self.last.as_ref().is_some_and(|p| key.starts_with(p.prefix())) {
            self.last = Some(Partition::of_key(key)?);
        }
        Ok(self.last.as_ref().expect("set above"))
    }
}

/// Replaces every count of the store by one counted from its records, and marks it built.
pub(crate) fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    tx.delete_prefix(TALLY, &[])?;
    let mut tally = Tally::default();
    let mut parts = Parts { last: None };
    tx.scan_prefix(ENT, &[], |key, value| {
        let e: Entity = decode(value, "entity")?;
        tally.entity(parts.of(key)?, None, Some(&e));
        Ok(())
    })?;
    tx.scan_prefix(REL, &[], |key, value| {
        let r: Relation = decode(value, "relation")?;
        tally.relation(parts.of(key)?, None, Some(&r));
        Ok(())
    })?;
    // Documents and passages are counted by key: their values (texts) are most of the store.
    for key in tx.prefix_keys(DOC, &[])? {
        tally.documents(parts.of(&key)?, 1);
    }
    for key in tx.prefix_keys(PSG, &[])? {
        tally.passages(parts.of(&key)?, 1);
    }
    tally.flush(tx)?;
    tx.put(TALLY, &[], &[1])
}
