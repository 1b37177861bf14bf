//! The immutable event history (DESIGN.md §2 `memory_history`, audit): every write of every family
//! (notes, entities, facts, documents, forgets, handoffs) appends one event in the same transaction
//! as the write it describes, so history and data never disagree, even across a crash.
//!
//! Keys: `h.event` holds `part | seq` → event; `h.target` holds `part | family \0 target \0 | seq`
//! → () so one note's, entity's or fact's events page in order; `h.agent` holds
//! `part | agent \0 | seq` → () for the audit of one caller's own writes. `seq` comes from the
//! partition's id counter (`knowledge/ids.rs`), so a partition's events sort in commit order and
//! say nothing of other partitions' writes. `h.name` (`names.rs`) holds them by the entity names
//! they spell, for forgets.

mod names;

pub(crate) use names::{NAME, mark_if_new, name_prefix, names_of_event, naming, naming_fewer};

use crate::error::{Error, Result};
use crate::key_text::fit;
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::knowledge::attribute_time::Written;
use crate::knowledge::{attr_writes, source_index, source_of};
use crate::snapshot::Snapshot;
use crate::write::WriteTxn;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) const EVENT: &str = "h.event";
pub(crate) const TARGET: &str = "h.target";
pub(crate) const AGENT: &str = "h.agent";
/// Every tree of the history; each keys its entries by the partition first.
pub(crate) const TREES: [&str; 4] = [EVENT, TARGET, AGENT, NAME];

/// One recorded write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub seq: u64,
    /// `note`, `entity`, `fact`, `document`, `forget`, `handoff`.
    pub family: String,
    /// What was written, as that family names it (a note key, an entity name, `from\0type\0to`).
    pub target: String,
    /// `create`, `replace`, `merge`, `assert`, `end`, `restore`, `forget`, `import`, …
    pub op: String,
    pub agent: String,
    /// Milliseconds since the Unix epoch.
    pub at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    /// The caller's input, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Value>,
}

/// What a write appends; `record` stamps agent, time and sequence.
#[derive(Debug, Clone, Default)]
pub struct Change<'a> {
    pub family: &'a str,
    pub target: &'a str,
    pub op: &'a str,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub patch: Option<Value>,
}

/// `part | family \0 target \0`: the prefix of one target's events (a target too long for the
/// key is kept as its head and a digest, `key_text::fit`).
pub(crate) fn target_prefix(part: &Partition, family: &str, target: &str) -> Vec<u8> {
    let mut out = Vec::new();
    push_target_prefix(&mut out, part, family, target);
    out
}

/// Appends `target_prefix` to `out` (a bulk writer builds a key per event in one buffer).
pub(crate) fn push_target_prefix(out: &mut Vec<u8>, part: &Partition, family: &str, target: &str) {
    let target = fit(target, part.prefix().len() + family.len() + 2 + 8);
    out.extend_from_slice(part.prefix());
    out.extend_from_slice(family.as_bytes());
    out.push(0);
    out.extend_from_slice(&target);
    out.push(0);
}

/// `part | agent \0`: the prefix of one agent's events.
pub(crate) fn agent_prefix(part: &Partition, agent: &str) -> Vec<u8> {
    part.key(&[&fit(agent, part.prefix().len() + 1 + 8), b"\0"])
}

/// A change whose `after` and `patch` are JSON already encoded (a bulk writer encodes the patch
/// off the writer thread and reuses the record it stored as `after`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EncodedChange<'a> {
    pub family: &'a str,
    pub target: &'a str,
    pub op: &'a str,
    /// The record before the change, when it changed one.
    pub before: Option<&'a [u8]>,
    pub after: &'a [u8],
    pub patch: &'a [u8],
    /// The `source` an entity event's `patch` holds (`knowledge::source_of`), for the source
    /// index: the caller knows it without parsing the patch back.
    pub source: Option<&'a str>,
}

