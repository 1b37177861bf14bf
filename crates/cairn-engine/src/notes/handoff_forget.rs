//! `forget {handoff: {taskId}}`: removes every capsule of a task, expired ones too, at once, in one
//! transaction, so a secret pasted into a summary can go without wiping the scope (found by an
//! audit: only `forget {all}` reached a handoff). Read rules as `handoff_resume`'s: any agent of
//! the user that names the task. With the capsules go their addressee entries, every `handoff`
//! event of the task (they hold the capsules' content), the import map entries that point at them
//! and the idempotency records of their creation (a retry then creates anew); one `forget` event
//! (target `handoff`, counts, never the task id) and a marker under a hash of the task id stay, so
//! forgetting again answers `already_forgotten`; a task that never held a capsule is `NOT_FOUND`. `compact --purge` then erases the freed bytes, as for any forget.

use super::fields::{Fields, short_name};
use super::forget::{record_forget, remove_events};
use super::handoff::{Capsule, HAND};
use super::handoff_exchange::HANDOFF;
use super::idempotency::forget_receipts;
use super::record::FORGOTTEN;
use super::{Outcome, invalid, refuse};
use super::{handoff_index, handoff_tasks};
use crate::error::Result;
use crate::knowledge::api::Caller;
use crate::knowledge::{IMPORT_MAP, Partition};
use crate::store::Store;
use crate::write::WriteTxn;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Runs `handoff_forget` for `caller`.
pub(crate) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let mut f = Fields::parse(body)?;
    let task_id = f.name("taskId")?.ok_or_else(|| invalid("taskId", "is required"))?;
    short_name("taskId", &task_id)?;
    // The node sends its policy on every notes verb; forgetting does not depend on it.
    f.bool("allowPrivate")?;
    f.finish()?;
    let caller = caller.clone();
    store.write(move |tx| apply(tx, &caller, &task_id))?.0
}

/// `part | sha256(\0 handoff \0 task id)`: the forgotten-handoffs marker in `n.forgotten`. The
/// leading NUL keeps it apart from every note marker (a note key is never empty).
fn marker_key(part: &Partition, task_id: &str) -> Vec<u8> {
    part.key(&[&Sha256::digest(format!("\0handoff\0{task_id}").as_bytes())])
}

fn apply(tx: &mut WriteTxn<'_>, caller: &Caller, task_id: &str) -> Result<Outcome<Value>> {
    let part = &caller.part;
    let capsules = tx.prefix(HAND, &part.key(&[task_id.as_bytes(), b"\0"]))?;
    if capsules.is_empty() {
        if tx.get(FORGOTTEN, &marker_key(part, task_id))?.is_some() {
            return Ok(Ok(json!({ "state": "already_forgotten", "handoff": { "taskId": task_id } })));
        }
        return Ok(Err(refuse("NOT_FOUND", format!("no handoff on task {task_id:?}"), vec![])));
    }
    let mut ids = Vec::with_capacity(capsules.len());
    for (k, bytes) in &capsules {
        let capsule = Capsule::decode(bytes)?;
        handoff_index::remove(tx, part, &capsule)?;
        handoff_tasks::remove(tx, part, &capsule)?;
        tx.delete(HAND, k)?;
        ids.push(capsule.id.to_be_bytes());
    }
    let events = remove_events(tx, part, "handoff", task_id)?;
    let mut mapped = Vec::new();
    for (k, local) in tx.prefix(IMPORT_MAP, &part.key(&[&[HANDOFF]]))? {
        if ids.iter().any(|id| id[..] == local[..]) {
            mapped.push(k);
        }
    }
    for k in mapped {
        tx.delete(IMPORT_MAP, &k)?;
    }
    // A capsule's receipt spells its task id, and a retry would answer with a forgotten capsule.
    // Ids are the partition's, so no note receipt carries one of them.
    let receipts: Vec<Value> = ids.iter().map(|id| json!(u64::from_be_bytes(*id).to_string())).collect();
    forget_receipts(tx, part, |_, receipt| receipt.get("key").is_none() && receipts.contains(&receipt["id"]))?;
    let counts = json!({ "handoffs": ids.len(), "events": events });
    record_forget(tx, caller, "handoff", &counts, &marker_key(part, task_id))?;
    let forgotten = crate::knowledge::Counts { handoffs: ids.len() as u64, ..crate::knowledge::Counts::default() };
    Ok(Ok(json!({
        "state": "forgotten",
        "forgotten": forgotten,
        "kept": [],
        "handoff": { "taskId": task_id, "capsules": ids.len() },
    })))
}
