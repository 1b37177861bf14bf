//! Where the caller's notes are when its scope shows none. An agent that misspelt its scope (or
//! left out `X-Cairn-Scope`) read `note_list`'s empty page, or `history {key}`'s `NOT_FOUND`, as
//! "nothing stored", as it read `handoff_resume {}` before that named the scopes where its
//! handoffs wait (`handoff_elsewhere.rs`). These name the caller's other scopes holding notes it
//! could read there with the same request, each with its count. Read: the caller's tenant and
//! user only (a partition's keys start with them), of its scopes only those the node says the
//! caller's token may use (`readableScopes`; none given, every one), at most `READ_SCOPE`
//! entries in one scope and `READ` in all: a key's current records (a few), else the metas of
//! the query index (`n.doc`, one entry a note, no record decoded).

use super::block;
use super::handoff_elsewhere::{named_scopes, other_scopes};
use super::index::{DOC, decode_meta};
use super::record::{CUR, Identity, KINDS, NoteRecord, Visibility};
use crate::error::Result;
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::snapshot::Snapshot;
use crate::varint;
use serde_json::Value;

/// Entries read across the other scopes, at most (a scope's first seek counts one): past it the
/// counts are lower bounds and scopes may go unnamed (`more`).
const READ: usize = 5_000;

/// Entries read in one scope, at most: one large scope does not spend what the others need.
const READ_SCOPE: usize = 1_000;

/// Scopes named, at most (those with the most notes first).
const NAMED: usize = 10;

/// Whether a note of this visibility, owner, private flag and kind counts: the caller may read
/// it and the request's filters admit it.
pub(super) type Admit<'a> = &'a dyn Fn(Visibility, &str, bool, &str) -> bool;

/// The notes a request asks for: of one `key` (then only its records are read), or any, those
/// `admit` passes.
#[derive(Clone, Copy)]
pub(super) struct Wanted<'a> {
    pub key: Option<&'a str>,
    pub admit: Admit<'a>,
}

/// The scopes found: `(scope, notes)`, most first, at most `NAMED`; and whether counts are lower
/// bounds or scopes may be left out (`more`).
struct Found {
    scopes: Vec<(String, u64)>,
    more: bool,
}

impl Found {
    /// `"work" (3), "default" (1)`, and ` and perhaps more` when `more`.
    fn named(&self) -> String {
        let named: Vec<String> = self.scopes.iter().map(|(s, n)| format!("{s:?} ({n})")).collect();
        format!("{}{}", named.join(", "), if self.more { " and perhaps more" } else { "" })
    }
}

/// Whether the caller's own scope holds a note `wanted` passes (reading at most `READ_SCOPE`
/// entries; a scan cut short before finding one answers yes, so no other scope is named).
pub(super) fn holds_here(snap: &Snapshot, caller: &Caller, wanted: Wanted<'_>) -> Result<bool> {
    let mut budget = READ_SCOPE;
    let (n, cut) = count(snap, &caller.part, wanted, &mut budget, 1)?;
    Ok(n > 0 || cut)
}

/// The caller's other scopes, among `readable`, holding notes `wanted` passes; `None` when none does.
fn holding(snap: &Snapshot, caller: &Caller, readable: Option<&[String]>, wanted: Wanted<'_>) -> Result<Option<Found>> {
    holding_within(snap, caller, readable, wanted, (READ, READ_SCOPE))
}

/// `holding`, reading at most `read` entries in all and `read_scope` in one scope.
fn holding_within(
    snap: &Snapshot,
    caller: &Caller,
    readable: Option<&[String]>,
    wanted: Wanted<'_>,
    (read, read_scope): (usize, usize),
) -> Result<Option<Found>> {
    let mut scopes: Vec<(String, u64)> = Vec::new();
    let mut left = read;
    let mut more = false;
    for other in other_scopes(snap, caller, readable)? {
        let (scope, part) = other?;
        if left == 0 {
            more = true;
            break;
        }
        let mut budget = left.min(read_scope);
        let before = budget;
        let (n, cut) = count(snap, &part, wanted, &mut budget, u64::MAX)?;
        left -= before - budget;
        more |= cut;
        if n > 0 {
            scopes.push((scope, n));
        }
    }
    if scopes.is_empty() {
        return Ok(None);
    }
    scopes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    more |= scopes.len() > NAMED;
    scopes.truncate(NAMED);
    Ok(Some(Found { scopes, more }))
}

/// `elsewhere` of an empty `note_list` page: `{scopes: [{scope, notes}], more?, hint}`, the
/// caller's other scopes, among `readable`, holding notes `wanted` passes (for a `queried` list,
/// its filters: the query is not tried there); `None` when none does.
pub(super) fn listed_elsewhere(
    snap: &Snapshot,
    caller: &Caller,
    readable: Option<&[String]>,
    wanted: Wanted<'_>,
    queried: bool,
) -> Result<Option<Value>> {
    let Some(found) = holding(snap, caller, readable, wanted)? else { return Ok(None) };
    let (scopes, verb) = (plural(&found), if plural(&found).is_empty() { "holds" } else { "hold" });
    let hint = if queried {
        format!(
            "no note in this scope is one these filters admit, but your scope{scopes} {} {verb} some (the query not \
             tried there): send `scope` with one to list them there",
            found.named()
        )
    } else {
        format!(
            "no note in this scope answers this list, but your scope{scopes} {} {verb} notes it would list: send \
             `scope` with one to list them there",
            found.named()
        )
    };
    Ok(Some(named_scopes(&found.scopes, "notes", found.more, &hint)))
}

