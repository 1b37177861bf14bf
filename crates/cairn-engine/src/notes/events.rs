//! Reading the immutable history: `history` pages the events of one note (`key` with
//! `visibility`/`taskId`), entity (`subject`) or fact (`fact: {from, to, type}`); `audit` pages
//! the caller's own events. Both run on one snapshot and page by sequence number.
//!
//! Notes keep their read rules in their history: another agent's agent-visible note has no
//! history to read (its identity is built from the caller's own agent), a task note needs its
//! `taskId`, and an event whose note was private shows no values unless private reads are allowed
//! and asked for. A forgotten note has no events left (`forget.rs` removes them); a store written
//! before that kept them with their values stripped under a marker keyed by the identity, and
//! those events still read as `redacted: "forgotten"`.

use super::cursor::{Binding, u64_position};
use super::event_order;
use super::event_target;
use super::fields::{Fields, limit, readable_scopes};
use super::forget::marker_key;
use super::notes_elsewhere::history_elsewhere;
use super::notes_meant::{message_with, notes_meant};
use super::record::{CUR, FORGOTTEN, Identity, Visibility};
use super::same_key::{described, same_key};
use super::{Outcome, invalid, refuse};
use crate::error::{Error, Result};
use crate::history::{AGENT, Event, TARGET, agent_prefix, indexed_event, target_prefix};
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::knowledge::facts_between::{self, Between};
use crate::knowledge::{event_names, event_view};
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::time::iso_ms;
use serde_json::{Value, json};

/// What a `history` request names: its family, the targets its events are filed under, and
/// what it names if nothing is stored under that name (then a page with no event is 404).
struct Named {
    family: &'static str,
    targets: Vec<String>,
    unknown: Option<Unknown>,
    /// A forgotten note's marker: the seq of the event that forgot it.
    forgot: Option<u64>,
}

/// Something a history request names that is not stored, and was never forgotten (what was
/// forgotten has no events left: an empty page, as forget-export.md has it).
enum Unknown {
    /// A note's message and the identity named.
    Note(String, Identity),
    Subject(String),
    /// A fact's message, its ends no entity has, for which names are suggested, and when both
    /// ends are stored the facts between them.
    Fact(String, Vec<String>, Vec<Between>),
}

/// Runs `history` for `caller`.
pub(crate) fn history(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let mut f = Fields::parse(body)?;
    let key = f.name("key")?;
    let visibility = f.string("visibility")?;
    let task_id = f.name("taskId")?;
    let subject = f.string("subject")?;
    let fact = f.object("fact")?;
    let private = read_private(&mut f)?;
    let limit = limit(&mut f)?;
    let cursor = f.string("cursor")?;
    let compact = f.bool("compact")?.unwrap_or(false);
    let newest = f.bool("newestFirst")?.unwrap_or(false);
    let readable = readable_scopes(&mut f)?;
    f.finish()?;
    let unnamed = visibility.is_none() && task_id.is_none();
    let snap = store.snapshot()?;
    let Named { family, targets, unknown, forgot } = match (key, subject, fact) {
        (Some(key), None, None) => {
            let named = (visibility.as_deref(), task_id.as_deref());
            note_named(&snap, caller, &key, named, (private, cursor.is_none()))?
        }
        (None, Some(subject), None) => subject_named(&snap, caller, subject)?,
        (None, None, Some(fact)) => fact_named(&snap, caller, fact)?,
        _ => return Err(invalid("key", "give exactly one of key, subject or fact")),
    };
    let binding = Binding::new(
        "history",
        caller,
        &bound_to(json!({ "family": family, "target": targets, "private": private }), newest),
    );
    let after = cursor.as_deref().map(|c| binding.position(c).and_then(|p| u64_position(&p))).transpose()?;
    let prefixes: Vec<(&Partition, Vec<u8>)> =
        targets.iter().map(|t| (&caller.part, target_prefix(&caller.part, family, t))).collect();
    let reply = page(&snap, TARGET, &prefixes, (after, limit), Shape { private, compact, newest }, &binding)?;
    let empty = after.is_none() && reply["events"].as_array().is_some_and(Vec::is_empty);
    if let Some(seq) = forgot.filter(|_| empty) {
        return Ok(with_forget(&snap, &caller.part, reply, seq)?);
    }
    let unknown = unknown.filter(|_| empty);
    if unknown.is_some() && event_names::scope_forgotten(&snap, &caller.part)? {
        return Ok(reply);
    }
    match unknown {
        None => Ok(reply),
        Some(Unknown::Note(message, named)) => {
            let mut details = notes_meant(&snap, &caller.part, &caller.agent, &named)?;
            let mut message = message_with(message, &details);
            // As an empty `note_list` does: the caller's other scopes where the key is.
            if let Some((there, hint)) =
                history_elsewhere(&snap, caller, readable.as_deref(), &named, (unnamed, private))?
            {
                message = format!("{message}; {hint}");
                details.push(json!({ "elsewhere": there }));
            }
            Err(refuse("NOT_FOUND", message, details))
        }
        Some(Unknown::Fact(message, ends, between)) => {
            // As `forget {fact}` answers a miss: the names each unknown end may mean, or what
            // joins two stored ends.
            let mut meant: Vec<String> = Vec::new();
            for end in &ends {
                crate::knowledge::add_suggestions(
                    &mut meant,
                    crate::knowledge::api::names_meant(store, &snap, caller, end)?,
                );
            }
            let names = meant.into_iter().map(|name| json!({ "did_you_mean": name }));
            let details = names.chain(between.iter().map(Between::detail)).collect();
            Err(refuse("NOT_FOUND", facts_between::message(message, &between), details))
        }
        Some(Unknown::Subject(subject)) => {
            // As `forget {subject}` answers a miss: the names of this partition that were meant.
            let meant = crate::knowledge::api::names_meant(store, &snap, caller, &subject)?;
            let details = meant.into_iter().map(|name| json!({ "did_you_mean": name })).collect();
            Err(refuse("NOT_FOUND", format!("no entity is named {subject:?}"), details))
        }
    }
}

