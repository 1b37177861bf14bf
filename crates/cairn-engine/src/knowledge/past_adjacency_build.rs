//! Moving the earlier versions of a store written before `k.adj_past` (`past_adjacency.rs`) out of
//! `k.adj`: one scan of every relation record, once, in one transaction, then the marker (the
//! empty key of `k.adj_past`). Run before a verb (`knowledge::api::call`), as the source index's
//! build is. Until it has run the versions are read by a `relate` plan and passed over, as before:
//! the build changes a plan's cost, never its outcome. The earlier lives such a store kept cannot
//! be told from facts and stay in `k.adj`, read as facts, as before.
//!
//! Writers file copies apart whether or not the marker is there, so a store created by this
//! version needs nothing moved; its build finds every version filed apart already.

use super::build_once::build_once;
use super::graph::Relation;
use super::part::Partition;
use super::records::decode;
use super::trees::{ADJ, ADJ_PAST, IN, OUT, REL, adj_key};
use crate::error::Result;
use crate::store::Store;
use crate::text::fold;
use crate::write::WriteTxn;

/// Moves the earlier versions once a store holds a relation (`build_once`: one point read when it
/// is built).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, ADJ_PAST, &[REL], build)
}

/// Files every earlier version of every partition in `k.adj_past` (none in `k.adj`), and marks it done.
pub(crate) fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    let mut keys = Vec::new();
    let mut last: Option<Partition> = None;
    tx.scan_prefix(REL, &[], |key, value| {
        let rel: Relation = decode(value, "relation")?;
        if rel.version_of.is_some() {
            if !last.as_ref().is_some_and(|p| key.starts_with(p.prefix())) {
                last = Some(Partition::of_key(key)?);
            }
            let part = last.as_ref().expect("set above");
            let folded = fold(&rel.rel_type);
            keys.push(adj_key(part, rel.from, OUT, &folded, rel.id));
            keys.push(adj_key(part, rel.to, IN, &folded, rel.id));
        }
        Ok(())
    })?;
    for key in keys {
        tx.delete(ADJ, &key)?;
        tx.put(ADJ_PAST, &key, &[])?;
    }
    tx.put(ADJ_PAST, &[], &[1])
}