/// `elsewhere` of `history {key}` that found no note `named` (`unnamed`: sent without
/// `visibility` and `taskId`): the caller's other scopes, among `readable`, holding a note at
/// that key whose history it may read there (the one named; unnamed, any at the key it may name:
/// the user's, a task's, its own agent note), a private one only on a `private` read; as
/// `listed_elsewhere` gives them, and the hint.
pub(super) fn history_elsewhere(
    snap: &Snapshot,
    caller: &Caller,
    readable: Option<&[String]>,
    named: &Identity,
    (unnamed, private): (bool, bool),
) -> Result<Option<(Value, String)>> {
    let admit = |visibility: Visibility, owner: &str, is_private: bool, _: &str| {
        let nameable = match visibility {
            Visibility::Agent => owner == caller.agent,
            Visibility::User | Visibility::Task => true,
        };
        let meant = unnamed || (visibility == named.visibility && owner == named.owner);
        nameable && meant && (private || !is_private)
    };
    let wanted = Wanted { key: Some(&named.key), admit: &admit };
    let Some(found) = holding(snap, caller, readable, wanted)? else { return Ok(None) };
    let (scopes, verb) = (plural(&found), if plural(&found).is_empty() { "holds" } else { "hold" });
    let hint = format!(
        "your scope{scopes} {} {verb} a note at this key: send `scope` with one to read its history there",
        found.named()
    );
    Ok(Some((named_scopes(&found.scopes, "notes", found.more, &hint), hint)))
}

/// `s` when more than one scope is (or may be) named.
fn plural(found: &Found) -> &'static str {
    if found.scopes.len() > 1 || found.more { "s" } else { "" }
}

/// The notes of `part` that `wanted` passes, up to `enough`, spending one of `budget` per entry
/// read (and one for the seek); and whether the scan stopped before the scope's end.
fn count(
    snap: &Snapshot,
    part: &Partition,
    wanted: Wanted<'_>,
    budget: &mut usize,
    enough: u64,
) -> Result<(u64, bool)> {
    let mut n = 0;
    let mut cut = false;
    *budget = budget.saturating_sub(1);
    let mut spend = |counts: bool| {
        if *budget == 0 || n >= enough {
            cut = true;
            return false;
        }
        *budget -= 1;
        n += u64::from(counts);
        true
    };
    if let Some(key) = wanted.key {
        for kv in snap.prefix(CUR, &part.key(&[key.as_bytes(), b"\0"]))? {
            let note = NoteRecord::decode(&kv?.1)?;
            if !spend((wanted.admit)(note.visibility(), &note.owner, note.private, &note.kind)) {
                break;
            }
        }
    } else {
        snap.scan_prefix(DOC, part.prefix(), |_, v| {
            for entry in block::entries(v) {
                let (_, payload) = entry?;
                let mut at = 0;
                varint::get(payload, &mut at, "a notes doc entry")?;
                let m = decode_meta(&payload[at..])?;
                let kind = KINDS.get(usize::from(m.kind)).copied().unwrap_or_default();
                if !spend((wanted.admit)(m.visibility, m.owner, m.private, kind)) {
                    return Ok(false);
                }
            }
            Ok(true)
        })?;
    }
    // A scan stopped at `enough` found what it needed; only a spent budget leaves notes uncounted.
    Ok((n, cut && n < enough))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notes::tests::{fresh, run, who};
    use serde_json::json;

    /// One big scope spends its share of the reads, not all of them: the scopes after it are
    /// still counted, and its count, cut short, is a lower bound the reply says may be more.
    #[test]
    fn the_scan_is_bounded_in_each_scope_and_in_all() {
        let (_dir, store) = fresh();
        for i in 0..30 {
            let r = run(
                &store,
                &who("u1", "big", "claude", 1),
                "note_write",
                &json!({"key": format!("k{i}"), "value": i, "kind": "user_fact"}),
            );
            assert!(r.get("error").is_none(), "{r}");
        }
        for scope in ["c-small", "d-small"] {
            run(
                &store,
                &who("u1", scope, "claude", 1),
                "note_write",
                &json!({"key": "k", "value": 1, "kind": "user_fact"}),
            );
        }
        let snap = store.snapshot().unwrap();
        let me = who("u1", "a-empty", "claude", 1);
        let any = |_: Visibility, _: &str, _: bool, _: &str| true;
        let wanted = Wanted { key: None, admit: &any };
        let found = holding_within(&snap, &me, None, wanted, (100, 10)).unwrap().unwrap();
        // Ten reads in big: its seek and nine notes.
        assert_eq!(found.scopes, [("big".into(), 9), ("c-small".into(), 1), ("d-small".into(), 1)]);
        assert!(found.more, "big was cut short");
        // Past the budget in all, the scopes left are not read, and the reply says there may be more.
        let found = holding_within(&snap, &me, None, wanted, (12, 10)).unwrap().unwrap();
        assert_eq!(found.scopes, [("big".into(), 9), ("c-small".into(), 1)]);
        assert!(found.more);
        // Read whole, the counts are exact.
        let found = holding_within(&snap, &me, None, wanted, (100, 100)).unwrap().unwrap();
        assert_eq!(found.scopes[0], ("big".into(), 30));
        assert!(!found.more);
    }
}
