//! An entity's attributes as of a time (`as_of`: what the store knew then) and as true at an
//! instant (`valid_at`), read from the entity's history: every write that set attributes left an
//! `entity` event with the attributes it sent (`patch`, or the whole record for an import) and,
//! since valid time was kept for them, the call's `date`. Per key, the value is the one of the
//! latest write known by `as_of` (commit order) or, with `valid_at`, of the write with the latest
//! start at or before the instant (its `date`, else when it was written; a later write wins a
//! tie), the rule relations follow (`valid.rs`). A forgotten attribute is gone from those events
//! too (forget-export.md), so it never comes back through a read in the past.

use super::graph::Entity;
use super::recall::When;
use super::{Partition, attr_writes, valid};
use crate::error::Result;
use crate::history::{Event, events_of};
use crate::snapshot::Snapshot;
use serde_json::{Map, Value};

/// `entity`'s attributes at `when`: a plain read (neither `as_of` nor `valid_at`) means true now
/// (`attributes_now`); with no time at all, its current ones.
pub fn attributes_when(snap: &Snapshot, part: &Partition, entity: &Entity, when: &When) -> Result<Map<String, Value>> {
    if when.as_of.is_none() && when.valid_at.is_none() {
        return match when.now {
            Some(now) => attributes_now(snap, part, entity, now),
            None => Ok(entity.attributes.clone()),
        };
    }
    // Per key: (order, value) of the write that wins so far.
    let mut best: Map<String, Value> = Map::new();
    let mut order: std::collections::HashMap<String, (i64, u64)> = std::collections::HashMap::new();
    // Keys some write of the history set, whether or not this read sees that write.
    let mut written: std::collections::HashSet<String> = std::collections::HashSet::new();
    for event in events_of(snap, part, "entity", &entity.name)? {
        if !same_entity(&event, entity.id) {
            continue;
        }
        let sent = sent_attributes(&event);
        written.extend(sent.keys().cloned());
        let start = start_of(&event);
        if when.as_of.is_some_and(|t| known_at(&event) > t) || when.valid_at.is_some_and(|v| start > v) {
            continue;
        }
        let rank = if when.valid_at.is_some() { (start, event.seq) } else { (0, event.seq) };
        for (key, value) in sent {
            if order.get(&key).is_none_or(|&r| r < rank) {
                order.insert(key.clone(), rank);
                best.insert(key, value);
            }
        }
    }
    // A key no write of the history set (a bulk load, an import of an undated write) has the
    // record's value from when the entity was recorded, as a plain read has it.
    let recorded = entity.recorded_at;
    if when.as_of.is_none_or(|t| recorded <= t) && when.valid_at.is_none_or(|v| recorded <= v) {
        for (key, value) in &entity.attributes {
            if !written.contains(key) {
                best.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(best)
}

/// When the store learnt what `event` says: when it was written, or for an import replaying an
/// exported write, when the source had written it (`recorded_at` in its input), so a copy reads
/// `as_of` a moment as its source does (found by an audit: the copy knew no attribute before the
/// import).
fn known_at(event: &Event) -> i64 {
    let source = (event.op == "import").then(|| event.patch.as_ref()?.get("recorded_at")?.as_str()).flatten();
    source.and_then(crate::time::parse_iso_ms).unwrap_or(event.at)
}

/// `entity` as a read at `when` shows it: its attributes then (`attributes_when`) and, read `as_of`
/// a moment, the types known by then (found by an audit: a type added later showed in the past).
pub fn entity_when(snap: &Snapshot, part: &Partition, entity: &Entity, when: &When) -> Result<Entity> {
    let attributes = attributes_when(snap, part, entity, when)?;
    let types = match when.as_of {
        Some(t) => types_as_of(snap, part, entity, t)?,
        None => entity.types.clone(),
    };
    Ok(Entity { types, attributes, ..entity.clone() })
}

/// The types of `entity` in the record its latest write known at `as_of` left (events come in
/// commit order, and a create or merge event holds the whole record); with no such write (an
/// entity written before its events held records), the types it has now.
fn types_as_of(snap: &Snapshot, part: &Partition, entity: &Entity, as_of: i64) -> Result<Vec<String>> {
    let mut known = None;
    for event in events_of(snap, part, "entity", &entity.name)? {
        if event.at > as_of || !same_entity(&event, entity.id) {
            continue;
        }
        if let Some(types) = event.after.as_ref().and_then(|a| a.get("types")).and_then(Value::as_array) {
            known = Some(types.iter().filter_map(Value::as_str).map(str::to_owned).collect());
        }
    }
    Ok(known.unwrap_or_else(|| entity.types.clone()))
}

/// The attributes true at `now`: the stored record (last write wins) corrected by its history
/// where a write dated after `now` set a key. Per key the write with the latest start at or before
/// `now` wins; a key only ever set by writes dated later is not true yet and is left out. A key with
/// no event (written before attribute events kept their date, or by a bulk load) keeps the record's
/// value, so the history only ever corrects the record. Read from the index of attribute writes
/// (`attr_writes.rs`), or from the history while a store written before has not built it.
fn attributes_now(snap: &Snapshot, part: &Partition, entity: &Entity, now: i64) -> Result<Map<String, Value>> {
    // The history only corrects keys the record holds: with none, there is nothing to read.
    if entity.attributes.is_empty() {
        return Ok(Map::new());
    }
    match attr_writes::attributes_now(snap, part, entity, now)? {
        Some(attributes) => Ok(attributes),
        None => history_now(snap, part, entity, now),
    }
}

/// `attributes_now` read from every `entity` event of the entity (the index's tests compare it
/// with this).
pub(crate) fn history_now(snap: &Snapshot, part: &Partition, entity: &Entity, now: i64) -> Result<Map<String, Value>> {
    let mut out = entity.attributes.clone();
    let mut best: std::collections::HashMap<String, ((i64, u64), Value)> = std::collections::HashMap::new();
    let mut later: std::collections::HashSet<String> = std::collections::HashSet::new();
    for event in events_of(snap, part, "entity", &entity.name)? {
        if !same_entity(&event, entity.id) {
            continue;
        }
        let start = start_of(&event);
        for (key, value) in sent_attributes(&event) {
            if start > now {
                later.insert(key);
            } else if best.get(&key).is_none_or(|(rank, _)| *rank < (start, event.seq)) {
                best.insert(key, ((start, event.seq), value));
            }
        }
    }
    for key in later {
        if !best.contains_key(&key) {
            out.remove(&key);
        }
    }
    for (key, (_, value)) in best {
        // Only keys the record still holds: a forgotten attribute stays forgotten.
        if out.contains_key(&key) {
            out.insert(key, value);
        }
    }
    Ok(out)
}

/// Whether `event` wrote the entity `id` (a name forgotten and stored again is another entity).
fn same_entity(event: &Event, id: u64) -> bool {
    written_entity(event) == Some(id)
}

/// The id of the entity `event` wrote; an import's record spells it as a string.
pub(crate) fn written_entity(event: &Event) -> Option<u64> {
    match event.after.as_ref().and_then(|a| a.get("id")) {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    }
}

/// The entity an `entity` event wrote and the attributes it set, when it set any: the values
/// reads at some `as_of` or `valid_at` may answer with, which the attribute index files
/// (`attr_index_build.rs`).
pub(crate) fn set_by(event: &Event) -> Option<(u64, Map<String, Value>)> {
    // The family and the id first: the attributes are a copy, which other events need not pay.
    if event.family != "entity" {
        return None;
    }
    let id = written_entity(event)?;
    let attributes = sent_attributes(event);
    (!attributes.is_empty()).then_some((id, attributes))
}

/// What an entity event wrote, as the index of attribute writes files it (`attr_writes.rs`).
#[derive(Debug, Clone)]
pub(crate) struct Written {
    pub(crate) entity: u64,
    /// When it became true (`start_of`).
    pub(crate) start: i64,
    pub(crate) attributes: Map<String, Value>,
}

impl Written {
    /// What `event` wrote, when it set an entity's attributes (`set_by`).
    pub(crate) fn by(event: &Event) -> Option<Written> {
        let (entity, attributes) = set_by(event)?;
        Some(Written { entity, start: start_of(event), attributes })
    }
}

/// When what `event` says became true: the call's `date`, else when it was written.
fn start_of(event: &Event) -> i64 {
    event
        .patch
        .as_ref()
        .and_then(|p| p.get("date"))
        .and_then(Value::as_str)
        .and_then(valid::instant)
        .unwrap_or_else(|| known_at(event))
}

/// The attributes `event` set: those the call sent (an import replaying an exported write sends
/// them too), or the whole record for a write that sent none of its own (an older import).
fn sent_attributes(event: &Event) -> Map<String, Value> {
    let from = |v: Option<&Value>| v.and_then(|v| v.get("attributes")).and_then(Value::as_object).cloned();
    match event.op.as_str() {
        "create" | "merge" => from(event.patch.as_ref()).unwrap_or_default(),
        _ => from(event.patch.as_ref()).or_else(|| from(event.after.as_ref())).unwrap_or_default(),
    }
}

/// The `source` label a write of an entity's attributes came under (`remember`'s, or an imported
/// write's), which a `source` forget takes it by.
pub(crate) fn source_of(event: &Event) -> Option<&str> {
    event.patch.as_ref()?.get("source")?.as_str().filter(|_| event.family == "entity")
}

/// One write of an entity's attributes as export lists it.
pub struct AttributeWrite {
    /// What it set.
    pub attributes: Map<String, Value>,
    /// When that became true.
    pub from: String,
    /// When the store learnt it (ms).
    pub known: i64,
    /// The `source` label it came under.
    pub source: Option<String>,
}

/// The writes that set `entity`'s attributes, in commit order, each with what it set, when that
/// became true (the call's `date` as sent, else when it was written), when the store learnt it
/// (`known_at`) and the label it came under, for export: an import replays them, so reads at any valid time and as of any
/// moment answer as at the source.
pub fn attribute_writes(snap: &Snapshot, part: &Partition, entity: &Entity) -> Result<Vec<AttributeWrite>> {
    let mut writes = Vec::new();
    for event in events_of(snap, part, "entity", &entity.name)? {
        if !same_entity(&event, entity.id) {
            continue;
        }
        let attributes = sent_attributes(&event);
        if attributes.is_empty() {
            continue;
        }
        let date = event
            .patch
            .as_ref()
            .and_then(|p| p.get("date"))
            .and_then(Value::as_str)
            .filter(|d| valid::instant(d).is_some());
        let known = known_at(&event);
        writes.push(AttributeWrite {
            from: date.map_or_else(|| crate::time::iso_ms(known), str::to_owned),
            source: source_of(&event).map(str::to_owned),
            attributes,
            known,
        });
    }
    Ok(writes)
}