/// `record` for an encoded change, with its sequence number `seq` given (a fresh id of the
/// partition's counter): the event's bytes decode to the same `Event` as `record` would store.
pub(crate) fn record_encoded(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    seq: u64,
    change: EncodedChange<'_>,
) -> Result<()> {
    let text = |s: &str| serde_json::to_string(s).expect("strings serialise");
    let before = change.before.map_or(0, <[u8]>::len);
    let mut event = Vec::with_capacity(108 + change.target.len() + before + change.after.len() + change.patch.len());
    event.extend_from_slice(
        format!(
            "{{\"seq\":{seq},\"family\":{},\"target\":{},\"op\":{},\"agent\":{},\"at\":{},",
            text(change.family),
            text(change.target),
            text(change.op),
            text(&caller.agent),
            caller.now
        )
        .as_bytes(),
    );
    if let Some(before) = change.before {
        event.extend_from_slice(b"\"before\":");
        event.extend_from_slice(before);
        event.push(b',');
    }
    event.extend_from_slice(b"\"after\":");
    event.extend_from_slice(change.after);
    event.extend_from_slice(b",\"patch\":");
    event.extend_from_slice(change.patch);
    event.push(b'}');
    let part = &caller.part;
    let seq_be = seq.to_be_bytes();
    tx.put(EVENT, &part.key(&[&seq_be]), &event)?;
    tx.put(TARGET, &[target_prefix(part, change.family, change.target), seq_be.to_vec()].concat(), &[])?;
    tx.put(AGENT, &[agent_prefix(part, &caller.agent), seq_be.to_vec()].concat(), &[])?;
    source_index::refile_event(tx, part, seq, (None, change.source))?;
    if change.family == "entity" {
        attr_writes::file_encoded(tx, part, change.patch, &event)?;
    }
    // Encoded patches are `remember`'s: their ends are the target's.
    names::index(tx, part, &names::names_of(change.family, change.target, None), seq)
}

/// An event encoded ahead of its transaction (off the writer thread), complete but for the
/// sequence number the transaction gives it; `record_prepared` stores what `record` would.
#[derive(Debug, Clone)]
pub(crate) struct PreparedEvent {
    family: String,
    target: String,
    /// The folded entity names it spells (`h.name`).
    names: std::collections::BTreeSet<String>,
    /// The label its write came under (`knowledge::source_of`), which the source index files.
    source: Option<String>,
    /// The attributes it set, which the index of attribute writes files (`attr_writes.rs`).
    written: Option<Written>,
    /// The event as `record` encodes it, with sequence number 0.
    json: Vec<u8>,
}

/// How an event's encoding starts when its sequence number is 0 (`seq` is its first field).
const SEQ_ZERO: &[u8] = b"{\"seq\":0";

/// Encodes the event `record` would append for `change` by `caller`, but for its sequence number.
pub(crate) fn prepare(caller: &Caller, change: Change<'_>) -> PreparedEvent {
    let event = Event {
        seq: 0,
        family: change.family.to_owned(),
        target: change.target.to_owned(),
        op: change.op.to_owned(),
        agent: caller.agent.clone(),
        at: caller.now,
        before: change.before,
        after: change.after,
        patch: change.patch,
    };
    let json = serde_json::to_vec(&event).expect("events serialise");
    let names = names_of_event(&event);
    let source = source_of(&event).map(str::to_owned);
    let written = Written::by(&event);
    PreparedEvent { family: event.family, target: event.target, names, source, written, json }
}

/// The bytes of a prepared event given sequence number `seq`.
fn stamp(json: &[u8], seq: u64) -> Vec<u8> {
    debug_assert!(json.starts_with(SEQ_ZERO), "a prepared event starts with its sequence number");
    let rest = &json[SEQ_ZERO.len()..];
    let mut out = Vec::with_capacity(json.len() + 20);
    out.extend_from_slice(b"{\"seq\":");
    out.extend_from_slice(seq.to_string().as_bytes());
    out.extend_from_slice(rest);
    out
}

/// `record` for an event `prepare` encoded (by the same caller); returns its sequence number.
pub(crate) fn record_prepared(tx: &mut WriteTxn<'_>, caller: &Caller, event: &PreparedEvent) -> Result<u64> {
    let part = &caller.part;
    let seq = crate::knowledge::next_id(tx, part)?;
    let seq_be = seq.to_be_bytes();
    tx.put(EVENT, &part.key(&[&seq_be]), &stamp(&event.json, seq))?;
    tx.put(TARGET, &[target_prefix(part, &event.family, &event.target), seq_be.to_vec()].concat(), &[])?;
    tx.put(AGENT, &[agent_prefix(part, &caller.agent), seq_be.to_vec()].concat(), &[])?;
    names::index(tx, part, &event.names, seq)?;
    source_index::refile_event(tx, part, seq, (None, event.source.as_deref()))?;
    if let Some(written) = &event.written {
        attr_writes::file(tx, part, seq, written)?;
    }
    Ok(seq)
}

