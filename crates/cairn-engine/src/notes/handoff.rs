//! Handoff capsules (DESIGN.md §2): what one agent leaves on a task for the next. Task
//! visibility: any agent of the user that names the task resumes it. A capsule may be addressed
//! `to` an agent; `handoff_resume` without `taskId` lists the unexpired capsules addressed to the
//! caller, a page at a time (`handoff_addressed.rs`). An expired capsule is never returned; the
//! reply says it expired and when.
//!
//! Trees: `n.hand` `part | taskId \0 | id BE` → capsule; `n.hand_for`, the capsules addressed to
//! each agent newest first (`handoff_index.rs`).
//! Ids come from the partition's counter; the newest capsule of a task is the one left last (`createdAt`,
//! then id: an imported capsule keeps its time but takes a new id).

use super::fields::{Fields, agent_name, limit, readable_scopes, short_name, written_task};
use super::handoff_addressed::addressed;
use super::handoff_task_elsewhere::task_elsewhere;
use super::handoff_tasks;
use super::idempotency::Idempotency;
use super::notes_meant::tasks_meant;
use super::{Outcome, invalid};
use crate::error::{Error, Result};
use crate::history::{self, Change};
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::time::{iso_ms, parse_rfc3339};
use crate::write::WriteTxn;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub(crate) const HAND: &str = "n.hand";

/// Longest `summary`, in bytes.
pub const MAX_SUMMARY_BYTES: usize = 16 * 1024;
/// Longest `status`, in bytes.
pub const MAX_STATUS_BYTES: usize = 256;
/// Most items in each of `decisions`, `nextSteps`, `artifacts`, `blockers`.
pub const MAX_ITEMS: usize = 100;
/// Largest item of those lists: a string's UTF-8 bytes (as every text limit counts them), an
/// object serialised.
pub const MAX_ITEM_BYTES: usize = 4096;
/// Largest capsule, serialised.
pub const MAX_CAPSULE_BYTES: usize = 64 * 1024;

pub(super) const LISTS: [&str; 4] = ["decisions", "nextSteps", "artifacts", "blockers"];

/// A capsule as stored (times in ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Capsule {
    pub(super) id: u64,
    pub(super) task_id: String,
    pub(super) summary: String,
    pub(super) status: Option<String>,
    /// `decisions`, `nextSteps`, `artifacts`, `blockers`, in that order.
    pub(super) lists: [Vec<Value>; 4],
    /// The agent that left it.
    pub(super) from: String,
    pub(super) to: Option<String>,
    pub(super) created_at: i64,
    pub(super) expires_at: Option<i64>,
}

impl Capsule {
    pub(super) fn render(&self) -> Value {
        let mut out = json!({
            "id": self.id.to_string(),
            "taskId": self.task_id,
            "summary": self.summary,
            "status": self.status,
            "from": self.from,
            "createdAt": iso_ms(self.created_at),
        });
        for (name, items) in LISTS.iter().zip(&self.lists) {
            out[*name] = json!(items);
        }
        if let Some(to) = &self.to {
            out["to"] = json!(to);
        }
        if let Some(at) = self.expires_at {
            out["expiresAt"] = json!(iso_ms(at));
        }
        out
    }

    /// The verbs read expiry from the indexes' entries (`handoff_tasks.rs`, `handoff_index.rs`);
    /// the tests' reference, which reads every capsule, reads it here.
    #[cfg(test)]
    pub(super) fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    pub(super) fn decode(bytes: &[u8]) -> Result<Capsule> {
        serde_json::from_slice(bytes).map_err(|e| Error::corrupt(None, format!("a handoff capsule: {e}")))
    }
}

/// The size of a list item as `MAX_ITEM_BYTES` counts it; `None` when it is neither a string nor
/// an object. A string is counted without the JSON quotes and escapes: the limit is on what the
/// caller wrote.
pub(super) fn item_bytes(item: &Value) -> Option<usize> {
    match item {
        Value::String(s) => Some(s.len()),
        Value::Object(_) => Some(serde_json::to_vec(item).expect("JSON serialises").len()),
        _ => None,
    }
}

