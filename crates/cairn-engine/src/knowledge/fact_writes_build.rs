//! Moving the attribute writes a store written before `k.fact_writes` kept in its fact records
//! (`attribute_writes`) out to that tree (`fact_writes.rs`): one scan of every relation record,
//! once, in one transaction, then the marker (the empty key of `k.fact_writes`). Run before a verb
//! (`knowledge::api::call`), as the other builds are: every read after it finds the lists apart.
//! An earlier version that held a copy of its fact's first writes (stored before versions
//! pointed at their fact's list) points at them instead, as an import of one does.
//!
//! Writers keep the lists apart whether or not the marker is there, so a store created by this
//! version needs nothing moved; its build finds no record holding a list.

use super::build_once::build_once;
use super::fact_attribute_time::WritesIn;
use super::fact_writes::{FACT_WRITES, move_out};
use super::graph::Relation;
use super::part::Partition;
use super::records::{decode, encode};
use super::trees::{REL, rel_key};
use crate::error::Result;
use crate::store::Store;
use crate::write::WriteTxn;

/// Moves the lists once a store holds a relation (`build_once`: one point read when it is built).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, FACT_WRITES, &[REL], build)
}

/// Moves every record's list to `k.fact_writes`, facts before their versions (a version's id is
/// later than its fact's, and a scan goes in key order), and marks it done.
pub(crate) fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    let mut holding = Vec::new();
    tx.scan_prefix(REL, &[], |key, value| {
        let rel: Relation = decode(value, "relation")?;
        if !rel.attribute_writes.is_empty() {
            holding.push((Partition::of_key(key)?, rel));
        }
        Ok(())
    })?;
    for (part, mut rel) in holding {
        WritesIn::point_at_stored(tx, &part, &mut rel)?;
        move_out(tx, &part, &mut rel)?;
        tx.put(REL, &rel_key(&part, rel.id), &encode(&rel))?;
    }
    tx.put(FACT_WRITES, &[], &[1])
}
