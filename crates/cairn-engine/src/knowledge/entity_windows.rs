//! An entity's export records. An entity carries its dated attribute writes (`attribute_writes`,
//! `attribute_time.rs`), and nothing caps how often an entity is written: found by a review, one
//! written 2,000 times made a 347 KB record on a page asked for at 64 KiB, and a few tens of
//! thousands of writes one larger than the body `memory_import` takes. So an entity no page could
//! hold is several records, each a run of its writes (`write_runs.rs`, as a fact's are); one that
//! fits is one record, as before.

use super::attribute_time::{AttributeWrite, attribute_writes};
use super::graph::Entity;
use super::part::Partition;
use super::records::decode;
use crate::error::Result;
use crate::notes::exchange_windows::Window;
use crate::snapshot::Snapshot;
use crate::time::iso_ms;
use serde_json::{Value, json};

/// One write as a record carries it.
fn on_the_wire(w: AttributeWrite) -> Value {
    let mut write = json!({ "attributes": w.attributes, "from": w.from, "recorded_at": iso_ms(w.known) });
    if let Some(label) = w.source {
        write["source"] = json!(label);
    }
    write
}

/// The writes `e`'s record carries: none when its one write is what the record says already
/// (undated, unlabelled, made when the entity was), else every one, in commit order.
fn travelling(snap: &Snapshot, part: &Partition, e: &Entity) -> Result<Vec<AttributeWrite>> {
    if e.attributes.is_empty() {
        return Ok(Vec::new());
    }
    // The record holds each key's last write; when writes were dated, which value is true when
    // depends on them, so they travel too (found by an audit: a copy read the later-dated value
    // as true now), with their `source` label, so forgetting that source in the copy takes them.
    let writes = attribute_writes(snap, part, e)?;
    let plain = writes.len() == 1 && writes[0].from == iso_ms(e.recorded_at) && writes[0].source.is_none();
    Ok(if plain { Vec::new() } else { writes })
}

/// The export record of stored entity `value` over its writes after the first `from`, cut as
/// `write_runs::cut` cuts a record of writes.
pub(super) fn window(
    snap: &Snapshot,
    part: &Partition,
    value: &[u8],
    at: (u64, usize, usize),
    origin: &Value,
) -> Result<Option<Window>> {
    let e: Entity = decode(value, "entity")?;
    let record = json!({
        "kind": "entity",
        "id": e.id.to_string(),
        "name": e.name,
        "types": e.types,
        "attributes": e.attributes,
        "recorded_at": iso_ms(e.recorded_at),
        "origin": origin,
    });
    let wire = travelling(snap, part, &e)?.into_iter().map(on_the_wire).collect();
    Ok(super::write_runs::cut(record, wire, at))
}
