//! An entity's adjacency as a read without `as_of` needs it: the facts of `k.adj`, and the copies
//! filed apart in `k.adj_past` (`past_adjacency.rs`) only when one of them may be seen. A status
//! restored thousands of times kept a copy per restore, each decoded on every recall and context
//! only to be dropped (4.7 ms a recall of that subject at 2,000 restores, 0.5 ms at 250).
//!
//! Which copies such a read sees (`recall::sees`): every record it shows is `current_at(None)`,
//! which an earlier version (`version_of`) never is, so no version shows. With a valid instant `t`
//! (`valid_at`, or the call's time for a plain read: `When::valid_instant`) a record shows when
//! it is true at `t`; with none (an engine caller's `When::default()`) only when it is not ended,
//! and every copy is stored ended (a version at its revision, a life at its end or its restore).
//! An earlier life can be true now: a fact that ends in 2030, said again from 2031, is restored
//! from 2031, and its life until 2030 is what a recall today shows. A life true at `t` ends after
//! `t`; its fact's `k.adj` entry holds a bound no earlier than the start and end of every life it
//! keeps (`past_adjacency::bound`), so that bound is after `t` too. A life is filed under its
//! fact's ends and type, so under every prefix (an entity's whole list, or one type of it) that
//! holds the life's entry, the fact's entry is there with the bound. So when no entry read holds
//! a bound after `t` (or there is no `t`), no copy under the prefix can be seen and `k.adj_past`
//! is not read; else both trees are, as before. A read with `as_of` reads both: a version shows
//! before its revision was recorded, a life as it was known then.
//!
//! The list read without the copies is the list read with them, less records the read drops
//! unseen, in the same key order: a recall and a context's walk (which ranks an entity's edges by
//! id, keeping the first it sees) answer as they did. Lives filed in `k.adj` (by a store written
//! before the copies were filed apart, an import, or a fact whose lives a forget reinstated) are
//! read as facts, as every reader reads them. The `outside_time` hint reads both trees when it is
//! given (a recall that shows no fact; a context whose seeds hold facts between them, none of
//! which the read sees, which the list without the copies settles first): it counts and dates the
//! facts a read does not see, lives among them.

use super::graph::{Direction, adjacency, adjacency_entry};
use super::part::Partition;
use super::past_adjacency::bound_of;
use super::recall::When;
use super::trees::{ADJ, adj_prefix};
use crate::error::Result;
use crate::snapshot::Snapshot;

/// The relations under `prefix` (an `adj_prefix` of `entity`, or one of its `adj_type_prefix`es)
/// that a read at `when` may see, as `graph::adjacency` lists them: the copies filed apart are
/// left out when none of them can be seen.
pub(crate) fn adjacency_at(
    snap: &Snapshot,
    part: &Partition,
    entity: u64,
    prefix: &[u8],
    when: &When,
) -> Result<Vec<(u64, Direction)>> {
    if when.as_of.is_some() {
        return adjacency(snap, part, entity, prefix);
    }
    let at = adj_prefix(part, entity).len();
    let (mut facts, mut latest) = (Vec::new(), None);
    snap.scan_prefix(ADJ, prefix, |key, value| {
        facts.push(adjacency_entry(at, key)?);
        latest = latest.max(bound_of(value)?);
        Ok(true)
    })?;
    match (latest, when.valid_instant()) {
        (Some(bound), Some(t)) if bound > t => adjacency(snap, part, entity, prefix),
        _ => Ok(facts),
    }
}
