//! `note_write`: validate, then in one write transaction: the idempotency check, the version check
//! (`expectedVersion`), the new version, and its event. The store has one writer thread, so the
//! check and the write it guards are atomic: of N writers that send the same `expectedVersion`,
//! exactly one wins and the others get `VERSION_CONFLICT` with the current version.

use super::fields::{Fields, written_key, written_task};
use super::idempotency::Idempotency;
use super::idempotency_window::prune;
use super::index::Postings;
use super::notes_meant::{message_with, notes_meant};
use super::record::{CUR, Identity, KINDS, MAX_VALUE_BYTES, NoteRecord, VER, Visibility};
use super::same_key::{created_beside, same_key};
use super::{Fail, Outcome, idempotency_upgrade, index, invalid, merge, refuse};
use crate::error::Result;
use crate::history::{self, Change};
use crate::knowledge::api::Caller;
use crate::store::Store;
use crate::time::iso_ms;
use crate::write::WriteTxn;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The confidence bases a note may cite.
pub const BASES: [&str; 3] = ["user_asserted", "agent_inferred", "source_supported"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Replace,
    Merge,
}

/// A validated write.
struct Request {
    id: Identity,
    value: Value,
    kind: Option<String>,
    private: Option<bool>,
    /// The node's policy lets private notes be read (`allowPrivate`).
    allow_private: bool,
    mode: Mode,
    expected: Option<u64>,
    idempotency: Option<Idempotency>,
    confidence: Option<(Option<f64>, Option<String>)>,
    /// `userConfirmed: true` was sent.
    confirmed: bool,
    input: Value,
}

fn parse(caller: &Caller, body: &[u8]) -> Outcome<Request> {
    let mut f = Fields::parse(body)?;
    let input = f.as_value();
    let key = f.name("key")?.ok_or_else(|| invalid("key", "is required"))?;
    written_key(&key)?;
    let value = match f.raw("value") {
        None => return Err(invalid("value", "is required")),
        Some(Value::Null) => return Err(invalid("value", "must not be null (note_forget removes a note)")),
        Some(v) => v,
    };
    let size = serde_json::to_vec(&value).expect("JSON serialises").len();
    if size > MAX_VALUE_BYTES {
        return Err(invalid("value", format_args!("is {size} bytes serialised; at most {MAX_VALUE_BYTES}")));
    }
    if let Err(e) = crate::json_depth::check("value", &value) {
        return Err(invalid("value", e.trim_start_matches("value: ")));
    }
    let kind = f.string("kind")?;
    if let Some(k) = &kind
        && !KINDS.contains(&k.as_str())
    {
        return Err(invalid("kind", format_args!("must be one of {}, got {k:?}", KINDS.join(", "))));
    }
    let task_id = f.name("taskId")?;
    if let Some(t) = &task_id {
        written_task("taskId", t)?;
    }
    let visibility = Visibility::named(f.string("visibility")?.as_deref(), task_id.as_deref())?;
    let id = Identity::named(&key, visibility, task_id.as_deref(), &caller.agent)?;
    let allow_private = f.bool("allowPrivate")?.unwrap_or(false);
    let private = f.bool("private")?;
    if private == Some(true) && !allow_private {
        // The operator's remedy is named, as the FORBIDDEN of a write to a stored private note does.
        return Err(invalid(
            "private",
            "private notes are not allowed by this node's policy; write it without private, or start the node with CAIRN_ALLOW_PRIVATE=1",
        ));
    }
    let mode = match f.string("writeMode")?.as_deref() {
        None | Some("replace") => Mode::Replace,
        Some("merge") => Mode::Merge,
        Some(other) => return Err(invalid("writeMode", format_args!("must be replace or merge, got {other:?}"))),
    };
    let expected = f.u64("expectedVersion")?;
    let idempotency = Idempotency::field(&mut f)?;
    let confidence = f.f64("confidence")?;
    let basis = f.string("confidenceBasis")?;
    let confirmed = f.bool("userConfirmed")?.unwrap_or(false);
    f.finish()?;
    if let Some(c) = confidence {
        if !(0.0..=1.0).contains(&c) {
            return Err(invalid("confidence", format_args!("must be between 0 and 1, got {c}")));
        }
        if basis.is_none() {
            return Err(invalid(
                "confidenceBasis",
                format_args!("is required with confidence: one of {}", BASES.join(", ")),
            ));
        }
    }
    if let Some(b) = &basis {
        if !BASES.contains(&b.as_str()) {
            return Err(invalid("confidenceBasis", format_args!("must be one of {}, got {b:?}", BASES.join(", "))));
        }
        if b == "user_asserted" && !confirmed {
            return Err(invalid("userConfirmed", "must be true for confidenceBasis user_asserted"));
        }
    }
    let understood = json!({
        "key": id.key, "visibility": id.visibility.as_str(), "taskId": id.task_id(), "value": value, "kind": kind,
        "private": private, "writeMode": mode == Mode::Merge, "expectedVersion": expected,
        "confidence": confidence, "confidenceBasis": basis, "userConfirmed": confirmed,
    });
    let idempotency = idempotency.map(|k| Idempotency::new(k, &understood, &input));
    let confidence = (confidence.is_some() || basis.is_some()).then_some((confidence, basis));
    Ok(Request { id, value, kind, private, allow_private, mode, expected, idempotency, confidence, confirmed, input })
}