/// `history {key}`: the events of one note. Sent without `visibility` and `taskId`, the key names
/// its user note; when other notes the caller may name stand at that key too (a task's, its own
/// agent note), which one is meant is the caller's to say, so the first page is refused naming
/// each (found by a review: the user note's events came back alone, as if the key had no other
/// note). A later page goes on with the note its cursor was bound to.
fn note_named(
    snap: &Snapshot,
    caller: &Caller,
    key: &str,
    (visibility, task_id): (Option<&str>, Option<&str>),
    (private, first_page): (bool, bool),
) -> Outcome<Named> {
    let named = Visibility::named(visibility, task_id)?;
    let identity = Identity::named(key, named, task_id, &caller.agent)?;
    let unnamed = visibility.is_none() && task_id.is_none();
    if unnamed && first_page && snap.get(CUR, &identity.cur_key(&caller.part))?.is_some() {
        let others = same_key(snap, &caller.part, (&caller.agent, private), &identity)?;
        if !others.is_empty() {
            return Err(ambiguous(key, others));
        }
    }
    // A note keeps an event per version while it exists, and a forgotten one leaves its
    // marker (a hash): with neither, no note of that key was ever readable here.
    let marker = match snap.get(FORGOTTEN, &marker_key(&caller.part, &identity))? {
        Some(m) => Some(m),
        None => snap.get(FORGOTTEN, &identity.cur_key(&caller.part))?,
    };
    let message = format!("no note {key:?} with {} visibility is stored", named.as_str());
    let targets = vec![identity.encode()];
    let forgot = marker.as_deref().and_then(|m| <[u8; 8]>::try_from(m).ok()).map(u64::from_be_bytes);
    let unknown = marker.is_none().then_some(Unknown::Note(message, identity));
    Ok(Named { family: "note", targets, unknown, forgot })
}

/// The empty first page of a forgotten note's history with `forgotten: {agent, at}`: who forgot
/// it and when, from the forget's event (kept; it names no key). Found by QA: the bare empty
/// page read as "never changed", though the note had fifty versions until it was forgotten.
fn with_forget(snap: &Snapshot, part: &Partition, mut reply: Value, seq: u64) -> Result<Value> {
    if let Some(bytes) = snap.get(crate::history::EVENT, &part.key(&[&seq.to_be_bytes()]))? {
        let event: Event =
            serde_json::from_slice(&bytes).map_err(|e| Error::corrupt(None, format!("event {seq}: {e}")))?;
        reply["forgotten"] = json!({ "agent": event.agent, "at": iso_ms(event.at) });
    }
    Ok(reply)
}

/// The refusal of `history {key}` where the key names the user note and `others`: a
/// `VALIDATION_ERROR` naming `visibility`, with each note as `{field, note}` to send back.
fn ambiguous(key: &str, others: Vec<Value>) -> super::Fail {
    let notes: Vec<Value> = std::iter::once(json!({ "key": key, "visibility": "user" })).chain(others).collect();
    let listed: Vec<String> = notes.iter().map(described).collect();
    let message = format!(
        "visibility: key {key:?} names {} notes ({}); send the visibility (and taskId) of the one meant",
        notes.len(),
        listed.join(", ")
    );
    let details = notes.into_iter().map(|note| json!({ "field": "visibility", "note": note })).collect();
    refuse("VALIDATION_ERROR", message, details)
}

