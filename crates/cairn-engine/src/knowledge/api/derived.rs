//! A derived fact on the wire, as recall and context show it: the fact shape with `derived: true`,
//! its rule and the stored facts it rests on, cited by the first of them.

use crate::error::Result;
use crate::knowledge::Partition;
use crate::knowledge::citation::Citer;
use crate::knowledge::derive::Derived;
use crate::knowledge::graph::relation_by_id;
use crate::knowledge::wire::{self, FoundBy};
use crate::snapshot::Snapshot;
use serde_json::Value;

/// `d` read from the seed named `seed`; `None` when the first fact it rests on is gone from `snap`.
pub(super) fn derived_fact(
    snap: &Snapshot,
    part: &Partition,
    citer: &mut Citer<'_>,
    d: &Derived,
    seed: &str,
    name_of: &mut dyn FnMut(u64) -> Result<String>,
) -> Result<Option<Value>> {
    let Some(base) = relation_by_id(snap, part, d.basis[0])? else { return Ok(None) };
    let ends = (name_of(d.from)?, name_of(d.to)?);
    let base_ends = (name_of(base.from)?, name_of(base.to)?);
    let citation = citer.relation(&base, (&base_ends.0, &base_ends.1))?;
    let basis: Vec<String> = d.basis.iter().map(u64::to_string).collect();
    let reasoning = format!("{} rule over stored fact(s) {}", wire::rule(d.rule), basis.join(", "));
    let by = FoundBy { seed, hops: d.basis.len(), reasoning: Some(reasoning) };
    Ok(Some(wire::derived_fact(d, (&ends.0, &ends.1), &base, &citation, &by)))
}