/// Runs `note_write` for `caller`.
pub(crate) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let req = parse(caller, body)?;
    let prepared = prepare(store, caller, &req)?;
    let caller = caller.clone();
    let window = store.idempotency_ms();
    store.write(move |tx| apply(tx, &caller, &req, prepared, window))?.0
}

/// Runs `note_write` for `caller` without waiting for it: the request is parsed and worked out
/// here, then queued for the writer; `done` gets the outcome once the write is durable (on the
/// store's syncer thread), or at once when the request is refused before it reaches the writer.
pub(crate) fn submit(store: &Store, caller: &Caller, body: &[u8], done: Box<dyn FnOnce(Outcome<Value>) + Send>) {
    let req = match parse(caller, body) {
        Ok(req) => req,
        Err(fail) => return done(Err(fail)),
    };
    let prepared = match prepare(store, caller, &req) {
        Ok(prepared) => prepared,
        Err(e) => return done(Err(e.into())),
    };
    let caller = caller.clone();
    let window = store.idempotency_ms();
    // The writer leaves the outcome here; `done` reads it once the group is durable.
    let slot: Arc<Mutex<Option<Outcome<Value>>>> = Arc::new(Mutex::new(None));
    let out = slot.clone();
    store.submit_fn(
        Box::new(move |tx| {
            let outcome = apply(tx, &caller, &req, prepared, window)?;
            *out.lock().expect("outcome slot") = Some(outcome);
            Ok(())
        }),
        Box::new(move |result| {
            done(match result {
                Ok(_) => slot.lock().expect("outcome slot").take().expect("a committed write left its outcome"),
                Err(e) => Err(e.into()),
            });
        }),
    );
}

/// The costly part of a write worked out on the caller's thread from the note as it stands
/// before the write: its postings, the value the write gives it, that value's postings and, for
/// a note that exists, the new version with its encoding, event and receipt. The store has one
/// writer thread; it uses these if the note is still as read (the usual case), else works them
/// out again itself.
struct Prepared {
    /// The note's stored bytes as read (`None`: no such note).
    stored: Option<Vec<u8>>,
    /// `stored`, decoded.
    prev: Option<NoteRecord>,
    old: Option<Postings>,
    value: Value,
    new: Postings,
    /// The write against `prev`, when `prev` exists and the write passes its checks.
    built: Option<Built>,
    /// When there is no note: the notes the request may have meant (`notes_meant`) if it has no
    /// `kind`, else the other notes at its key (`same_key`), named by the refusal or the receipt.
    others: Vec<Value>,
}

fn prepare(store: &Store, caller: &Caller, req: &Request) -> Result<Prepared> {
    let snap = store.snapshot()?;
    let stored = snap.get(CUR, &req.id.cur_key(&caller.part))?;
    let prev = stored.as_deref().map(NoteRecord::decode).transpose()?;
    let others = match (&prev, &req.kind) {
        (Some(_), _) => Vec::new(),
        (None, None) => notes_meant(&snap, &caller.part, &caller.agent, &req.id)?,
        (None, Some(_)) => same_key(&snap, &caller.part, (&caller.agent, false), &req.id)?,
    };
    let value = new_value(req, prev.as_ref());
    let old = prev.as_ref().map(|p| Postings::of(&p.key, p.task_id(), &p.value));
    let new = Postings::of(&req.id.key, req.id.task_id(), &value);
    let built = prev.as_ref().and_then(|p| {
        let kind = check(req, Some(p), &value).ok()?;
        Some(compose(req, caller, Some(p), &value, kind, p.id))
    });
    Ok(Prepared { stored, prev, old, value, new, built, others })
}

/// A write worked out against one state of its note: the new version, its encoding, its event
/// and the receipt; or, when the write would leave the note as it is (`unchanged`), only the
/// receipt.
struct Built {
    note: NoteRecord,
    /// `note` encoded, as `CUR` and `VER` hold it.
    bytes: Vec<u8>,
    /// `None`: the write changes nothing of the note, so it writes no version and no event.
    event: Option<history::PreparedEvent>,
    receipt: Value,
}

