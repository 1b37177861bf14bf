//! Notes in `memory_import` (`knowledge::import` dispatches; the record is `exchange.rs`'s).
//! Import matches a note by its identity (`key`, `visibility`, and the task id or owning agent).
//! A note that is not here is created with every exported version, numbers and times kept, one
//! `note` event (op `import`) per version, stamped with the version's writer and time, so the
//! copy's history, `as_of` reads and export read as the source's. A note here whose versions are
//! the exported ones up to its current one takes the exported versions after it the same way
//! (a later export of the same source); one that holds them all is `unchanged`. A note here with
//! a history of its own compares the exported current version only: the same content (value,
//! kind, private, confidence), or an exact version a previous import already brought
//! (`k.import_map`: an old page never rolls the copy back), is `unchanged`; any other content
//! becomes the next version of the target's note (`expectedVersion` callers never see a number
//! go back), stamped with the import time and the importing agent. Private notes are stored
//! private whatever the policy: reads enforce it. An agent token brings back only versions its
//! own agent wrote (an admin token every agent's), and no version stamped later than now
//! (`knowledge::import_rules`). A note exported as several records (`exchange_windows.rs`) comes
//! back one record at a time: a record that `follows` version n continues a copy whose current
//! version is n, and is skipped naming the gap when the copy is not there yet (its pages come out
//! of order); the records of such a note never merge into a note with a history of its own but
//! by the last one, as a note of one record does.

use super::exchange::{Field, NOTE, name, owned_by, source_id, text, time};
use super::fields::{nfc, reason, written_key, written_task};
use super::index::{self, Postings};
use super::record::{CUR, Identity, KINDS, MAX_VALUE_BYTES, NoteRecord, VER, Visibility};
use super::write::BASES;
use crate::error::Result;
use crate::history::{self, Change};
use crate::knowledge::api::Caller;
use crate::knowledge::import_rules::{not_future, own_author};
use crate::knowledge::{Imported, Origin, Partition};
use crate::write::WriteTxn;
use serde_json::{Map, Value};

/// The note a record describes, as it would be created here (id 0: given when stored).
fn parse(r: &Map<String, Value>, agent: &str, now: i64) -> Field<NoteRecord> {
    // Spelled as `note_write` stores it (NFC), so an import meets the note a write would.
    let key = nfc(text(r, "key")?.ok_or("key: required")?.to_owned());
    written_key(&key).map_err(reason)?;
    let value = match r.get("value") {
        None | Some(Value::Null) => return Err("value: required, not null".into()),
        Some(v) => v.clone(),
    };
    let size = serde_json::to_vec(&value).expect("JSON serialises").len();
    if size > MAX_VALUE_BYTES {
        return Err(format!("value: is {size} bytes serialised; at most {MAX_VALUE_BYTES}"));
    }
    crate::json_depth::check("value", &value)?;
    let kind = text(r, "noteKind")?.ok_or("noteKind: required")?;
    if !KINDS.contains(&kind) {
        return Err(format!("noteKind: must be one of {}", KINDS.join(", ")));
    }
    // As `note_write` reads them: a task id alone means a task note, beside another visibility
    // it is refused (dropping it would widen who reads the note).
    let visibility = Visibility::named(text(r, "visibility")?, text(r, "taskId")?).map_err(reason)?;
    let writer = name(r, "agent")?.unwrap_or_else(|| agent.to_owned());
    let owner = match visibility {
        Visibility::User => String::new(),
        Visibility::Task => {
            let task = nfc(name(r, "taskId")?.ok_or("taskId: required for a task note")?);
            written_task("taskId", &task).map_err(reason)?;
            task
        }
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
    if confidence.is_some() && confidence_basis.is_none() {
        return Err(format!("confidenceBasis: is required with confidence: one of {}", BASES.join(", ")));
    }
    if let Some(b) = &confidence_basis
        && !BASES.contains(&b.as_str())
    {
        return Err(format!("confidenceBasis: must be one of {}", BASES.join(", ")));
    }
    let created_at = time(r, "createdAt")?.unwrap_or(now);
    let updated_at = time(r, "updatedAt")?.unwrap_or(created_at);
    not_future("createdAt", Some(created_at), now)?;
    not_future("updatedAt", Some(updated_at), now)?;
    Ok(NoteRecord {
        id: 0,
        key,
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

/// The fields of one version (identity aside): what an entry of `versions` may hold.
pub(crate) const VERSION_FIELDS: [&str; 9] =
    ["value", "noteKind", "private", "version", "agent", "createdAt", "updatedAt", "confidence", "confidenceBasis"];

/// Every version a record describes, oldest first: its `versions`, then its own fields (the
/// current version). Numbers must increase; each entry is checked as a record is, its field
/// named `versions[i].field`.
fn parse_versions(r: &Map<String, Value>, agent: &str, now: i64) -> Field<Vec<NoteRecord>> {
    let current = parse(r, agent, now)?;
    let list = match r.get("versions") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(list)) => list.as_slice(),
        Some(_) => return Err("versions: must be an array".into()),
    };
    let mut base = r.clone();
    for field in VERSION_FIELDS.iter().chain(&["versions"]) {
        base.remove(*field);
    }
    let mut out: Vec<NoteRecord> = Vec::with_capacity(list.len() + 1);
    for (i, entry) in list.iter().enumerate() {
        let Value::Object(fields) = entry else { return Err(format!("versions[{i}]: must be an object")) };
        if !fields.contains_key("version") {
            return Err(format!("versions[{i}].version: required"));
        }
        let mut m = base.clone();
        m.extend(
            fields.iter().filter(|(k, _)| VERSION_FIELDS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())),
        );
        let mut v = parse(&m, agent, now).map_err(|e| format!("versions[{i}].{e}"))?;
        // The identity is the record's: an agent note's owner does not follow each writer.
        v.owner.clone_from(&current.owner);
        if out.last().map_or(0, |p| p.version) >= v.version || v.version >= current.version {
            return Err(format!("versions[{i}].version: must increase, below the note's version {}", current.version));
        }
        out.push(v);
    }
    out.push(current);
    Ok(out)
}

/// How a record sits among the records of a note split over several (`exchange_windows.rs`):
/// `follows`, the last version of the record before it (none for the first, or a whole note);
/// `continued`, whether records after it hold later versions.
#[derive(Clone, Copy)]
struct Part {
    follows: Option<u64>,
    continued: bool,
}

/// The split markers of `r`, whose first version is `first`.
fn part_of(r: &Map<String, Value>, first: u64) -> Field<Part> {
    let continued = crate::knowledge::import_checks::continued(r)?;
    let follows = match r.get("follows") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|f| (1..first).contains(f))
                .ok_or_else(|| format!("follows: must be a version from 1, below the record's first ({first})"))?,
        ),
    };
    Ok(Part { follows, continued })
}