/// `history {subject}`: the entity's events under its stored name (a spelling that differs only in
/// case, accents or spacing names it), and under the spelling asked for (by writers before that).
fn subject_named(snap: &Snapshot, caller: &Caller, subject: String) -> Outcome<Named> {
    if subject.is_empty() {
        return Err(invalid("subject", "must not be empty"));
    }
    let stored = event_names::entity(snap, &caller.part, &subject)?;
    let unknown = (stored.is_none() && !event_names::entity_forgotten(snap, &caller.part, &subject)?)
        .then(|| Unknown::Subject(subject.clone()));
    let mut targets = vec![subject];
    targets.extend(stored.filter(|s| *s != targets[0]));
    Ok(Named { family: "entity", targets, unknown, forgot: None })
}

/// `history {fact}`: `{from, to, type}` in every reading of the fact, or `{id}` as recall and
/// relate hand it out. A fact neither stored nor forgotten, with no event filed under it, was
/// never stored: as `forget {fact}` answers it, that is not found.
fn fact_named(snap: &Snapshot, caller: &Caller, mut fact: Fields) -> Outcome<Named> {
    if let Some(id) = fact.string("id")? {
        fact.finish()?;
        let id: u64 = id.parse().map_err(|_| invalid("fact.id", "must be an id as a decimal string"))?;
        let stored = event_names::fact_by_id(snap, &caller.part, id)?;
        let unknown = (stored.is_none() && !event_names::fact_id_forgotten(snap, &caller.part, id)?)
            .then(|| Unknown::Fact(format!("no fact has id {id}"), Vec::new(), Vec::new()));
        return Ok(Named { family: "fact", targets: stored.unwrap_or_default(), unknown, forgot: None });
    }
    let mut part = |name: &str| -> Outcome<String> {
        let v = fact.string(name)?.ok_or_else(|| invalid(&format!("fact.{name}"), "is required (or give fact.id)"))?;
        if v.is_empty() || v.contains('\0') {
            return Err(invalid(&format!("fact.{name}"), "must be non-empty and hold no NUL"));
        }
        Ok(v)
    };
    let (from, to, rel) = (part("from")?, part("to")?, part("type")?);
    fact.finish()?;
    let named = event_names::fact(snap, &caller.part, (&from, &rel, &to))?;
    let unknown = if named.known {
        None
    } else {
        let mut ends = Vec::new();
        for end in [&from, &to] {
            if event_names::entity(snap, &caller.part, end)?.is_none() {
                ends.push(end.clone());
            }
        }
        let between =
            if ends.is_empty() { event_names::facts_between(snap, &caller.part, (&from, &to))? } else { Vec::new() };
        Some(Unknown::Fact(format!("no fact {from:?} -[{rel}]-> {to:?} is stored"), ends, between))
    };
    let mut targets = vec![format!("{from}\0{rel}\0{to}")];
    for stored in named.targets {
        if !targets.contains(&stored) {
            targets.push(stored);
        }
    }
    Ok(Named { family: "fact", targets, unknown, forgot: None })
}

/// Runs `audit` for `caller`: its own events, oldest first.
pub(crate) fn audit(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let mut f = Fields::parse(body)?;
    let private = read_private(&mut f)?;
    let limit = limit(&mut f)?;
    let cursor = f.string("cursor")?;
    let newest = f.bool("newestFirst")?.unwrap_or(false);
    f.finish()?;
    let binding = Binding::new("audit", caller, &bound_to(json!({ "private": private }), newest));
    let after = cursor.as_deref().map(|c| binding.position(c).and_then(|p| u64_position(&p))).transpose()?;
    let snap = store.snapshot()?;
    // The events of a scope forgotten whole are kept in its retired partition (`forget::retire`),
    // in the same sequence as the scope's own.
    let retired = caller.part.retired();
    let prefixes = [&caller.part, &retired].map(|part| (part, agent_prefix(part, &caller.agent)));
    page(&snap, AGENT, &prefixes, (after, limit), Shape { private, compact: false, newest }, &binding)
}

/// How a page renders its events: with private values (`allowPrivate && includePrivate`), and
/// without `before`/`after` (`compact`); and in which order (`newestFirst`).
#[derive(Clone, Copy)]
struct Shape {
    private: bool,
    compact: bool,
    newest: bool,
}

/// What a cursor is bound to, with the order when it is newest first: a cursor of one order is
/// refused in the other (its position is a bound the other side of the page), and the cursors
/// of oldest-first pages stay those given before the order could be chosen.
fn bound_to(mut binding: Value, newest: bool) -> Value {
    if newest {
        binding["newestFirst"] = json!(true);
    }
    binding
}

