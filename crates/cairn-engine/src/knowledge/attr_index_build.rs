//! Building the attribute index (`attr_index.rs`) of a store written before it existed: one scan
//! of every entity and every history event of the store, once, in one transaction, then the
//! marker (the empty key of `k.attr`). Run before a verb (`knowledge::api::call`), as the tally's
//! build is, so a recall by attribute never reads an index that misses old entities.
//!
//! Writers keep the index whether or not the marker is there, so a store created by this version
//! is complete from its first write; the build still starts from empty, so what it leaves is
//! exactly what the records and events hold.

use super::attr_index::Bulk;
use super::attribute_time::set_by;
use super::build_once::build_once;
use super::graph::Entity;
use super::part::Partition;
use super::records::decode;
use super::trees::{ATTR, ATTR_OF, ENT};
use crate::error::{Error, Result};
use crate::history::{EVENT, Event};
use crate::store::Store;
use crate::write::WriteTxn;
use std::collections::{HashMap, HashSet};

/// Whether the store's attribute index is complete.
#[cfg(test)]
pub(crate) fn built(store: &Store) -> Result<bool> {
    Ok(store.snapshot()?.get(ATTR, &[])?.is_some())
}

/// Builds the attribute index, once a store holds an entity (`build_once`: one point read when
/// it is built).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, ATTR, &[ENT], build)
}

/// Replaces the index of every partition by one filed from the entities' records and history,
/// and marks it built.
pub(crate) fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    tx.delete_prefix(ATTR, &[])?;
    tx.delete_prefix(ATTR_OF, &[])?;
    let mut bulk = Bulk::default();
    // The partitions holding entities, by prefix, and their entities' ids: an event files its
    // values only for an entity stored now (a store written before may keep an event of one
    // forgotten since), and events of other partitions (retired ones) are never parsed as one.
    let mut parts: HashMap<Vec<u8>, Partition> = HashMap::new();
    let mut stored: HashSet<(Vec<u8>, u64)> = HashSet::new();
    tx.scan_prefix(ENT, &[], |key, value| {
        let e: Entity = decode(value, "entity")?;
        let prefix = prefix_of(key)?;
        if !parts.contains_key(prefix) {
            parts.insert(prefix.to_vec(), Partition::of_key(key)?);
        }
        bulk.add(&parts[prefix], e.id, &e.attributes);
        stored.insert((prefix.to_vec(), e.id));
        Ok(())
    })?;
    tx.scan_prefix(EVENT, &[], |key, value| {
        let event: Event = decode(value, "event")?;
        let Some((id, attributes)) = set_by(&event) else { return Ok(()) };
        let prefix = prefix_of(key)?;
        if let Some(part) = parts.get(prefix)
            && stored.contains(&(prefix.to_vec(), id))
        {
            bulk.add(part, id, &attributes);
        }
        Ok(())
    })?;
    bulk.put(tx)?;
    tx.put(ATTR, &[], &[1])
}

/// The partition prefix a key starts with (`len u16 BE | tenant \0 user \0 scope`).
pub(crate) fn prefix_of(key: &[u8]) -> Result<&[u8]> {
    let len = key.get(..2).map(|l| 2 + usize::from(u16::from_be_bytes([l[0], l[1]])));
    len.and_then(|len| key.get(..len))
        .ok_or_else(|| Error::corrupt(None, "a stored key does not start with a partition"))
}