/// The value a write gives a note that holds `prev`.
fn new_value(req: &Request, prev: Option<&NoteRecord>) -> Value {
    match (req.mode, prev) {
        (Mode::Merge, Some(p)) => merge(&p.value, &req.value),
        (Mode::Merge, None) => merge(&Value::Null, &req.value),
        (Mode::Replace, _) => req.value.clone(),
    }
}

/// The refusals of a write that would give the note now holding `prev` (none: absent) `value`;
/// when there is none, the kind the new version has.
fn check(req: &Request, prev: Option<&NoteRecord>, value: &Value) -> Outcome<String> {
    // A private note under a policy that lets no one read it: a write would replace (or merge
    // into) what its writer cannot see, and a version conflict would tell its version (found by
    // an audit). Refused before either, saying only that the note is private.
    if prev.is_some_and(|p| p.private) && !req.allow_private {
        let remedy = "forget it (memory_forget {note}), or start the node with CAIRN_ALLOW_PRIVATE=1";
        return Err(refuse(
            "FORBIDDEN",
            format!(
                "key: the note at this key is private, and this node's policy does not allow private notes; {remedy}"
            ),
            vec![json!({ "field": "key", "message": format!("holds a private note; {remedy}") })],
        ));
    }
    let current = prev.map_or(0, |p| p.version);
    if let Some(expected) = req.expected
        && expected != current
    {
        // Who wrote the current version and what to do: told only the number, a model retried
        // with it unread and overwrote the other agent's write (found playing two agents).
        let (now, detail) = match prev {
            // "at version 0" read as a note at its first version: say there is none at this
            // identity (a task note left without its taskId is the usual cause).
            None => {
                let id = &req.id;
                let now =
                    format!("no note {:?} with {} visibility is stored (version 0)", id.key, id.visibility.as_str());
                (now, json!({ "currentVersion": 0 }))
            }
            Some(p) => {
                let at = iso_ms(p.updated_at);
                let now = format!(
                    "the note is at version {current}, written by {:?} at {at}: read it (memory_note_list) and apply your \
                     change to what it holds now, then send expectedVersion {current}",
                    p.agent
                );
                (now, json!({ "currentVersion": current, "agent": p.agent, "updatedAt": at }))
            }
        };
        return Err(refuse("VERSION_CONFLICT", format!("expectedVersion {expected} but {now}"), vec![detail]));
    }
    let Some(kind) = req.kind.clone().or_else(|| prev.map(|p| p.kind.clone())) else {
        return Err(invalid("kind", format_args!("is required when creating a note: one of {}", KINDS.join(", "))));
    };
    let size = serde_json::to_vec(value).expect("JSON serialises").len();
    if size > MAX_VALUE_BYTES {
        return Err(invalid("value", format_args!("the merged value is {size} bytes; at most {MAX_VALUE_BYTES}")));
    }
    Ok(kind)
}

/// The new version (note id `id`, kind `kind`, as `check` allowed) of the note holding `prev`.
fn compose(req: &Request, caller: &Caller, prev: Option<&NoteRecord>, value: &Value, kind: String, id: u64) -> Built {
    // Confidence describes the value: a replace without it clears it, a merge keeps it, except a
    // `user_asserted` one when the merge changes the value unconfirmed: the user never asserted
    // what it adds, and that basis needs `userConfirmed`.
    // A merge patch replaces whole unless both it and the note are objects (RFC 7386): it is said
    // and kept as the replace it was (found by a review: `{done: [..]}` onto `[..]` said "merged").
    let mode = match prev {
        Some(p) if req.mode == Mode::Merge && !(p.value.is_object() && req.value.is_object()) => Mode::Replace,
        _ => req.mode,
    };
    let (confidence, confidence_basis) = match (&req.confidence, mode, prev) {
        (Some((c, b)), _, _) => (*c, b.clone()),
        (None, Mode::Merge, Some(p))
            if p.confidence_basis.as_deref() == Some("user_asserted") && !req.confirmed && &p.value != value =>
        {
            (None, None)
        }
        (None, Mode::Merge, Some(p)) => (p.confidence, p.confidence_basis.clone()),
        (None, _, _) => (None, None),
    };
    let (evolution, op) = match (prev, mode) {
        (None, _) => ("created", "create"),
        (Some(_), Mode::Replace) => ("replaced", "replace"),
        (Some(_), Mode::Merge) => ("merged", "merge"),
    };
    let current = prev.map_or(0, |p| p.version);
    let mut note = NoteRecord {
        id,
        key: req.id.key.clone(),
        visibility: req.id.visibility.as_str().to_owned(),
        owner: req.id.owner.clone(),
        value: value.clone(),
        kind,
        private: req.private.or(prev.map(|p| p.private)).unwrap_or(false),
        version: current + 1,
        supersedes: prev.map(|p| p.version),
        confidence,
        confidence_basis,
        agent: caller.agent.clone(),
        created_at: prev.map_or(caller.now, |p| p.created_at),
        updated_at: caller.now,
    };
    // A write that leaves the note as it is (same value, kind, privacy and confidence: its
    // identity is the same by construction) writes nothing: a new version would make every other
    // agent's `expectedVersion` stale for no change, and history would grow by empty events.
    let unchanged = prev.filter(|p| same_content(p, &note));
    if let Some(p) = unchanged {
        note = p.clone();
    }
    let event = unchanged.is_none().then(|| {
        let target = req.id.encode();
        history::prepare(
            caller,
            Change {
                family: "note",
                target: &target,
                op,
                before: prev.map(NoteRecord::render),
                after: Some(note.render()),
                patch: Some(req.input.clone()),
            },
        )
    });
    let mut receipt = json!({
        "id": id.to_string(),
        "key": note.key,
        "version": note.version,
        "evolution": evolution,
        "supersedes": note.supersedes,
        "visibility": note.visibility,
    });
    if unchanged.is_some() {
        receipt["unchanged"] = json!(true);
    }
    if let Some(t) = req.id.task_id() {
        receipt["taskId"] = json!(t);
    }
    // A plain write keeps a private note private (`private` omitted keeps the flag): the writer
    // is told, since the note it wrote is hidden from its reads without `includePrivate`.
    if note.private {
        receipt["private"] = json!(true);
    }
    Built { bytes: note.encode(), note, event, receipt }
}

