//! `note_forget`: removes a note with every stored version, at once, in one transaction. Like
//! `memory_forget`: forgetting again answers `already_forgotten` (200), a note that never existed
//! is `NOT_FOUND`. Nothing of the note stays readable: its events go from the history and both
//! indexes (their target is the note's identity, which spells its key, and their values its
//! content), and so do the idempotency records whose receipts name it and the import map entries
//! of its versions. What stays is one `forget` event on target `note` with the counts, never the
//! key, and a marker under a hash of the identity (`n.forgotten`) that answers `already_forgotten`.

use super::fields::{Fields, nfc};
use super::idempotency::forget_receipts;
use super::notes_meant::{message_with, notes_meant};
use super::record::{CUR, FORGOTTEN, Identity, NoteRecord, VER, Visibility};
use super::{Fail, Outcome, index, invalid, refuse};
use crate::error::{Error, Result};
use crate::history::{self, Change, EVENT, Event, TARGET, target_prefix};
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::store::Store;
use crate::write::WriteTxn;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Runs `note_forget` for `caller`.
pub(crate) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let mut f = Fields::parse(body)?;
    let key = f.string("key")?.ok_or_else(|| invalid("key", "is required"))?;
    let task_id = f.string("taskId")?;
    let visibility = Visibility::named(f.string("visibility")?.as_deref(), task_id.as_deref())?;
    // The node sends its policy on every notes verb; forgetting does not depend on it.
    f.bool("allowPrivate")?;
    f.finish()?;
    let named = Identity::named(&nfc(key.clone()), visibility, task_id.clone().map(nfc).as_deref(), &caller.agent)?;
    // A note written before keys and task ids were recomposed may be stored as sent: forgetting
    // must still reach it by that spelling.
    let as_sent = Identity::named(&key, visibility, task_id.as_deref(), &caller.agent)?;
    let asked = named.clone();
    let writer = caller.clone();
    let outcome = store
        .write(move |tx| {
            let caller = writer;
            let id = if as_sent != named
                && tx.get(CUR, &named.cur_key(&caller.part))?.is_none()
                && tx.get(CUR, &as_sent.cur_key(&caller.part))?.is_some()
            {
                as_sent
            } else {
                named
            };
            apply(tx, &caller, &id)
        })?
        .0;
    match outcome {
        // The notes it may have meant, read after the write found nothing: no lock needed.
        Err(Fail::Refused(mut refusal)) if refusal.code == "NOT_FOUND" => {
            let offered = notes_meant(&store.snapshot()?, &caller.part, &caller.agent, &asked)?;
            refusal.message = message_with(refusal.message, &offered);
            refusal.details = offered;
            Err(Fail::Refused(refusal))
        }
        other => other,
    }
}

/// `part | sha256(identity)`: the forgotten-note marker. A hash, so the marker does not keep the
/// key it stands for.
/// Records that a forget happened (the form and the counts, as knowledge forgets do) and keeps its
/// event's seq under `marker` (a hash), so a later forget of the same thing is `already_forgotten`.
pub(super) fn record_forget(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    target: &'static str,
    counts: &Value,
    marker: &[u8],
) -> Result<()> {
    let change = Change {
        family: "forget",
        target,
        op: "forget",
        before: None,
        after: Some(json!({ "forgotten": counts })),
        patch: None,
    };
    let seq = history::record(tx, caller, change)?;
    tx.put(FORGOTTEN, marker, &seq.to_be_bytes())
}

pub(crate) fn marker_key(part: &Partition, id: &Identity) -> Vec<u8> {
    part.key(&[&Sha256::digest(id.encode().as_bytes())])
}

fn apply(tx: &mut WriteTxn<'_>, caller: &Caller, id: &Identity) -> Result<Outcome<Value>> {
    let part = &caller.part;
    let mut what = json!({ "key": id.key, "visibility": id.visibility.as_str() });
    if let Some(t) = id.task_id() {
        what["taskId"] = json!(t);
    }
    let Some(current) = tx.get(CUR, &id.cur_key(part))? else {
        // Markers written before they were hashed are keyed by the identity itself.
        if tx.get(FORGOTTEN, &marker_key(part, id))?.is_some() || tx.get(FORGOTTEN, &id.cur_key(part))?.is_some() {
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
    tx.delete(FORGOTTEN, &id.cur_key(part))?;
    let events = remove_events(tx, part, "note", &id.encode())?;
    remove_receipts(tx, part, id)?;
    let imports = part.key(&[&[crate::notes::exchange::NOTE], id.encode().as_bytes(), b"\0"]);
    for (k, _) in tx.prefix(crate::knowledge::IMPORT_MAP, &imports)? {
        tx.delete(crate::knowledge::IMPORT_MAP, &k)?;
    }
    let counts = json!({ "notes": 1, "versions": versions.len(), "events": events });
    record_forget(tx, caller, "note", &counts, &marker_key(part, id))?;
    what["versions"] = json!(versions.len());
    // Counted as every form of memory_forget counts; a note takes nothing else with it.
    let forgotten = crate::knowledge::Counts { notes: 1, ..crate::knowledge::Counts::default() };
    Ok(Ok(json!({ "state": "forgotten", "forgotten": forgotten, "kept": [], "note": what })))
}

/// Removes every event of `family` on `target` (a note's encoded identity, a handoff's task id)
/// from the history and both its indexes; returns how many went.
pub(super) fn remove_events(tx: &mut WriteTxn<'_>, part: &Partition, family: &str, target: &str) -> Result<u64> {
    let indexed = tx.prefix(TARGET, &target_prefix(part, family, target))?;
    for (k, _) in &indexed {
        let seq = &k[k.len() - 8..];
        let Some(bytes) = tx.get(EVENT, &part.key(&[seq]))? else { continue };
        let event: Event =
            serde_json::from_slice(&bytes).map_err(|e| Error::corrupt(None, format!("a history event: {e}")))?;
        history::remove(tx, part, &event)?;
    }
    Ok(indexed.len() as u64)
}

/// Removes the idempotency records whose receipt is a write of note `id`.
fn remove_receipts(tx: &mut WriteTxn<'_>, part: &Partition, id: &Identity) -> Result<()> {
    forget_receipts(tx, part, |writer, receipt| {
        receipt["key"] == json!(id.key)
            && receipt["visibility"] == json!(id.visibility.as_str())
            && match id.visibility {
                Visibility::User => true,
                Visibility::Task => receipt["taskId"] == json!(id.owner),
                Visibility::Agent => writer == id.owner.as_bytes(),
            }
    })
}