/// The size of `capsule` as `MAX_CAPSULE_BYTES` counts it, when it is larger than that.
pub(super) fn oversized(capsule: &Capsule) -> Option<usize> {
    Some(serde_json::to_vec(capsule).expect("JSON serialises").len()).filter(|&size| size > MAX_CAPSULE_BYTES)
}

/// What a capsule over `MAX_CAPSULE_BYTES` is told: the whole capsule, not one field, is too large.
pub(super) fn oversized_message(size: usize) -> String {
    format!(
        "the capsule (summary, status and the items of decisions, nextSteps, artifacts and blockers together) \
         is {size} bytes serialised; at most {MAX_CAPSULE_BYTES}"
    )
}

fn list(f: &mut Fields, name: &str) -> Outcome<Vec<Value>> {
    let items = match f.raw(name) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(invalid(name, "must be an array of strings or objects")),
    };
    if items.len() > MAX_ITEMS {
        return Err(invalid(name, format_args!("has {} items; at most {MAX_ITEMS}", items.len())));
    }
    for (i, item) in items.iter().enumerate() {
        // Spelled as the node's schema names array items (`decisions.0`), so both layers agree.
        let field = format!("{name}.{i}");
        let Some(size) = item_bytes(item) else { return Err(invalid(&field, "must be a string or an object")) };
        if size > MAX_ITEM_BYTES {
            return Err(invalid(&field, format_args!("is {size} bytes; at most {MAX_ITEM_BYTES}")));
        }
        if let Err(e) = crate::json_depth::check(&field, item) {
            return Err(invalid(&field, e.trim_start_matches(&format!("{field}: "))));
        }
    }
    Ok(items)
}

/// Stores `capsule` (its id given) under its task, and under its addressee when it has one.
pub(super) fn put(tx: &mut WriteTxn<'_>, part: &Partition, capsule: &Capsule) -> Result<()> {
    let id_be = capsule.id.to_be_bytes();
    let record = serde_json::to_vec(capsule).expect("JSON serialises");
    // The indexes first: they tell a store's first capsule by `n.hand` being empty.
    super::handoff_index::put(tx, part, capsule)?;
    super::handoff_tasks::put(tx, part, capsule)?;
    tx.put(HAND, &part.key(&[capsule.task_id.as_bytes(), b"\0", &id_be]), &record)
}

/// A validated `handoff_create`: the capsule to store (its id not yet given), the body as sent
/// (the event's patch) and its idempotency.
struct Create {
    capsule: Capsule,
    input: Value,
    idempotency: Option<Idempotency>,
}

fn parse_create(caller: &Caller, body: &[u8]) -> Outcome<Create> {
    let mut f = Fields::parse(body)?;
    let input = f.as_value();
    let task_id = f.name("taskId")?.ok_or_else(|| invalid("taskId", "is required"))?;
    written_task("taskId", &task_id)?;
    let summary = f.string("summary")?.ok_or_else(|| invalid("summary", "is required"))?;
    if summary.trim().is_empty() || summary.len() > MAX_SUMMARY_BYTES {
        return Err(invalid("summary", format_args!("must be 1..={MAX_SUMMARY_BYTES} bytes and not blank")));
    }
    let status = f.string("status")?;
    if status.as_ref().is_some_and(|s| s.is_empty() || s.len() > MAX_STATUS_BYTES) {
        return Err(invalid("status", format_args!("must be 1..={MAX_STATUS_BYTES} bytes")));
    }
    let lists = [list(&mut f, LISTS[0])?, list(&mut f, LISTS[1])?, list(&mut f, LISTS[2])?, list(&mut f, LISTS[3])?];
    let expires_at = match f.string("expiresAt")? {
        Some(text) => Some(
            parse_rfc3339(&text)
                .ok_or_else(|| invalid("expiresAt", format_args!("must be an RFC 3339 date-time, got {text:?}")))?,
        ),
        None => None,
    };
    let to = f.string("to")?;
    if let Some(t) = &to {
        agent_name("to", t)?;
    }
    let idempotency = Idempotency::field(&mut f)?;
    f.bool("allowPrivate")?;
    f.finish()?;
    let capsule = Capsule {
        id: 0,
        task_id,
        summary,
        status,
        lists,
        from: caller.agent.clone(),
        to,
        created_at: caller.now,
        expires_at,
    };
    if let Some(size) = oversized(&capsule) {
        return Err(invalid("(body)", oversized_message(size)));
    }
    // The capsule as understood: absent, null and empty lists alike, `expiresAt` as an instant
    // however it was spelled, the task id recomposed.
    let understood = json!({
        "verb": "handoff_create", "taskId": capsule.task_id, "summary": capsule.summary, "status": capsule.status,
        "lists": capsule.lists, "expiresAt": capsule.expires_at, "to": capsule.to,
    });
    let idempotency = idempotency.map(|k| Idempotency::new(k, &understood, &input));
    Ok(Create { capsule, input, idempotency })
}

