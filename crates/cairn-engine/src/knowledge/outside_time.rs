//! The `outside_time` hint of a recall that shows none of its subject's facts: the subject has
//! stored facts, but the read's time (`as_of`, `valid_at`, or now for a plain read) sees none of
//! them. Without it such a reply (`answered`, no facts; or `nothing_stored` for a subject first
//! recorded after `as_of`) cannot be told from a subject with no facts at all. It counts the
//! hidden facts and names the nearest moments a read would see some: the next `valid_from` after
//! the read's instant, the last `valid_to` at or before it, the next recording after `as_of`.
//! It reads the subject's own partition only, like the recall it annotates. A context gives the
//! same hint for the facts between the entities its question names (`between`).

use super::graph::{Direction, Neighbour, adjacency, neighbour, neighbours};
use super::part::Partition;
use super::present_adjacency::adjacency_at;
use super::recall::{When, sees};
use super::trees::adj_prefix;
use super::wire::iso_ms;
use crate::error::Result;
use crate::snapshot::Snapshot;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// The hint for `entity` read at `when`, or `None` when the read hides none of its facts.
pub(crate) fn outside_time(snap: &Snapshot, part: &Partition, entity: u64, when: &When) -> Result<Option<Value>> {
    Ok(hint(neighbours(snap, part, entity)?, when))
}

/// The hint for the facts between two of `seeds` (a context's: "Does Priya work at Northwind?")
/// when the read at `when` sees none of them but the store holds some: the fact ended, or starts
/// later. Facts between seeds are found from the adjacency keys; only those are read. One seen
/// among the records the read may see (`present_adjacency.rs`) settles it: only when none is are
/// the copies a fact keeps of itself read, to be counted and dated with the rest.
///
/// Nor are they when that first list holds no relation between the seeds at all. A copy is
/// filed under its own ends and type, which are its fact's: an earlier version is the fact with
/// a new id, and an earlier life is filed apart only beside its fact's entry in `k.adj` (a life
/// whose fact changed ends is filed there itself, and a forgotten fact takes its lives back
/// there first: `past_adjacency.rs`). So a life between the seeds has its fact listed between
/// them, and an earlier version is never hinted without `as_of` (`hint` keeps facts current
/// then, which no version is). A read with `as_of` has read the copies already.
pub(crate) fn between(snap: &Snapshot, part: &Partition, seeds: &[u64], when: &When) -> Result<Option<Value>> {
    // No relation is held by two seeds when there are not two.
    if seeds.len() < 2 {
        return Ok(None);
    }
    let listed = |seed, prefix: &[u8]| adjacency_at(snap, part, seed, prefix, when);
    let Some(facts) = between_seeds(snap, part, seeds, listed, when)? else { return Ok(None) };
    if facts.is_empty() || when.as_of.is_some() {
        return Ok(hint(facts, when));
    }
    let facts = between_seeds(snap, part, seeds, |seed, prefix| adjacency(snap, part, seed, prefix), when)?;
    Ok(facts.and_then(|facts| hint(facts, when)))
}

/// The relations two of `seeds` hold, as each seed's list reads them, or `None` when the read at
/// `when` sees one of them.
fn between_seeds(
    snap: &Snapshot,
    part: &Partition,
    seeds: &[u64],
    mut list: impl FnMut(u64, &[u8]) -> Result<Vec<(u64, Direction)>>,
    when: &When,
) -> Result<Option<Vec<Neighbour>>> {
    let mut holders: HashMap<u64, usize> = HashMap::new();
    for &seed in seeds {
        let ids: HashSet<u64> = list(seed, &adj_prefix(part, seed))?.into_iter().map(|(id, _)| id).collect();
        for id in ids {
            *holders.entry(id).or_default() += 1;
        }
    }
    let mut facts = Vec::new();
    for (&id, _) in holders.iter().filter(|&(_, &n)| n > 1) {
        let Some(n) = neighbour(snap, part, id, Direction::Outbound)? else { continue };
        if sees(&n.relation, when) {
            return Ok(None);
        }
        facts.push(n);
    }
    Ok(Some(facts))
}

/// The hint over `facts` (as stored), or `None` when the read at `when` hides none of them.
fn hint(facts: Vec<Neighbour>, when: &When) -> Option<Value> {
    // An earlier version of a fact revised by `as_of` (or by now) is no fact at another time.
    let hidden: Vec<_> =
        facts.into_iter().filter(|n| n.relation.current_at(when.as_of) && !sees(&n.relation, when)).collect();
    if hidden.is_empty() {
        return None;
    }
    let instant = when.valid_instant();
    // Facts the store knew at the read's `as_of` (all, without one) but not true at its instant.
    let known = hidden.iter().map(|n| &n.relation).filter(|r| when.as_of.is_none_or(|t| r.recorded_at <= t));
    let mut next_from: Option<(i64, &str)> = None;
    let mut last_to: Option<(i64, &str)> = None;
    if let Some(at) = instant {
        for r in known {
            if let (Some(start), Some(text)) = (r.valid_start(), r.valid_from.as_deref())
                && start > at
                && next_from.is_none_or(|(best, _)| start < best)
            {
                next_from = Some((start, text));
            }
            if let (Some(end), Some(text)) = (r.valid_end(when.as_of), r.valid_to_at(when.as_of))
                && end <= at
                && last_to.is_none_or(|(best, _)| end > best)
            {
                last_to = Some((end, text));
            }
        }
    }
    let next_recorded =
        when.as_of.and_then(|t| hidden.iter().map(|n| n.relation.recorded_at).filter(|&at| at > t).min());
    // Facts, not versions: an earlier version and the fact it became count once.
    let facts: std::collections::HashSet<u64> =
        hidden.iter().map(|n| n.relation.version_of.unwrap_or(n.relation.id)).collect();
    let mut hint = json!({ "facts": facts.len() });
    if let Some((_, text)) = next_from {
        hint["next_valid_from"] = json!(text);
    }
    if let Some((_, text)) = last_to {
        hint["last_valid_to"] = json!(text);
    }
    if let Some(at) = next_recorded {
        hint["next_recorded_at"] = json!(iso_ms(at));
    }
    Some(hint)
}
