//! Notes in `memory_export` / `memory_import` (`knowledge::export` and `knowledge::import` walk
//! and dispatch; the rules of notes live here). A `note` record is the current version of one
//! note of the scope, whatever its visibility or task; a private note only when the export asks
//! for private notes (`allowPrivate && includePrivate`), else the header counts it as withheld.
//!
//! Import matches a note by its identity (`key`, `visibility`, and the task id or owning agent).
//! A note that is not here is created with the exported version number and times, so an export
//! of the copy reads as the source. A note that holds the same content (value, kind, private,
//! confidence) is `unchanged`, and so is one that a previous import already brought this exact
//! exported version to (the copy has moved on since: an old page never rolls it back). Any other
//! difference becomes the next version of the target's note (versions continue the target's:
//! `expectedVersion` callers never see a number go back), stamped with the import time. Every
//! note stored appends a `note` event with op `import`, before and after. Private notes are
//! stored private whatever the policy: reads enforce it.

use super::index::{self, Postings};
use super::record::{CUR, Identity, KINDS, MAX_VALUE_BYTES, NoteRecord, VER, Visibility, check_key};
use super::write::BASES;
use crate::error::Result;
use crate::history::{self, Change};
use crate::knowledge::api::Caller;
use crate::knowledge::{Imported, Partition, iso_ms, parse_iso_ms};
use crate::snapshot::Snapshot;
use crate::write::WriteTxn;
use serde_json::{Map, Value, json};

/// The note tree export walks (`part | identity` → current version).
pub(crate) const TREE: &str = CUR;

/// `k.import_map` kind byte of an imported note version: `part | 'n' | identity \0 | source id BE
/// | version BE` → empty.
const NOTE: u8 = b'n';

/// Whether `agent` (`None`: an admin, every agent) may see `note` for an export or import: an
/// agent-visibility note belongs to its owner alone (DESIGN.md §1).
fn owned_by(note: &NoteRecord, agent: Option<&str>) -> bool {
    note.visibility() != Visibility::Agent || agent.is_none_or(|a| note.owner == a)
}

/// The export record of a stored current note; `None` for a private note not asked for, or an
/// agent note of an agent other than `agent`.
pub(crate) fn record(value: &[u8], private: bool, agent: Option<&str>) -> Result<Option<Value>> {
    let note = NoteRecord::decode(value)?;
    if (note.private && !private) || !owned_by(&note, agent) {
        return Ok(None);
    }
    let mut r = json!({
        "kind": "note",
        "id": note.id.to_string(),
        "key": note.key,
        "value": note.value,
        // `kind` names the record; the note's own kind travels as `noteKind`.
        "noteKind": note.kind,
        "visibility": note.visibility,
        "private": note.private,
        "version": note.version,
        "agent": note.agent,
        "createdAt": iso_ms(note.created_at),
        "updatedAt": iso_ms(note.updated_at),
    });
    if let Some(t) = note.task_id() {
        r["taskId"] = json!(t);
    }
    if note.visibility() == Visibility::Agent {
        r["owner"] = json!(note.owner);
    }
    if let Some(c) = note.confidence {
        r["confidence"] = json!(c);
    }
    if let Some(b) = &note.confidence_basis {
        r["confidenceBasis"] = json!(b);
    }
    Ok(Some(r))
}

/// How many current notes of `part` that `agent` may export are private (the header's count of
/// withheld notes; another agent's notes are not the reader's to count).
pub(crate) fn private_count(snap: &Snapshot, part: &Partition, agent: Option<&str>) -> Result<u64> {
    let mut n = 0;
    for kv in snap.prefix(CUR, part.prefix())? {
        let note = NoteRecord::decode(&kv?.1)?;
        if note.private && owned_by(&note, agent) {
            n += 1;
        }
    }
    Ok(n)
}

/// A record field problem, as a skip reason naming the field.
pub(super) type Field<T> = std::result::Result<T, String>;

pub(super) fn text<'a>(r: &'a Map<String, Value>, field: &str) -> Field<Option<&'a str>> {
    match r.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{field}: must be a string")),
    }
}

/// A task id or agent name: 1–256 bytes, no NUL (as `note_write` takes them).
pub(super) fn name(r: &Map<String, Value>, field: &str) -> Field<Option<String>> {
    match text(r, field)? {
        Some(s) if s.is_empty() || s.len() > 256 || s.contains('\0') => {
            Err(format!("{field}: must be 1..=256 bytes without NUL"))
        }
        other => Ok(other.map(str::to_owned)),
    }
}

pub(super) fn time(r: &Map<String, Value>, field: &str) -> Field<Option<i64>> {
    text(r, field)?.map(|s| parse_iso_ms(s).ok_or_else(|| format!("{field}: not an ISO 8601 UTC time"))).transpose()
}

/// The exported id of a record, if it carries one.
pub(super) fn source_id(r: &Map<String, Value>) -> Field<Option<u64>> {
    let bad = || "id: must be an id as a decimal string".to_owned();
    text(r, "id").map_err(|_| bad())?.map(|s| s.parse::<u64>().map_err(|_| bad())).transpose()
}

