//! Building the index of attribute writes (`attr_writes.rs`) of a store written before it
//! existed: one scan of every entity and every history event of the store, once, in one
//! transaction, then the marker (the empty key of `k.attr_writes`). Run before a verb
//! (`knowledge::api::call`), as the attribute index's build is; until it has run, a read of what
//! is true now reads the entity's history instead.
//!
//! Writers keep the index whether or not the marker is there, so a store created by this version
//! is complete from its first write (and marked then: `attr_writes::mark_if_new`); the build
//! still starts from empty, so what it leaves is exactly what the history holds.

use super::attr_index_build::prefix_of;
use super::attr_writes::{file, mark};
use super::attribute_time::Written;
use super::build_once::build_once;
use super::part::Partition;
use super::records::decode;
use super::trees::{ATTR_WRITES, ENT, trailing_id};
use crate::error::Result;
use crate::history::{EVENT, Event};
use crate::store::Store;
use crate::write::WriteTxn;
use std::collections::{HashMap, HashSet};

/// Builds the index, once a store holds an entity (`build_once`: one point read when it is built).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, ATTR_WRITES, &[ENT], build)
}

/// Replaces the index of every partition by one filed from the history, and marks it built.
pub(crate) fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    tx.delete_prefix(ATTR_WRITES, &[])?;
    // The entities stored now, by partition prefix: a store written before may keep an event of
    // an entity forgotten since, whose entries no read would ever find; and events of other
    // partitions (retired ones) are never decoded.
    let mut stored: HashMap<Vec<u8>, (Partition, HashSet<u64>)> = HashMap::new();
    tx.scan_prefix(ENT, &[], |key, _| {
        let prefix = prefix_of(key)?;
        if !stored.contains_key(prefix) {
            stored.insert(prefix.to_vec(), (Partition::of_key(key)?, HashSet::new()));
        }
        stored.get_mut(prefix).expect("inserted above").1.insert(trailing_id(key)?);
        Ok(())
    })?;
    let mut filed: Vec<(Partition, u64, Written)> = Vec::new();
    tx.scan_prefix(EVENT, &[], |key, value| {
        let Some((part, ids)) = stored.get(prefix_of(key)?) else { return Ok(()) };
        let event: Event = decode(value, "history event")?;
        if let Some(written) = Written::by(&event)
            && ids.contains(&written.entity)
        {
            filed.push((part.clone(), event.seq, written));
        }
        Ok(())
    })?;
    for (part, seq, written) in &filed {
        file(tx, part, *seq, written)?;
    }
    mark(tx)
}