/// Runs `handoff_create` for `caller`.
pub(crate) fn create(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let Create { mut capsule, input, idempotency } = parse_create(caller, body)?;
    let caller = caller.clone();
    let window = store.idempotency_ms();
    store
        .write(move |tx| {
            // A retry gets its first receipt even once a short `expiresAt` has passed since.
            if let Some(replayed) = idempotency.as_ref().map(|i| i.replay(tx, &caller, window)).transpose()?.flatten() {
                return Ok(replayed);
            }
            if capsule.expires_at.is_some_and(|at| at <= caller.now) {
                return Ok(Err(invalid("expiresAt", "must be in the future")));
            }
            // Nothing is written above this line.
            caller.part.register(tx)?;
            super::idempotency_window::prune(tx, &caller.part, caller.now, window)?;
            super::idempotency_upgrade::step(tx, caller.now)?;
            let replaced = resumed_now(tx, &caller.part, &capsule.task_id, caller.now)?;
            capsule.id = crate::knowledge::next_id(tx, &caller.part)?;
            put(tx, &caller.part, &capsule)?;
            let change = Change {
                family: "handoff",
                target: &capsule.task_id,
                op: "create",
                before: None,
                after: Some(capsule.render()),
                patch: Some(input),
            };
            history::record(tx, &caller, change)?;
            let mut receipt = receipt(&capsule);
            if let Some(r) = replaced {
                receipt["replaces"] = r;
            }
            if let Some(idem) = &idempotency {
                idem.remember(tx, &caller, &receipt)?;
            }
            Ok(Ok(receipt))
        })?
        .0
}

/// The capsule a resume of `task_id` returns before a new one is stored (the newest unexpired),
/// as a create's receipt names it: a model that hands off a task unresumed learns whose capsule,
/// and which `nextSteps`, a resume no longer returns (found playing two agents).
fn resumed_now(tx: &mut WriteTxn<'_>, part: &Partition, task_id: &str, now: i64) -> Result<Option<Value>> {
    let Some(newest) = handoff_tasks::newest_unexpired_in(tx, part, task_id, now)? else { return Ok(None) };
    let c = handoff_tasks::capsule_in(tx, part, task_id, newest)?;
    let mut named = json!({ "id": c.id.to_string(), "from": c.from, "createdAt": iso_ms(c.created_at) });
    if let Some(to) = c.to {
        named["to"] = json!(to);
    }
    Ok(Some(named))
}

/// What `handoff_create` answers for the capsule it stored.
fn receipt(capsule: &Capsule) -> Value {
    let mut reply =
        json!({ "id": capsule.id.to_string(), "taskId": capsule.task_id, "createdAt": iso_ms(capsule.created_at) });
    if let Some(at) = capsule.expires_at {
        reply["expiresAt"] = json!(iso_ms(at));
    }
    if let Some(to) = &capsule.to {
        reply["to"] = json!(to);
    }
    reply
}