/// The note a record describes, as it would be created here (id 0: given when stored).
fn parse(r: &Map<String, Value>, agent: &str, now: i64) -> Field<NoteRecord> {
    let key = text(r, "key")?.ok_or("key: required")?;
    check_key(key).map_err(|_| format!("key: must be 1..={} bytes without NUL", super::record::MAX_KEY_BYTES))?;
    let value = match r.get("value") {
        None | Some(Value::Null) => return Err("value: required, not null".into()),
        Some(v) => v.clone(),
    };
    let size = serde_json::to_vec(&value).expect("JSON serialises").len();
    if size > MAX_VALUE_BYTES {
        return Err(format!("value: is {size} bytes serialised; at most {MAX_VALUE_BYTES}"));
    }
    let kind = text(r, "noteKind")?.ok_or("noteKind: required")?;
    if !KINDS.contains(&kind) {
        return Err(format!("noteKind: must be one of {}", KINDS.join(", ")));
    }
    let visibility = Visibility::parse(Some(text(r, "visibility")?.unwrap_or("user")))
        .map_err(|_| "visibility: must be user, task or agent".to_owned())?;
    let writer = name(r, "agent")?.unwrap_or_else(|| agent.to_owned());
    let owner = match visibility {
        Visibility::User => String::new(),
        Visibility::Task => name(r, "taskId")?.ok_or("taskId: required for a task note")?,
        // The owner of an agent note is the agent that wrote it, unless the record names it.
        Visibility::Agent => name(r, "owner")?.unwrap_or_else(|| writer.clone()),
    };
    let private = match r.get("private") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("private: must be true or false".into()),
    };
    let version = match r.get("version") {
        None | Some(Value::Null) => 1,
        Some(v) => v.as_u64().filter(|v| *v >= 1).ok_or("version: must be an integer from 1")?,
    };
    let confidence = match r.get("confidence") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_f64().filter(|c| (0.0..=1.0).contains(c)).ok_or("confidence: must be 0..=1")?),
    };
    let confidence_basis = text(r, "confidenceBasis")?.map(str::to_owned);
    if let Some(b) = &confidence_basis
        && !BASES.contains(&b.as_str())
    {
        return Err(format!("confidenceBasis: must be one of {}", BASES.join(", ")));
    }
    let created_at = time(r, "createdAt")?.unwrap_or(now);
    let updated_at = time(r, "updatedAt")?.unwrap_or(created_at);
    Ok(NoteRecord {
        id: 0,
        key: key.to_owned(),
        visibility: visibility.as_str().to_owned(),
        owner,
        value,
        kind: kind.to_owned(),
        private,
        version,
        supersedes: (version > 1).then(|| version - 1),
        confidence,
        confidence_basis,
        agent: writer,
        created_at,
        updated_at,
    })
}

/// Whether two versions say the same thing (identity aside).
fn same_content(a: &NoteRecord, b: &NoteRecord) -> bool {
    a.value == b.value
        && a.kind == b.kind
        && a.private == b.private
        && a.confidence == b.confidence
        && a.confidence_basis == b.confidence_basis
}

fn seen_key(part: &Partition, id: &Identity, source: u64, version: u64) -> Vec<u8> {
    part.key(&[&[NOTE], id.encode().as_bytes(), b"\0", &source.to_be_bytes(), &version.to_be_bytes()])
}

/// Imports one `note` record into `part` as `agent` at `now`; `all_agents` (an admin's import)
/// lets it write agent notes of other agents, which an agent's own import may not.
pub(crate) fn import(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    r: &Map<String, Value>,
    (agent, all_agents): (&str, bool),
    now: i64,
    out: &mut Imported,
) -> Result<Field<()>> {
    let mut note = match parse(r, agent, now) {
        Ok(n) => n,
        Err(e) => return Ok(Err(e)),
    };
    if !owned_by(&note, (!all_agents).then_some(agent)) {
        return Ok(Err("owner: an agent note is imported by its own agent only".into()));
    }
    let source = match source_id(r) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let identity = note.identity();
    let seen = source.map(|s| seen_key(part, &identity, s, note.version));
    let prev = tx.get(CUR, &identity.cur_key(part))?.as_deref().map(NoteRecord::decode).transpose()?;
    if let Some(p) = &prev {
        let imported_before = match &seen {
            Some(k) => tx.get(crate::knowledge::IMPORT_MAP, k)?.is_some(),
            None => false,
        };
        if same_content(p, &note) || imported_before {
            out.unchanged.notes += 1;
            return Ok(Ok(()));
        }
        // A new version of the note here: its number and time are the target's.
        note.id = p.id;
        note.version = p.version + 1;
        note.supersedes = Some(p.version);
        note.created_at = p.created_at;
        note.updated_at = now.max(p.updated_at);
    } else {
        note.id = crate::knowledge::next_id(tx)?;
    }
    part.register(tx)?;
    let old = prev.as_ref().map(|p| Postings::of(&p.key, &p.value));
    index::replace(tx, part, prev.as_ref().zip(old.as_ref()), (&note, &Postings::of(&note.key, &note.value)))?;
    let bytes = note.encode();
    tx.put(CUR, &identity.cur_key(part), &bytes)?;
    tx.put(VER, &identity.ver_key(part, note.version), &bytes)?;
    if let Some(k) = &seen {
        tx.put(crate::knowledge::IMPORT_MAP, k, &[])?;
    }
    let caller = Caller { part: part.clone(), agent: agent.to_owned(), now };
    let target = identity.encode();
    let change = Change {
        family: "note",
        target: &target,
        op: "import",
        before: prev.as_ref().map(NoteRecord::render),
        after: Some(note.render()),
        patch: None,
    };
    history::record(tx, &caller, change)?;
    out.imported.notes += 1;
    Ok(Ok(()))
}
