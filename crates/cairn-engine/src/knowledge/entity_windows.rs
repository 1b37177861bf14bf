//! An entity's export records, cut to a byte bound. An entity carries its dated attribute writes
//! (`attribute_writes`, `attribute_time.rs`), and nothing caps how often an entity is written:
//! found by a review, one written 2,000 times made a 347 KB record on a page asked for at 64 KiB,
//! and a few tens of thousands of writes one larger than the body `memory_import` takes. So, as a
//! note's versions are (`notes::exchange_windows`), an entity whose record does not fit the room
//! its page has left is exported as several records, each a run of its writes in order, as many
//! as keep the record within that room (one at least). Each carries the entity's own fields;
//! every one but the last says `continued: true`, every one but the first `follows: n`, the
//! number of writes the records before it held, so an import replays each write once and can
//! tell a record whose predecessor has not come (`import_entity_runs.rs`). An entity that fits
//! is one record without either field, as before.

use super::attribute_time::{AttributeWrite, attribute_writes};
use super::export::json_len;
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

/// The export record of stored entity `value` over its writes after the first `from` (0: from
/// the first), within `room` bytes of JSON unless it holds one write alone; `None` when `from`
/// is past its writes (they were forgotten since the page before). A whole record that fits an
/// empty page of `page` bytes is returned whole, though it may not fit `room`: it then starts the
/// next page, as before, and only an entity no page could hold is split.
pub(super) fn window(
    snap: &Snapshot,
    part: &Partition,
    value: &[u8],
    (from, room, page): (u64, usize, usize),
    origin: &Value,
) -> Result<Option<Window>> {
    let e: Entity = decode(value, "entity")?;
    let mut record = json!({
        "kind": "entity",
        "id": e.id.to_string(),
        "name": e.name,
        "types": e.types,
        "attributes": e.attributes,
        "recorded_at": iso_ms(e.recorded_at),
        "origin": origin,
    });
    let writes = travelling(snap, part, &e)?;
    let total = writes.len() as u64;
    if from > 0 && from >= total {
        return Ok(None);
    }
    let mut wire: Vec<Value> =
        writes.into_iter().skip(usize::try_from(from).unwrap_or(usize::MAX)).map(on_the_wire).collect();
    if wire.is_empty() {
        return Ok(Some(Window { record, last: 0, continued: false }));
    }
    if from == 0 {
        record["attribute_writes"] = Value::Array(wire);
        // As a page's one record: between its brackets.
        if json_len(&record) + 2 <= page {
            return Ok(Some(Window { record, last: total, continued: false }));
        }
        let Value::Array(all) = record["attribute_writes"].take() else { unreachable!("set just above") };
        wire = all;
    }
    // The markers a record may take, counted whether or not it does, so the bound holds.
    record["continued"] = json!(true);
    record["follows"] = json!(from);
    record["attribute_writes"] = json!([]);
    let mut bytes = json_len(&record);
    let mut taken = 0;
    for w in &wire {
        // Each with the comma before it (one too many for the first: room to spare).
        let size = json_len(w) + 1;
        if taken > 0 && bytes + size > room {
            break;
        }
        bytes += size;
        taken += 1;
    }
    let continued = taken < wire.len();
    wire.truncate(taken);
    let last = from + taken as u64;
    record["attribute_writes"] = Value::Array(wire);
    let fields = record.as_object_mut().expect("an object");
    if !continued {
        fields.remove("continued");
    }
    if from == 0 {
        fields.remove("follows");
    }
    Ok(Some(Window { record, last, continued }))
}