/// The sequence number an index key (`h.target`, `h.agent`) ends with.
pub(crate) fn seq_of(key: &[u8]) -> Result<u64> {
    let tail =
        key.len().checked_sub(8).map(|at| &key[at..]).ok_or_else(|| Error::corrupt(None, "a history key is short"))?;
    Ok(u64::from_be_bytes(tail.try_into().expect("eight bytes")))
}

/// The event `seq` of `part` that an index names: missing or undecodable is corruption.
pub(crate) fn indexed_event(snap: &Snapshot, part: &Partition, seq: u64) -> Result<Event> {
    let bytes = snap
        .get(EVENT, &part.key(&[&seq.to_be_bytes()]))?
        .ok_or_else(|| Error::corrupt(None, format!("history event {seq} is indexed but missing")))?;
    serde_json::from_slice(&bytes).map_err(|e| Error::corrupt(None, format!("history event {seq}: {e}")))
}

/// Every event of one target (`family`, `target`) of `part`, in commit order.
pub(crate) fn events_of(snap: &Snapshot, part: &Partition, family: &str, target: &str) -> Result<Vec<Event>> {
    let mut events = Vec::new();
    for kv in snap.prefix(TARGET, &target_prefix(part, family, target))? {
        events.push(indexed_event(snap, part, seq_of(&kv?.0)?)?);
    }
    Ok(events)
}

/// Removes `event` of `part` from the history and its indexes (a forget takes the events of
/// what it forgets with it: their targets and values spell the forgotten data).
pub(crate) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, event: &Event) -> Result<()> {
    let seq = event.seq.to_be_bytes();
    tx.delete(EVENT, &part.key(&[&seq]))?;
    tx.delete(TARGET, &[target_prefix(part, &event.family, &event.target), seq.to_vec()].concat())?;
    tx.delete(AGENT, &[agent_prefix(part, &event.agent), seq.to_vec()].concat())?;
    source_index::refile_event(tx, part, event.seq, (source_of(event), None))?;
    attr_writes::unfile_event(tx, part, event)?;
    names::unindex(tx, part, &names_of_event(event), event.seq)
}

/// Stores `edited`, event `was` with content taken out (a forget redacting what it took), and
/// drops the `h.name` entries of the names it no longer spells.
pub(crate) fn rewrite(tx: &mut WriteTxn<'_>, part: &Partition, was: &Event, edited: &Event) -> Result<()> {
    tx.put(EVENT, &part.key(&[&edited.seq.to_be_bytes()]), &serde_json::to_vec(edited).expect("events serialise"))?;
    source_index::refile_event(tx, part, edited.seq, (source_of(was), source_of(edited)))?;
    attr_writes::refile_event(tx, part, was, edited)?;
    let kept = names_of_event(edited);
    let gone = names_of_event(was).difference(&kept).cloned().collect();
    names::unindex(tx, part, &gone, edited.seq)
}

/// Appends one event for `change` in the caller's transaction; returns its sequence number.
pub fn record(tx: &mut WriteTxn<'_>, caller: &Caller, change: Change<'_>) -> Result<u64> {
    record_prepared(tx, caller, &prepare(caller, change))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_prepared_event_stamped_is_the_event_record_encodes() {
        let caller = Caller {
            part: Partition::new("local", "u1", "default").unwrap(),
            agent: "claude \"q\"".into(),
            now: 1_700_000_000_123,
        };
        for seq in [0, 7, 1 << 40, u64::MAX] {
            for (before, patch) in [(None, None), (Some(json!({"a": 1})), Some(json!({"k": "v", "n": [1, 2]})))] {
                let change = Change {
                    family: "note",
                    target: "key\0user\0",
                    op: "replace",
                    before,
                    after: Some(json!({"value": {"text": "é"}})),
                    patch,
                };
                let want = serde_json::to_vec(&Event {
                    seq,
                    family: change.family.to_owned(),
                    target: change.target.to_owned(),
                    op: change.op.to_owned(),
                    agent: caller.agent.clone(),
                    at: caller.now,
                    before: change.before.clone(),
                    after: change.after.clone(),
                    patch: change.patch.clone(),
                })
                .unwrap();
                assert_eq!(stamp(&prepare(&caller, change).json, seq), want, "seq {seq}");
            }
        }
    }
}
