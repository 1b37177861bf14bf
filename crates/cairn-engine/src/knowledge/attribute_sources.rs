//! Who stated an entity's attributes: each write that set them left an `entity` event naming the
//! call's `source` label, if any (`attribute_time::source_of`). A value said again under another
//! label (or none) is another statement of it: `remember` records it (op `restate`, the record
//! unchanged) so that `forget {source}` of one label keeps what another still states, and finds
//! the second label at all (found by an audit: `nickname: Joe` sent under `hr`, then under
//! `press`, wrote nothing the second time; forgetting `hr` took it though `press` says it, and
//! forgetting `press` was a 404). Export lists the restatement among the entity's
//! `attribute_writes` with its label, so a copy forgets the same.

use super::attribute_time::{set_by, source_of};
use super::graph::Entity;
use super::part::Partition;
use super::records::decode;
use crate::error::{Error, Result};
use crate::history::{EVENT, Event, TARGET, seq_of, target_prefix};
use crate::write::WriteTxn;
use serde_json::{Map, Value};

/// The attribute writes of `entity` (its events that set attributes, this transaction's
/// included), oldest first: each with its label and what it set. Events filed under its name by
/// an earlier entity of that name (forgotten since) are not its.
pub(crate) fn writes(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    entity: &Entity,
) -> Result<Vec<(Event, Map<String, Value>)>> {
    let mut out = Vec::new();
    for index in tx.prefix_keys(TARGET, &target_prefix(part, "entity", &entity.name))? {
        let seq = seq_of(&index)?;
        let bytes = tx
            .get(EVENT, &part.key(&[&seq.to_be_bytes()]))?
            .ok_or_else(|| Error::corrupt(None, format!("history event {seq} is indexed but missing")))?;
        let event: Event = decode(&bytes, "history event")?;
        if let Some((id, set)) = set_by(&event)
            && id == entity.id
        {
            out.push((event, set));
        }
    }
    Ok(out)
}

/// Whether `sent`, attributes `entity` holds already, states one of them under a label (`label`,
/// `None` for none) no write that set it had: a key some write set, none of them under this label
/// to this value. A key no write of the history set (a bulk load, an older import) has no known
/// provenance to add to: a write recorded for it now would hide its value from reads as of before
/// (`attribute_time::attributes_when`), so it is left as it is.
pub(crate) fn new_statement(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    entity: &Entity,
    sent: &Map<String, Value>,
    label: Option<&str>,
) -> Result<bool> {
    if sent.is_empty() {
        return Ok(false);
    }
    let writes = writes(tx, part, entity)?;
    Ok(sent.iter().any(|(key, value)| {
        let mut setting = writes.iter().filter(|(_, written)| written.contains_key(key)).peekable();
        setting.peek().is_some()
            && !setting.any(|(event, written)| source_of(event) == label && written.get(key) == Some(value))
    }))
}
