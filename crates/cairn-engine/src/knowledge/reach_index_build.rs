//! Building the reach index (`reach_index.rs`) of a store written before it existed: one scan of
//! every relation record, once, in one transaction, then the marker (the empty key of `k.reach`).
//! Run before a verb (`knowledge::api::call`), as the attribute index's build is; until it has
//! run (a store opened read-only), the readers read the whole adjacency lists instead.
//!
//! Writers keep the index whether or not the marker is there, so a store created by this version
//! is complete from its first write; the build still starts from empty, so what it leaves is
//! exactly what the records hold. `Store::check` verifies the same (`verify`).

use super::build_once::build_once;
use super::graph::Relation;
use super::part::Partition;
use super::reach_index::keys;
use super::records::decode;
use super::trees::{REACH, REL};
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::write::WriteTxn;
use std::collections::BTreeSet;

/// Builds the reach index, once a store holds a relation (`build_once`: one point read when it
/// is built).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    build_once(store, REACH, &[REL], build)
}

/// Replaces the index of every partition by one filed from the relation records, and marks it
/// built.
pub(crate) fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    tx.delete_prefix(REACH, &[])?;
    let mut filed = Vec::new();
    let mut last: Option<Partition> = None;
    tx.scan_prefix(REL, &[], |key, value| {
        if !last.as_ref().is_some_and(|p| key.starts_with(p.prefix())) {
            last = Some(Partition::of_key(key)?);
        }
        let rel: Relation = decode(value, "relation")?;
        filed.extend(keys(last.as_ref().expect("set above"), &rel));
        Ok(())
    })?;
    filed.sort_unstable();
    filed.dedup();
    let mut run = tx.sorted_run(REACH, true)?;
    for key in &filed {
        run.push(key, &[])?;
    }
    run.finish()?;
    tx.put(REACH, &[], &[1])
}

/// What is wrong with the reach index of `snap`: the keys the relation records call for that it
/// lacks and the ones it holds that no record calls for (a few of each, and how many). Nothing
/// when it is not built.
pub(crate) fn verify(snap: &Snapshot) -> Result<Vec<String>> {
    if snap.get(REACH, &[])?.is_none() {
        return Ok(Vec::new());
    }
    let mut wanted = BTreeSet::new();
    let mut last: Option<Partition> = None;
    snap.scan_prefix(REL, &[], |key, value| {
        if !last.as_ref().is_some_and(|p| key.starts_with(p.prefix())) {
            last = Some(Partition::of_key(key)?);
        }
        let rel: Relation = decode(value, "relation")?;
        wanted.extend(keys(last.as_ref().expect("set above"), &rel));
        Ok(true)
    })?;
    let mut stray = Vec::new();
    snap.scan_prefix(REACH, &[], |key, _| {
        if !key.is_empty() && !wanted.remove(key) {
            stray.push(key.to_vec());
        }
        Ok(true)
    })?;
    let mut problems = Vec::new();
    for (what, keys) in [("lacks", wanted.into_iter().collect::<Vec<_>>()), ("holds a stray", stray)] {
        if let Some(first) = keys.first() {
            problems.push(format!("the reach index {what} key {first:02x?} ({} such)", keys.len()));
        }
    }
    Ok(problems)
}
