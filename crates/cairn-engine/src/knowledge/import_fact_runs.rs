//! A fact record whose fact is stored here already, or which continues one exported as several
//! records, each a run of its attribute writes (`write_runs.rs`, `import_runs.rs`): a whole
//! record is `unchanged`; a later record of a split fact appends its writes past those the copy
//! holds to the fact's list, or is skipped naming the gap when its predecessor has not come. An
//! earlier version pointing at its fact's writes (`attribute_writes_from_fact`) counts them once
//! they are all here, which its fact's records, exported before it, see to.

use super::fact_attribute_time::{AttributeWrite, WritesIn};
use super::fact_writes;
use super::graph::{entity_in, relation_in};
use super::import::{Field, Imported, Src};
use super::import_attributes;
use super::import_runs::{self, Of, Run};
use super::part::Partition;
use super::records::encode;
use super::trees::{REL, rel_key};
use super::version_writes::Lens;
use crate::error::{Error, Result};
use crate::write::WriteTxn;
use serde_json::{Map, Value};

/// Imports fact record `r` of `source` (its `run`), whose fact is `here` (the local fact its id
/// maps to, the same one), or which continues a split fact (`run.follows`).
pub(super) fn again(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    r: &Map<String, Value>,
    (source, run, here): (Src, Run, Option<u64>),
    now: i64,
    (out, lens): (&mut Imported, &mut Lens),
) -> Result<Field<()>> {
    if let Some(follows) = run.follows
        && let Some(reason) = import_runs::gap(tx, part, (Of::Fact, source, follows), here.is_some())?
    {
        return Ok(Err(reason));
    }
    let writes = match import_attributes::fact_field(r, now) {
        Ok(w) => w,
        Err(e) => return Ok(Err(e)),
    };
    let writes = import_runs::replayed(tx, part, (Some(source), run), false, writes)?;
    let Some(id) = here.filter(|_| !writes.is_empty()) else {
        out.unchanged.facts += 1;
        return Ok(Ok(()));
    };
    let target = append(tx, part, id, writes)?;
    // The versions of this call that count its writes read them again.
    lens.remove(&id);
    out.imported.facts += 1;
    // Adding writes changes the fact: its history says so, as for the record that stored it.
    out.written.push(("fact", target, id));
    Ok(Ok(()))
}

/// Appends `added` to the writes of stored fact `id`: its list is written again whole, so what
/// its record keeps of it (`fact_writes::Kept`) is worked out over every write, and a version
/// whose writes turn out to be its fact's first points at them (`WritesIn::point_at_stored`).
/// Returns the fact's history target (`from \0 type \0 to`).
fn append(tx: &mut WriteTxn<'_>, part: &Partition, id: u64, added: Vec<AttributeWrite>) -> Result<String> {
    let mut rel = relation_in(tx, part, id)?
        .ok_or_else(|| Error::corrupt(None, format!("relation {id} is mapped but missing")))?;
    let mut all = if let Some(w) = rel.writes_in.take() {
        fact_writes::first_in(tx, part, w.holder, w.n)?
    } else if rel.attribute_writes.is_empty() {
        fact_writes::first_in(tx, part, id, u32::MAX)?
    } else {
        std::mem::take(&mut rel.attribute_writes)
    };
    all.extend(added);
    rel.attribute_writes = all;
    rel.writes = None;
    WritesIn::point_at_stored(tx, part, &mut rel)?;
    if rel.writes_in.is_some() {
        // Its writes are its fact's first: it keeps no list of its own.
        fact_writes::remove(tx, part, id)?;
    }
    fact_writes::move_out(tx, part, &mut rel)?;
    tx.put(REL, &rel_key(part, id), &encode(&rel))?;
    let name = |tx: &mut WriteTxn<'_>, end: u64| -> Result<String> {
        Ok(entity_in(tx, part, end)?.ok_or_else(|| Error::corrupt(None, format!("entity {end} is missing")))?.name)
    };
    Ok(format!("{}\0{}\0{}", name(tx, rel.from)?, rel.rel_type, name(tx, rel.to)?))
}
