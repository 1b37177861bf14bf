//! The attribute writes a fact event keeps. An event's `before` and `after` are the fact's record,
//! and the record of a fact revised n times holds n writes: kept whole, n revisions stored the
//! list 2n times (found by a review: 1,000 revisions of one fact's attributes left ~110 MB of
//! events). `memory_history` shows only the newest writes within `SHOWN_ATTRIBUTE_BYTES` and counts
//! the rest, so an event keeps just those and the count (`attribute_writes_omitted`); the fact's
//! record, export and every read keep the whole list.

use super::fact_attribute_time::AttributeWrite;
use super::fact_writes;
use super::graph::Relation;
use super::part::Partition;
use super::shown_attributes::SHOWN_ATTRIBUTE_BYTES;
use crate::error::Result;
use crate::write::WriteTxn;
use serde_json::{Value, json};

/// The field of an event's record counting the older writes it leaves out.
pub(crate) const OMITTED: &str = "attribute_writes_omitted";

/// How many of `writes`, oldest first, an event leaves out: all but the newest whose JSON (as
/// replies spell it) fits in `SHOWN_ATTRIBUTE_BYTES`, and never the newest. It walks back from
/// the newest, so it costs the writes shown, not the list (it spelt the whole list out first:
/// at 2,000 revisions, every `relate` turned 2,000 writes into JSON to keep a few).
pub(crate) fn left_out(writes: &[AttributeWrite]) -> usize {
    let (mut bytes, mut from) = (0, writes.len());
    while from > 0 {
        let size = serde_json::to_vec(&writes[from - 1].on_the_wire()).map_or(0, |v| v.len()) + 1;
        if from < writes.len() && bytes + size > SHOWN_ATTRIBUTE_BYTES {
            break;
        }
        bytes += size;
        from -= 1;
    }
    from
}

/// `rel` as a fact event keeps it: the record without its writes, then the writes shown. Spelling
/// the whole list out as JSON to keep its tail was, at 2,000 revisions of one fact's attributes,
/// over a quarter of each `relate` (perf: `kept` turned 2,000 writes into JSON twice a call); so
/// is reading it: the writes shown are read from the newest back (`fact_writes.rs`), unless
/// `rel` has its list in memory already.
pub(crate) fn kept(tx: &mut WriteTxn<'_>, part: &Partition, rel: &Relation) -> Result<Value> {
    let (from, shown) = if rel.attribute_writes.is_empty() {
        newest(tx, part, rel)?
    } else {
        let from = left_out(&rel.attribute_writes);
        (from, rel.attribute_writes[from..].to_vec())
    };
    let mut out = serde_json::to_value(without_writes(rel)).expect("relations serialise");
    if !shown.is_empty() {
        out["attribute_writes"] = serde_json::to_value(shown).expect("writes serialise");
    }
    if from > 0 {
        out[OMITTED] = json!(from);
    }
    Ok(out)
}

/// `left_out` and the writes shown, for `rel` whose list is stored at its id, read one write at a
/// time from the newest. A version pointing at its fact's list (`writes_in`) shows none, as its
/// record, holding none, always did.
fn newest(tx: &mut WriteTxn<'_>, part: &Partition, rel: &Relation) -> Result<(usize, Vec<AttributeWrite>)> {
    let (holder, n) = match (rel.writes_in, rel.writes) {
        (None, Some(k)) => (rel.id, k.n),
        _ => return Ok((0, Vec::new())),
    };
    let (mut bytes, mut from, mut shown) = (0, n, Vec::new());
    while from > 0 {
        let Some(w) = fact_writes::nth_in(tx, part, holder, from - 1)? else { break };
        let size = serde_json::to_vec(&w.on_the_wire()).map_or(0, |v| v.len()) + 1;
        if from < n && bytes + size > SHOWN_ATTRIBUTE_BYTES {
            break;
        }
        bytes += size;
        from -= 1;
        shown.push(w);
    }
    shown.reverse();
    Ok((usize::try_from(from).unwrap_or(usize::MAX), shown))
}

/// `rel` with no attribute writes, every other field cloned (named one by one, so a field added
/// to `Relation` must be placed here too).
fn without_writes(rel: &Relation) -> Relation {
    let Relation {
        id,
        from,
        to,
        rel_type,
        attributes,
        valid_from,
        valid_to,
        recorded_at,
        ended_at,
        source,
        agent,
        shortened,
        source_date,
        version_of,
        attribute_writes: _,
        writes: _,
        writes_in,
        also,
    } = rel;
    Relation {
        id: *id,
        from: *from,
        to: *to,
        rel_type: rel_type.clone(),
        attributes: attributes.clone(),
        valid_from: valid_from.clone(),
        valid_to: valid_to.clone(),
        recorded_at: *recorded_at,
        ended_at: *ended_at,
        source: source.clone(),
        agent: agent.clone(),
        shortened: shortened.clone(),
        source_date: source_date.clone(),
        version_of: *version_of,
        attribute_writes: Vec::new(),
        writes: None,
        writes_in: *writes_in,
        also: also.clone(),
    }
}

/// The count of writes the event's record `value` left out.
pub(crate) fn omitted(value: &Value) -> usize {
    value.get(OMITTED).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()).unwrap_or(0)
}