/// Whether two versions say the same thing (identity aside).
fn same_content(a: &NoteRecord, b: &NoteRecord) -> bool {
    a.value == b.value
        && a.kind == b.kind
        && a.private == b.private
        && a.confidence == b.confidence
        && a.confidence_basis == b.confidence_basis
}

/// Whether a stored version is the exported one: same content, writer and time.
fn same_version(here: &NoteRecord, exported: &NoteRecord) -> bool {
    same_content(here, exported) && here.agent == exported.agent && here.updated_at == exported.updated_at
}

/// `part | 'n' | identity \0 | origin (16 bytes; none for a record naming no origin) | source id
/// | version`: the source's ids keyed by where they were handed out (`knowledge::Origin`).
fn seen_key(part: &Partition, id: &Identity, (origin, source): (Origin, u64), version: u64) -> Vec<u8> {
    part.key(&[
        &[NOTE],
        id.encode().as_bytes(),
        b"\0",
        origin.key_bytes(),
        &source.to_be_bytes(),
        &version.to_be_bytes(),
    ])
}

/// Who and when an imported version's event is stamped with: its writer and time when the
/// version is stored as exported (`import` lets an agent token bring back its own versions
/// only, so the writer is the importer or the import is an admin's); else the importing agent
/// now.
fn stamp(caller: &Caller, version: &NoteRecord, faithful: bool) -> Caller {
    Caller {
        part: caller.part.clone(),
        agent: if faithful { version.agent.clone() } else { caller.agent.clone() },
        now: if faithful { version.updated_at } else { caller.now },
    }
}

/// Stores `versions` (ascending, numbered after `prev`'s) as note `id`, the last one current:
/// each version record, one `note` event (op `import`) per version with the previous version
/// as `before`, the import map entries of `source`, and the query index of the new current.
/// `faithful`: the versions keep their writer and time in their events (see `stamp`).
fn store_versions(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    id: u64,
    prev: Option<&NoteRecord>,
    versions: &[NoteRecord],
    source: Option<(Origin, u64)>,
    faithful: bool,
) -> Result<()> {
    let part = &caller.part;
    part.register(tx)?;
    let mut before = prev.cloned();
    for v in versions {
        let v = NoteRecord { id, ..v.clone() };
        let identity = v.identity();
        tx.put(VER, &identity.ver_key(part, v.version), &v.encode())?;
        if let Some(s) = source {
            tx.put(crate::knowledge::IMPORT_MAP, &seen_key(part, &identity, s, v.version), &[])?;
        }
        let target = identity.encode();
        let change = Change {
            family: "note",
            target: &target,
            op: "import",
            before: before.as_ref().map(NoteRecord::render),
            after: Some(v.render()),
            patch: None,
        };
        history::record(tx, &stamp(caller, &v, faithful), change)?;
        before = Some(v);
    }
    let current = before.expect("at least one version is stored");
    let old = prev.map(|p| Postings::of(&p.key, p.task_id(), &p.value));
    index::replace(
        tx,
        part,
        prev.zip(old.as_ref()),
        (&current, &Postings::of(&current.key, current.task_id(), &current.value)),
    )?;
    tx.put(CUR, &current.identity().cur_key(part), &current.encode())?;
    Ok(())
}