/// Whether `note` holds what `prev` does: a version between them would change nothing a reader sees.
fn same_content(prev: &NoteRecord, note: &NoteRecord) -> bool {
    prev.value == note.value
        && prev.kind == note.kind
        && prev.private == note.private
        && prev.confidence == note.confidence
        && prev.confidence_basis == note.confidence_basis
}

/// The write itself; refuses before it changes anything. `window`: how long idempotency records
/// last (ms).
fn apply(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    req: &Request,
    mut prepared: Prepared,
    window: i64,
) -> Result<Outcome<Value>> {
    let part = &caller.part;
    if let Some(idem) = &req.idempotency
        && let Some(replayed) = idem.replay(tx, caller, window)?
    {
        return Ok(replayed);
    }
    let cur_key = req.id.cur_key(part);
    let stored = tx.get(CUR, &cur_key)?;
    let others = std::mem::take(&mut prepared.others);
    // The note as `prepare` read it (the usual case), or as another write has left it since.
    let (prev, value, old_postings, new_postings, built) = if stored == prepared.stored {
        (prepared.prev, prepared.value, prepared.old, prepared.new, prepared.built)
    } else {
        let prev = stored.as_deref().map(NoteRecord::decode).transpose()?;
        let value = new_value(req, prev.as_ref());
        let new = Postings::of(&req.id.key, req.id.task_id(), &value);
        let old = prev.as_ref().map(|p| Postings::of(&p.key, p.task_id(), &p.value));
        (prev, value, old, new, None)
    };
    let mut built = if let Some(built) = built {
        part.register(tx)?;
        built
    } else {
        let kind = match check(req, prev.as_ref(), &value) {
            Ok(kind) => kind,
            Err(Fail::Refused(mut refusal)) if prev.is_none() && req.kind.is_none() && !others.is_empty() => {
                // "kind is required" to a write meant as an update: name the notes it may mean.
                if refusal.details.first().is_some_and(|d| d["field"] == "kind") {
                    refusal.message = message_with(refusal.message, &others);
                    refusal.details = others;
                }
                return Ok(Err(Fail::Refused(refusal)));
            }
            Err(refusal) => return Ok(Err(refusal)),
        };
        // Nothing is written above this line.
        part.register(tx)?;
        let id = match &prev {
            Some(p) => p.id,
            None => crate::knowledge::next_id(tx, part)?,
        };
        compose(req, caller, prev.as_ref(), &value, kind, id)
    };
    if prev.is_none() && !others.is_empty() {
        built.receipt["warnings"] = json!([created_beside(&req.id, &others)]);
    }
    prune(tx, part, caller.now, window)?;
    idempotency_upgrade::step(tx, caller.now)?;
    if let Some(event) = &built.event {
        let old = prev.as_ref().zip(old_postings.as_ref());
        index::replace(tx, part, old, (&built.note, &new_postings))?;
        tx.put(CUR, &cur_key, &built.bytes)?;
        tx.put(VER, &req.id.ver_key(part, built.note.version), &built.bytes)?;
        history::record_prepared(tx, caller, event)?;
    }
    if let Some(idem) = &req.idempotency {
        idem.remember(tx, caller, &built.receipt)?;
    }
    Ok(Ok(built.receipt))
}
