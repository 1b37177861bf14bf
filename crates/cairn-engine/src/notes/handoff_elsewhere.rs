//! Where handoffs addressed to the caller wait when none does in its scope. `handoff_resume {}`
//! lists the caller's scope only, so an agent whose capsules were left in another scope of its
//! user read an empty list as "nothing for me" (found by a review); the reply names those scopes
//! with their counts, so the agent knows to pass `scope`. Read: the caller's tenant and user only
//! (a partition's keys start with them), of its scopes only those the node says the caller's
//! token may use (`readableScopes`; none given, every one), at most `READ` capsules in all.

use super::handoff_index;
use crate::error::Result;
use crate::knowledge::api::Caller;
use crate::knowledge::{Partition, user_scopes};
use crate::snapshot::Snapshot;
use serde_json::{Value, json};

/// Capsules read across the other scopes, at most: past it the counts are lower bounds (`more`).
const READ: usize = 5_000;

/// Scopes named, at most (those with the most capsules addressed to the caller first).
const NAMED: usize = 10;

/// `{scopes: [{scope, handoffs}], more?, hint}`: the caller's other scopes, among `readable`,
/// holding unexpired capsules addressed to it, most first; `None` when there are none.
pub(super) fn elsewhere(snap: &Snapshot, caller: &Caller, readable: Option<&[String]>) -> Result<Option<Value>> {
    let mut found: Vec<(String, u64)> = Vec::new();
    let mut budget = READ;
    for other in other_scopes(snap, caller, readable)? {
        let (scope, part) = other?;
        let n = addressed_live(snap, &part, caller, &mut budget)?;
        if n > 0 {
            found.push((scope, n));
        }
        if budget == 0 {
            break;
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let more = budget == 0 || found.len() > NAMED;
    found.truncate(NAMED);
    let named: Vec<String> = found.iter().map(|(s, n)| format!("{s:?} ({n})")).collect();
    let hint = format!(
        "nothing in this scope is addressed to you, but handoffs addressed to you wait in your scopes {}{}: \
         send `scope` with one to list them",
        named.join(", "),
        if more { " and perhaps more" } else { "" }
    );
    Ok(Some(named_scopes(&found, "handoffs", more, &hint)))
}

/// The caller's scopes but its own, among `readable` (none given: every one), each with its
/// partition, in the order the user's scopes list: where every `elsewhere` of the notes verbs looks.
pub(super) fn other_scopes<'a>(
    snap: &Snapshot,
    caller: &'a Caller,
    readable: Option<&'a [String]>,
) -> Result<impl Iterator<Item = Result<(String, Partition)>> + 'a> {
    let (tenant, user, here) = caller.part.parts();
    Ok(user_scopes(snap, tenant, user)?
        .into_iter()
        .filter(move |scope| scope != here && readable.is_none_or(|r| r.contains(scope)))
        .map(move |scope| Partition::new(tenant, user, &scope).map(|part| (scope, part))))
}

/// `{scopes: [{scope, <counted>}], more?, hint}`: the scopes `found`, each with its count of what
/// it holds for the caller (`handoffs`, `notes`), the form every `elsewhere` of the notes verbs takes.
pub(super) fn named_scopes(found: &[(String, u64)], counted: &str, more: bool, hint: &str) -> Value {
    let mut out = json!({
        "scopes": found.iter().map(|(scope, n)| json!({ "scope": scope, counted: n })).collect::<Vec<_>>(),
        "hint": hint,
    });
    if more {
        out["more"] = json!(true);
    }
    out
}

/// The unexpired capsules of `part` addressed to the caller's agent, reading at most `budget`
/// entries of the index (no capsule: an entry holds its expiry).
fn addressed_live(snap: &Snapshot, part: &Partition, caller: &Caller, budget: &mut usize) -> Result<u64> {
    let mut n = 0;
    handoff_index::scan(snap, part, &caller.agent, None, |e| {
        if *budget == 0 {
            return Ok(false);
        }
        *budget -= 1;
        n += u64::from(!e.expired(caller.now));
        Ok(true)
    })?;
    Ok(n)
}