/// Imports one `note` record into `part` as `agent` at `now`; `all_agents` (an admin's import)
/// lets it write agent notes of other agents and versions other agents wrote, which an agent's
/// own import may not (`import_rules`). A version stamped later than `now` is refused.
pub(crate) fn import(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    r: &Map<String, Value>,
    (agent, all_agents): (&str, bool),
    now: i64,
    out: &mut Imported,
) -> Result<Field<()>> {
    let versions = match parse_versions(r, agent, now) {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    let split = match part_of(r, versions[0].version) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let current = versions.last().expect("the record's own version").clone();
    if !owned_by(&current, (!all_agents).then_some(agent)) {
        return Ok(Err("owner: an agent note is imported by its own agent only".into()));
    }
    // Each version names its writer; an agent's import may not sign another agent's words.
    let last = versions.len() - 1;
    for (i, v) in versions.iter().enumerate() {
        let field = if i == last { "agent".to_owned() } else { format!("versions[{i}].agent") };
        if let Err(e) = own_author(&field, Some(&v.agent), (agent, all_agents)) {
            return Ok(Err(e));
        }
    }
    let source = match (Origin::of_record(r), source_id(r)) {
        (Ok(o), Ok(s)) => s.map(|s| (o, s)),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    let caller = Caller { part: part.clone(), agent: agent.to_owned(), now };
    let identity = current.identity();
    let Some(p) = tx.get(CUR, &identity.cur_key(part))?.as_deref().map(NoteRecord::decode).transpose()? else {
        if let Some(f) = split.follows {
            return Ok(Err(gap(f, None)));
        }
        let id = crate::knowledge::next_id(tx, part)?;
        store_versions(tx, &caller, id, None, &versions, source, true)?;
        out.imported.notes += 1;
        return Ok(Ok(()));
    };
    merge(tx, &caller, (&p, &versions, split), source, out)
}

/// The skip reason of a record that continues version `follows` of a note the copy does not
/// hold up to there (`here`: the copy's current version, `None`: no copy).
fn gap(follows: u64, here: Option<u64>) -> String {
    let copy = here.map_or_else(|| "the note is not here".to_owned(), |v| format!("the note here is at version {v}"));
    format!(
        "follows: this record continues the note after its version {follows}, but {copy}: a record of the note \
         before this one has not been imported (import the export's pages in order)"
    )
}

/// Imports the exported `versions` (with their `split` markers) into note `p` stored here.
fn merge(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    (p, versions, split): (&NoteRecord, &[NoteRecord], Part),
    source: Option<(Origin, u64)>,
    out: &mut Imported,
) -> Result<Field<()>> {
    let part = &caller.part;
    let current = versions.last().expect("the record's own version");
    let identity = current.identity();
    // The note here holds the exported versions up to its current one: it takes those after.
    let mut held = true;
    for v in versions.iter().filter(|v| v.version <= p.version) {
        let here = tx.get(VER, &identity.ver_key(part, v.version))?.as_deref().map(NoteRecord::decode).transpose()?;
        if !here.is_some_and(|h| same_version(&h, v)) {
            held = false;
            break;
        }
    }
    let after: Vec<NoteRecord> = versions.iter().filter(|v| v.version > p.version).cloned().collect();
    if held && after.is_empty() {
        out.unchanged.notes += 1;
        return Ok(Ok(()));
    }
    // A record continuing the copy: the one before it ended at the copy's current version.
    if held && (versions.iter().any(|v| v.version == p.version) || split.follows == Some(p.version)) {
        store_versions(tx, caller, p.id, Some(p), &after, source, true)?;
        out.imported.notes += 1;
        return Ok(Ok(()));
    }
    let seen = |tx: &mut WriteTxn<'_>, version: u64| -> Result<bool> {
        Ok(match source {
            Some(s) => tx.get(crate::knowledge::IMPORT_MAP, &seen_key(part, &identity, s, version))?.is_some(),
            None => false,
        })
    };
    // A copy of this export's note that a record between has not reached yet.
    if let Some(f) = split.follows
        && (source.is_none() || seen(tx, p.version)?)
    {
        return Ok(Err(gap(f, Some(p.version))));
    }
    // A history of its own here: the exported current version only, as the next version here;
    // a record that is not the note's last holds no current version.
    if split.continued {
        return Ok(Err(format!(
            "continued: the note here has a history of its own (its version {} is not this export's), so only \
             the note's last record is merged, as the next version here",
            p.version
        )));
    }
    if same_content(p, current) || seen(tx, current.version)? {
        out.unchanged.notes += 1;
        return Ok(Ok(()));
    }
    // A new version of the note here: its number and time are the target's.
    let note = NoteRecord {
        version: p.version + 1,
        supersedes: Some(p.version),
        created_at: p.created_at,
        updated_at: caller.now.max(p.updated_at),
        ..current.clone()
    };
    store_versions(tx, caller, p.id, Some(p), &[note], None, false)?;
    if let Some(s) = source {
        tx.put(crate::knowledge::IMPORT_MAP, &seen_key(part, &identity, s, current.version), &[])?;
    }
    out.imported.notes += 1;
    Ok(Ok(()))
}