/// Most entries of `skippedExpired` a resume lists (newest first); `skippedExpiredCount` counts
/// them all, so a task that hands off often with short expiries does not grow every resume.
pub const MAX_SKIPPED_LISTED: usize = 20;

/// The refusal of `field` (`limit`, `cursor`) beside `taskId`: it pages the addressed handoffs.
fn paging_with_task(field: &str) -> super::Fail {
    invalid(field, "pages the handoffs addressed to you; with taskId the one newest unexpired handoff is returned")
}

/// Runs `handoff_resume` for `caller`.
pub(crate) fn resume(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let mut f = Fields::parse(body)?;
    let task_id = f.name("taskId")?;
    if let Some(t) = &task_id {
        short_name("taskId", t)?;
    }
    // With a task there is one capsule to return: a `limit` or `cursor` would be ignored, so
    // either is refused.
    let limit = match &task_id {
        Some(_) if f.u64("limit")?.is_some() => return Err(paging_with_task("limit")),
        Some(_) => 0,
        None => limit(&mut f)?,
    };
    let cursor = f.string("cursor")?;
    if task_id.is_some() && cursor.is_some() {
        return Err(paging_with_task("cursor"));
    }
    f.bool("allowPrivate")?;
    let readable = readable_scopes(&mut f)?;
    f.finish()?;
    let snap = store.snapshot()?;
    let Some(task_id) = task_id else {
        return addressed(&snap, caller, (limit, cursor.as_deref()), readable.as_deref());
    };
    // The task's capsules newest first, up to the first unexpired one: the expired ones newer
    // than it are counted, the first `MAX_SKIPPED_LISTED` of them listed.
    let (mut newest, mut skipped, mut newer_expired) = (None, Vec::new(), 0_usize);
    handoff_tasks::scan(&snap, &caller.part, &task_id, |e| {
        if !e.expired(caller.now) {
            newest = Some(e);
            return Ok(false);
        }
        newer_expired += 1;
        if skipped.len() < MAX_SKIPPED_LISTED {
            skipped.push(e);
        }
        Ok(true)
    })?;
    let listed: Vec<Value> = skipped
        .iter()
        .map(|e| json!({ "id": e.id.to_string(), "expiredAt": iso_ms(e.expires_at.unwrap_or_default()) }))
        .collect();
    let newest = newest.map(|e| handoff_tasks::capsule(&snap, &caller.part, &task_id, e)).transpose()?;
    Ok(match newest {
        Some(c) if listed.is_empty() => json!({ "state": "resumed", "handoff": c.render() }),
        Some(c) => json!({
            "state": "resumed",
            "handoff": c.render(),
            "skippedExpired": listed,
            "skippedExpiredCount": newer_expired,
        }),
        None => match skipped.first() {
            Some(newest) => json!({
                "state": "expired",
                "taskId": task_id,
                "id": newest.id.to_string(),
                "expiredAt": iso_ms(newest.expires_at.unwrap_or_default()),
            }),
            None => none(&snap, caller, readable.as_deref(), &task_id)?,
        },
    })
}

/// `state: none` for a task with no capsule, naming the tasks spelled like it (a model that
/// misspells the task would read a bare `none` as "no one began it") and the caller's other
/// scopes, among `readable`, where it waits (`handoff_task_elsewhere.rs`).
fn none(snap: &Snapshot, caller: &Caller, readable: Option<&[String]>, task_id: &str) -> Result<Value> {
    let mut reply = json!({ "state": "none", "taskId": task_id });
    let meant = tasks_meant(snap, &caller.part, task_id)?;
    if !meant.is_empty() {
        reply["did_you_mean"] = json!(meant);
    }
    if let Some(there) = task_elsewhere(snap, caller, readable, task_id)? {
        reply["elsewhere"] = there;
    }
    Ok(reply)
}