/// A page ends early, before the event that would take its events' JSON past this many bytes
/// (about 8,000 tokens), though it always holds one: found by an audit, twenty versions of a
/// 3 KB note made a default page of 190 KB, and a note value may be 64 KiB. `nextCursor`
/// continues after the last event returned.
pub(crate) const PAGE_BYTES: usize = 32 * 1024;

/// `allowPrivate && includePrivate`.
fn read_private(f: &mut Fields) -> Outcome<bool> {
    let allow = f.bool("allowPrivate")?.unwrap_or(false);
    Ok(f.bool("includePrivate")?.unwrap_or(false) && allow)
}

/// One page of the index `tree` under `prefixes` (keys end in a sequence number), each in the
/// partition whose events it indexes, past the cursor's `at`: up to `limit` events under any of
/// them, in sequence order or newest first (`shape.newest`; the partitions given share one
/// sequence), fewer once past `PAGE_BYTES`.
fn page(
    snap: &Snapshot,
    tree: &str,
    prefixes: &[(&Partition, Vec<u8>)],
    (at, limit): (Option<u64>, usize),
    shape: Shape,
    binding: &Binding,
) -> Outcome<Value> {
    let mut seqs = if shape.newest {
        event_order::newest(snap, tree, prefixes, at, limit)?
    } else {
        event_order::oldest(snap, tree, prefixes, at, limit)?
    };
    let mut more = seqs.len() > limit;
    seqs.truncate(limit);
    let mut events = Vec::with_capacity(seqs.len());
    let mut bytes = 0;
    let mut last = None;
    for (seq, part) in &seqs {
        let event = indexed_event(snap, part, *seq)?;
        let redacted = redaction(snap, part, &event, shape.private)?;
        let rendered = render(&event, redacted, shape.compact);
        let size = serde_json::to_vec(&rendered).map_or(0, |v| v.len());
        if !events.is_empty() && bytes + size > PAGE_BYTES {
            more = true;
            break;
        }
        bytes += size;
        events.push(rendered);
        last = Some(*seq);
    }
    let next = more.then(|| last.map(|s| binding.cursor(&s.to_be_bytes()))).flatten();
    Ok(json!({ "events": events, "nextCursor": next }))
}

/// Why an event's values are withheld from this reader, if they are.
fn redaction(snap: &Snapshot, part: &Partition, event: &Event, private: bool) -> Result<Option<&'static str>> {
    if event.family != "note" {
        return Ok(None);
    }
    // Only markers of that older layout are keyed by the identity (the event's target).
    if let Some(forgot) = snap.get(FORGOTTEN, &part.key(&[event.target.as_bytes()]))? {
        let forgot = u64::from_be_bytes(
            forgot.as_slice().try_into().map_err(|_| Error::corrupt(None, "a forgotten-note marker is not 8 bytes"))?,
        );
        if event.seq < forgot {
            return Ok(Some("forgotten"));
        }
    }
    let was_private = |v: &Option<Value>| v.as_ref().is_some_and(|v| v["private"] == json!(true));
    if !private && (was_private(&event.before) || was_private(&event.after)) {
        return Ok(Some("private"));
    }
    Ok(None)
}

/// A write's input as the caller sent it: without what the node adds to every body
/// (`allowPrivate`, its private-notes policy).
fn without_node_fields(patch: &Value) -> Value {
    let mut patch = patch.clone();
    if let Some(fields) = patch.as_object_mut() {
        fields.remove("allowPrivate");
    }
    patch
}

/// An event as replies show it (DESIGN.md §2): ids as strings, times in ISO 8601; `compact`
/// leaves out `before` and `after` (the states, up to 64 KiB each for a note), keeping the op and
/// `patch`, the input as sent, which says what the write changed.
fn render(event: &Event, redacted: Option<&str>, compact: bool) -> Value {
    let mut out = json!({
        "seq": event.seq.to_string(),
        "family": event.family,
        "target": event_target::render(&event.family, &event.target),
        "op": event.op,
        "agent": event.agent,
        "at": iso_ms(event.at),
        "before": event.before.as_ref().map(|v| event_view::payload(&event.family, v)),
        "after": event.after.as_ref().map(|v| event_view::payload(&event.family, v)),
        "patch": event.patch.as_ref().map(without_node_fields),
    });
    if let Some(why) = redacted {
        out["before"] = Value::Null;
        out["after"] = Value::Null;
        out["patch"] = Value::Null;
        out["redacted"] = json!(why);
    }
    if compact && let Some(fields) = out.as_object_mut() {
        fields.remove("before");
        fields.remove("after");
    }
    out
}
