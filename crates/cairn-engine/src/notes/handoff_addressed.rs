//! `handoff_resume` without `taskId`: the unexpired capsules addressed `to` the caller, newest
//! first (latest `createdAt`, then id, as a task's newest is chosen), a page of `limit` at a time
//! (fewer past `PAGE_BYTES` of JSON).
//! The cursor is opaque and bound to the caller (`cursor.rs`; no other field shapes this list,
//! and the page size may change between pages); it keeps the (`createdAt`, id) of the last capsule
//! shown, so a capsule left meanwhile (newer than every page) neither shifts nor repeats a page.

use super::cursor::Binding;
use super::events::PAGE_BYTES;
use super::handoff::{Capsule, HAND, HAND_TO, newest_last, task_capsules};
use super::handoff_elsewhere::elsewhere;
use super::{Outcome, invalid};
use crate::error::{Error, Result};
use crate::knowledge::api::Caller;
use crate::snapshot::Snapshot;
use serde_json::{Value, json};
use std::collections::HashMap;

/// A page of the unexpired capsules addressed to the caller, after the capsule `cursor` names:
/// `{state: "listed", handoffs, nextCursor}`. One that a newer unexpired capsule of its task has
/// replaced (so `handoff_resume {taskId}` returns that one) is marked `superseded: true` with the
/// newer one's id as `supersededBy`: an agent acting on the list must not pick up a stale
/// handoff, yet should still see that one was left for it.
/// With none on the first page, `elsewhere` names the other scopes (among `readable`) where some
/// wait (`handoff_elsewhere.rs`).
pub(super) fn addressed(
    snap: &Snapshot,
    caller: &Caller,
    (limit, cursor): (usize, Option<&str>),
    readable: Option<&[String]>,
) -> Outcome<Value> {
    let binding = Binding::new("handoff_resume", caller, &json!({}));
    let after = cursor.map(|c| binding.position(c).and_then(|p| position(&p))).transpose()?;
    let mut capsules = addressed_capsules(snap, caller)?;
    newest_last(&mut capsules);
    let rest: Vec<&Capsule> = capsules
        .iter()
        .rev()
        .filter(|c| after.is_none_or(|a| (c.created_at, c.id) < a) && !c.expired(caller.now))
        .take(limit + 1)
        .collect();
    let page = &rest[..rest.len().min(limit)];
    // The capsule `handoff_resume {taskId}` returns, per task of the page.
    let mut current: HashMap<&str, Option<u64>> = HashMap::new();
    let mut out = Vec::with_capacity(page.len());
    let mut bytes = 0;
    for c in page {
        if !current.contains_key(c.task_id.as_str()) {
            let newest = task_capsules(snap, &caller.part, &c.task_id)?
                .iter()
                .rev()
                .find(|t| !t.expired(caller.now))
                .map(|t| t.id);
            current.insert(&c.task_id, newest);
        }
        let mut shown = c.render();
        if let Some(newer) = current[c.task_id.as_str()].filter(|id| *id != c.id) {
            shown["superseded"] = json!(true);
            shown["supersededBy"] = json!(newer.to_string());
        }
        // A page ends early, before the capsule that would take it past `PAGE_BYTES` (history's
        // bound), though it holds one: a capsule may be 64 KiB, so 20 of them made 1.3 MB.
        let size = serde_json::to_vec(&shown).map_or(0, |v| v.len()) + 1;
        if !out.is_empty() && bytes + size > PAGE_BYTES {
            break;
        }
        bytes += size;
        out.push(shown);
    }
    let next = (rest.len() > out.len()).then(|| {
        let last = page[out.len() - 1];
        binding.cursor(&[last.created_at.to_be_bytes(), last.id.to_be_bytes()].concat())
    });
    let mut reply = json!({ "state": "listed", "handoffs": out, "nextCursor": next });
    if cursor.is_none()
        && rest.is_empty()
        && let Some(there) = elsewhere(snap, caller, readable)?
    {
        reply["elsewhere"] = there;
    }
    Ok(reply)
}

/// The (`createdAt`, id) a cursor keeps.
fn position(bytes: &[u8]) -> Outcome<(i64, u64)> {
    if bytes.len() != 16 {
        return Err(invalid("cursor", "is damaged"));
    }
    let (at, id) = bytes.split_at(8);
    Ok((i64::from_be_bytes(at.try_into().expect("8 bytes")), u64::from_be_bytes(id.try_into().expect("8 bytes"))))
}

/// Every capsule addressed to the caller, expired ones too, in no order.
fn addressed_capsules(snap: &Snapshot, caller: &Caller) -> Result<Vec<Capsule>> {
    let part = &caller.part;
    let mut capsules = Vec::new();
    for kv in snap.prefix(HAND_TO, &part.key(&[caller.agent.as_bytes(), b"\0"]))? {
        let (k, task) = kv?;
        let key = part.key(&[&task, b"\0", &k[k.len() - 8..]]);
        let bytes = snap.get(HAND, &key)?.ok_or_else(|| Error::corrupt(None, "an addressed handoff is missing"))?;
        capsules.push(Capsule::decode(&bytes)?);
    }
    Ok(capsules)
}
