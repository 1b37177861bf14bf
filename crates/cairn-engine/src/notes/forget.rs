//! `note_forget`: removes a note with every stored version, at once, in one transaction with its
//! event. Like `memory_forget`: forgetting again answers `already_forgotten` (200), a note that
//! never existed is `NOT_FOUND`. The note's earlier events stay in the history (it is immutable),
//! but their values read as redacted from then on (`n.forgotten` keeps the forgetting event's
//! sequence number; see `events`), and the forget strips the values from those stored events, so
//! `cairn database compact --purge` can erase them from disk like the versions themselves.

use super::fields::Fields;
use super::record::{CUR, FORGOTTEN, Identity, NoteRecord, VER, Visibility};
use super::{Outcome, index, invalid, refuse};
use crate::error::{Error, Result};
use crate::history::{self, Change, EVENT, Event, TARGET, target_prefix};
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::store::Store;
use crate::write::WriteTxn;
use serde_json::{Value, json};

/// Runs `note_forget` for `caller`.
pub(crate) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let mut f = Fields::parse(body)?;
    let input = f.as_value();
    let key = f.string("key")?.ok_or_else(|| invalid("key", "is required"))?;
    let visibility = Visibility::parse(f.string("visibility")?.as_deref())?;
    let task_id = f.string("taskId")?;
    // The node sends its policy on every notes verb; forgetting does not depend on it.
    f.bool("allowPrivate")?;
    f.finish()?;
    let id = Identity::named(&key, visibility, task_id.as_deref(), &caller.agent)?;
    let caller = caller.clone();
    store.write(move |tx| apply(tx, &caller, &id, input))?.0
}

fn apply(tx: &mut WriteTxn<'_>, caller: &Caller, id: &Identity, input: Value) -> Result<Outcome<Value>> {
    let part = &caller.part;
    let mut what = json!({ "key": id.key, "visibility": id.visibility.as_str() });
    if let Some(t) = id.task_id() {
        what["taskId"] = json!(t);
    }
    let Some(current) = tx.get(CUR, &id.cur_key(part))? else {
        if tx.get(FORGOTTEN, &id.cur_key(part))?.is_some() {
            return Ok(Ok(json!({ "state": "already_forgotten", "note": what })));
        }
        return Ok(Err(refuse(
            "NOT_FOUND",
            format!("no note {:?} with {} visibility", id.key, id.visibility.as_str()),
            vec![],
        )));
    };
    let current = NoteRecord::decode(&current)?;
    part.register(tx)?;
    let versions = tx.prefix(VER, &id.versions_prefix(part))?;
    for (k, _) in &versions {
        tx.delete(VER, k)?;
    }
    index::remove(tx, part, &current)?;
    tx.delete(CUR, &id.cur_key(part))?;
    // The event keeps which note and version went, not its value: forgotten data stays unreachable.
    let target = id.encode();
    let before = json!({ "id": current.id.to_string(), "key": current.key, "version": current.version });
    let change =
        Change { family: "note", target: &target, op: "forget", before: Some(before), after: None, patch: Some(input) };
    strip_values(tx, part, &target)?;
    let seq = history::record(tx, caller, change)?;
    tx.put(FORGOTTEN, &id.cur_key(part), &seq.to_be_bytes())?;
    what["versions"] = json!(versions.len());
    Ok(Ok(json!({ "state": "forgotten", "note": what })))
}

/// Removes `before`, `after` and `patch` from every stored event of the note `target`: who did
/// what and when stays, the values go.
fn strip_values(tx: &mut WriteTxn<'_>, part: &Partition, target: &str) -> Result<()> {
    for (k, _) in tx.prefix(TARGET, &target_prefix(part, "note", target))? {
        let seq = &k[k.len() - 8..];
        let key = part.key(&[seq]);
        let Some(bytes) = tx.get(EVENT, &key)? else { continue };
        let mut event: Event =
            serde_json::from_slice(&bytes).map_err(|e| Error::corrupt(None, format!("a history event: {e}")))?;
        if event.before.is_none() && event.after.is_none() && event.patch.is_none() {
            continue;
        }
        (event.before, event.after, event.patch) = (None, None, None);
        tx.put(EVENT, &key, &serde_json::to_vec(&event).expect("events serialise"))?;
    }
    Ok(())
}
