//! Notes in `memory_export` (`knowledge::export` walks; the rules of notes live here, the records
//! are cut in `exchange_windows.rs`, the import side is `import.rs`). A `note` record is one note
//! of the scope, whatever its visibility or task: its identity, its current version's fields, and
//! `versions`, every earlier stored version (oldest first, each with its own number, value, kind,
//! private flag, confidence, writer and times), so a copy keeps the note's history; a note too
//! large for one page is several such records, each over a run of its versions. A private note only when the export asks for
//! private notes (`allowPrivate && includePrivate`), else the header counts it as withheld; a
//! private earlier version of a note that is not private itself is left out of `versions` then,
//! and counted too. The record field readers below are shared with `import.rs` and
//! `handoff_exchange.rs`.

use super::record::{CUR, NoteRecord, VER, Visibility};
use crate::error::Result;
use crate::knowledge::{Partition, iso_ms, parse_iso_ms};
use crate::snapshot::Snapshot;
use serde_json::{Map, Value, json};

/// The note tree export walks (`part | identity` → current version).
pub(crate) const TREE: &str = CUR;

/// `k.import_map` kind byte of an imported note version: `part | 'n' | identity \0 | source id BE
/// | version BE` → empty.
pub(crate) const NOTE: u8 = b'n';

/// Whether `agent` (`None`: an admin, every agent) may see `note` for an export or import: an
/// agent-visibility note belongs to its owner alone (DESIGN.md §1).
pub(super) fn owned_by(note: &NoteRecord, agent: Option<&str>) -> bool {
    note.visibility() != Visibility::Agent || agent.is_none_or(|a| note.owner == a)
}

/// Whether an export for `agent` (private notes when `private`) carries `note`.
pub(super) fn given(note: &NoteRecord, private: bool, agent: Option<&str>) -> bool {
    (private || !note.private) && owned_by(note, agent)
}

/// Whether an export carries the stored current note `value` (as `record` decides, without
/// reading its versions): what tells a full page whether a record comes after it.
pub(crate) fn exported(value: &[u8], private: bool, agent: Option<&str>) -> Result<bool> {
    Ok(given(&NoteRecord::decode(value)?, private, agent))
}

/// The fields one version of a note holds (its identity aside), as export records name them.
pub(super) fn version_fields(note: &NoteRecord) -> Map<String, Value> {
    let mut r = Map::new();
    r.insert("value".into(), note.value.clone());
    // `kind` names the record; the note's own kind travels as `noteKind`.
    r.insert("noteKind".into(), json!(note.kind));
    r.insert("private".into(), json!(note.private));
    r.insert("version".into(), json!(note.version));
    r.insert("agent".into(), json!(note.agent));
    r.insert("createdAt".into(), json!(iso_ms(note.created_at)));
    r.insert("updatedAt".into(), json!(iso_ms(note.updated_at)));
    if let Some(c) = note.confidence {
        r.insert("confidence".into(), json!(c));
    }
    if let Some(b) = &note.confidence_basis {
        r.insert("confidenceBasis".into(), json!(b));
    }
    r
}

/// The stored versions of `note` before its current one, oldest first.
fn earlier_versions(snap: &Snapshot, part: &Partition, note: &NoteRecord) -> Result<Vec<NoteRecord>> {
    let mut out = Vec::new();
    for kv in snap.prefix(VER, &note.identity().versions_prefix(part))? {
        let v = NoteRecord::decode(&kv?.1)?;
        if v.version < note.version {
            out.push(v);
        }
    }
    Ok(out)
}

/// What an export without private reads leaves out of `part` (for `agent`; another agent's notes
/// are not the reader's to count): private notes, and private earlier versions of the notes it
/// carries.
pub(crate) fn private_count(snap: &Snapshot, part: &Partition, agent: Option<&str>) -> Result<(u64, u64)> {
    let (mut notes, mut versions) = (0, 0);
    for kv in snap.prefix(CUR, part.prefix())? {
        let note = NoteRecord::decode(&kv?.1)?;
        if !owned_by(&note, agent) {
            continue;
        }
        if note.private {
            notes += 1;
        } else {
            versions += earlier_versions(snap, part, &note)?.iter().filter(|v| v.private).count() as u64;
        }
    }
    Ok((notes, versions))
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
