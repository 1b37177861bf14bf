//! An earlier version's attribute writes in an export package. A version of a revised fact holds
//! the first n writes of its fact's list (`fact_attribute_time::WritesIn`); exported with that
//! list spelt out, n revisions sent n lists (found by a review: one fact related 1,100 times
//! exported 63 MB, 2,000 times 209 MB). So a version whose writes are the first n of its fact's,
//! as the fact's own record lists them, carries `attribute_writes_from_fact: n` instead, and an
//! import points it at its fact's list as stored here. A package of the earlier form (each
//! version with its own `attribute_writes`) still imports (`WritesIn::point_at_stored`).

use super::fact_attribute_time::WritesIn;
use super::fact_writes;
use super::graph::{Relation, relation_by_id, relation_in};
use super::import::Field;
use super::import_attributes::MAX_WRITES;
use super::part::Partition;
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::write::WriteTxn;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// The field of a version record counting the writes of its fact it holds.
pub(crate) const FIELD: &str = "attribute_writes_from_fact";

/// How many writes the facts an export page's versions belong to hold, each read once a page
/// (read once per version, they cost the square of the revisions again).
pub(crate) type Lists = HashMap<u64, u32>;

/// How many writes of its fact `version` holds, when they are the first of the fact's list: by
/// pointing at it, or (stored before versions pointed, and moved out of its record since:
/// `fact_writes.rs`) by holding a copy of them. `None` when it is no version or holds writes of
/// its own (as one whose fact a restore started anew does).
pub(crate) fn count(snap: &Snapshot, part: &Partition, version: &Relation, lists: &mut Lists) -> Result<Option<u32>> {
    let Some(fact) = version.version_of else { return Ok(None) };
    let own = version.writes_in.is_none() && version.writes.is_some();
    if version.writes_in.is_none_or(|w| w.holder != fact) && !own {
        return Ok(None);
    }
    let have = match lists.entry(fact) {
        Entry::Occupied(read) => *read.get(),
        Entry::Vacant(slot) => {
            *slot.insert(relation_by_id(snap, part, fact)?.and_then(|f| f.writes).map_or(0, |k| k.n))
        }
    };
    if let Some(w) = version.writes_in {
        return Ok((w.n <= have).then_some(w.n));
    }
    let mine = fact_writes::first(snap, part, version.id, u32::MAX)?;
    let n = u32::try_from(mine.len()).unwrap_or(u32::MAX);
    Ok((n <= have && fact_writes::first(snap, part, fact, n)? == mine).then_some(n))
}

/// How many writes the facts an import call's versions belong to hold here, each read once a
/// call (a fact's list only changes here when the fact is recorded, before its versions).
pub(crate) type Lens = HashMap<u64, usize>;

/// A fact record's `attribute_writes_from_fact`, checked: a version (`version_of`, mapped here to
/// `fact`) may give it instead of `attribute_writes`, and holds no more writes than its fact does
/// here. The pointer it becomes; `None` when the record gives none.
pub(super) fn field(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    r: &Map<String, Value>,
    fact: Option<u64>,
    lens: &mut Lens,
) -> Result<Field<Option<WritesIn>>> {
    let Some(given) = r.get(FIELD).filter(|v| !v.is_null()) else { return Ok(Ok(None)) };
    let Some(n) = given.as_u64().filter(|n| (1..=MAX_WRITES as u64).contains(n)).and_then(|n| u32::try_from(n).ok())
    else {
        return Ok(Err(format!("{FIELD}: must be a whole number from 1 to {MAX_WRITES}")));
    };
    let Some(fact) = fact else {
        return Ok(Err(format!(
            "{FIELD}: only an earlier version (one with a version_of) refers to its fact's writes"
        )));
    };
    if r.get("attribute_writes").is_some_and(|w| !w.is_null()) {
        return Ok(Err(format!("{FIELD}: a version gives its writes this way or as attribute_writes, not both")));
    }
    let have = if let Some(&have) = lens.get(&fact) {
        have
    } else {
        let have = relation_in(tx, part, fact)?
            .and_then(|f| f.writes)
            .map_or(0, |k| usize::try_from(k.n).unwrap_or(usize::MAX));
        lens.insert(fact, have);
        have
    };
    if usize::try_from(n).is_ok_and(|n| n > have) {
        return Ok(Err(format!(
            "{FIELD}: {n} writes, but the fact this is a version of (version_of) holds {have} attribute_writes"
        )));
    }
    Ok(Ok(Some(WritesIn { holder: fact, n })))
}
