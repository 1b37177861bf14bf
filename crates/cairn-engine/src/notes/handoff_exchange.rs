//! Handoffs in `memory_export` / `memory_import`. A `handoff` record is one capsule of the scope,
//! expired ones too (history is kept), as `handoff_resume` shows it plus `kind`. Import gives the
//! capsule a new local id (ids are the store's) and keeps its times, author and addressee; it is
//! `unchanged` when a previous import mapped its exported id to a capsule still here, or when the
//! task already holds a capsule with the same content (everything but the id), so a page imported
//! twice, or into the scope it came from, adds nothing. Every capsule stored appends a `handoff`
//! event with op `import`. An agent token imports only capsules its own agent left (`from`), and no
//! token a capsule created later than now (`knowledge::import_rules`).

use super::exchange::{Field, name, source_id, text, time};
use super::fields::{agent_name, nfc, reason, written_task};
use super::handoff::{
    Capsule, HAND, LISTS, MAX_ITEM_BYTES, MAX_ITEMS, MAX_SUMMARY_BYTES, item_bytes, oversized, oversized_message, put,
};
use super::handoff_tasks;
use crate::error::Result;
use crate::history::{self, Change};
use crate::knowledge::api::Caller;
use crate::knowledge::import_rules::{not_future, own_author};
use crate::knowledge::{IMPORT_MAP, Imported, Origin, Partition};
use crate::write::WriteTxn;
use serde_json::{Map, Value};

/// The capsule tree export walks (`part | taskId \0 | id BE` → capsule).
pub(crate) const TREE: &str = HAND;

/// `k.import_map` kind byte of an imported capsule: `part | 'h' | origin (16 bytes; none for a
/// record naming no origin) | source id BE` → local id BE.
pub(super) const HANDOFF: u8 = b'h';

/// The export record of a stored capsule.
pub(crate) fn record(value: &[u8]) -> Result<Value> {
    let mut r = Capsule::decode(value)?.render();
    r["kind"] = Value::from("handoff");
    Ok(r)
}

fn list(r: &Map<String, Value>, field: &str) -> Field<Vec<Value>> {
    let items = match r.get(field) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(format!("{field}: must be an array of strings or objects")),
    };
    if items.len() > MAX_ITEMS {
        return Err(format!("{field}: has {} items; at most {MAX_ITEMS}", items.len()));
    }
    for (i, item) in items.iter().enumerate() {
        if item_bytes(item).is_none_or(|size| size > MAX_ITEM_BYTES) {
            return Err(format!("{field}[{i}]: must be a string or an object of at most {MAX_ITEM_BYTES} bytes"));
        }
        crate::json_depth::check(&format!("{field}[{i}]"), item)?;
    }
    Ok(items.clone())
}

/// The capsule a record describes (id 0: given when stored), left by the importing agent unless
/// the import is an admin's (`all_agents`), and not later than `now`.
fn parse(r: &Map<String, Value>, (agent, all_agents): (&str, bool), now: i64) -> Field<Capsule> {
    let task_id = nfc(name(r, "taskId")?.ok_or("taskId: required")?);
    written_task("taskId", &task_id).map_err(reason)?;
    let summary = text(r, "summary")?.ok_or("summary: required")?;
    if summary.trim().is_empty() || summary.len() > MAX_SUMMARY_BYTES {
        return Err(format!("summary: must be 1..={MAX_SUMMARY_BYTES} bytes and not blank"));
    }
    let status = text(r, "status")?.map(str::to_owned);
    if status.as_ref().is_some_and(|s| s.is_empty() || s.len() > super::handoff::MAX_STATUS_BYTES) {
        return Err(format!("status: must be 1..={} bytes", super::handoff::MAX_STATUS_BYTES));
    }
    let lists = [list(r, LISTS[0])?, list(r, LISTS[1])?, list(r, LISTS[2])?, list(r, LISTS[3])?];
    let from = name(r, "from")?;
    own_author("from", from.as_deref(), (agent, all_agents))?;
    let created_at = time(r, "createdAt")?;
    not_future("createdAt", created_at, now)?;
    // An addressee no token can hold would reach nobody, as `handoff_create` refuses it.
    let to = name(r, "to")?;
    if let Some(t) = &to {
        agent_name("to", t).map_err(reason)?;
    }
    let capsule = Capsule {
        id: 0,
        task_id,
        summary: summary.to_owned(),
        status,
        lists,
        from: from.unwrap_or_else(|| agent.to_owned()),
        to,
        created_at: created_at.unwrap_or(now),
        // An expired capsule is imported as it was: resume reports it expired.
        expires_at: time(r, "expiresAt")?,
    };
    if let Some(size) = oversized(&capsule) {
        return Err(format!("record: {}", oversized_message(size)));
    }
    Ok(capsule)
}

/// The local id of a capsule of `task` here that says what `capsule` says, if one does. Only
/// the task's capsules left at the same time can (`handoff_tasks.rs`): a task imported whole
/// reads each of its capsules once, not all of them per record.
fn same_here(tx: &mut WriteTxn<'_>, part: &Partition, capsule: &Capsule) -> Result<Option<u64>> {
    for entry in handoff_tasks::left_at(tx, part, &capsule.task_id, capsule.created_at)? {
        let mut have = handoff_tasks::capsule_in(tx, part, &capsule.task_id, entry)?;
        let id = std::mem::replace(&mut have.id, capsule.id);
        if have == *capsule {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// Imports one `handoff` record into `part` as `agent` at `now`; `all_agents` (an admin's import)
/// may bring back capsules other agents left.
pub(crate) fn import(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    r: &Map<String, Value>,
    (agent, all_agents): (&str, bool),
    now: i64,
    out: &mut Imported,
) -> Result<Field<()>> {
    let mut capsule = match parse(r, (agent, all_agents), now) {
        Ok(c) => c,
        Err(e) => return Ok(Err(e)),
    };
    let source = match (Origin::of_record(r), source_id(r)) {
        (Ok(o), Ok(s)) => s.map(|s| (o, s)),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    let map_key = source.map(|(o, s)| part.key(&[&[HANDOFF], o.key_bytes(), &s.to_be_bytes()]));
    if let Some(k) = &map_key
        && let Some(local) = tx.get(IMPORT_MAP, k)?
    {
        let local: [u8; 8] = local.as_slice().try_into().unwrap_or_default();
        let key = part.key(&[capsule.task_id.as_bytes(), b"\0", &local]);
        // Only the capsule the record describes: an id of another origin is not trusted.
        if let Some(bytes) = tx.get(HAND, &key)? {
            let mut have = Capsule::decode(&bytes)?;
            have.id = capsule.id;
            if have == capsule {
                out.unchanged.handoffs += 1;
                return Ok(Ok(()));
            }
        }
    }
    if let Some(local) = same_here(tx, part, &capsule)? {
        if let Some(k) = &map_key {
            tx.put(IMPORT_MAP, k, &local.to_be_bytes())?;
        }
        out.unchanged.handoffs += 1;
        return Ok(Ok(()));
    }
    part.register(tx)?;
    capsule.id = crate::knowledge::next_id(tx, part)?;
    put(tx, part, &capsule)?;
    if let Some(k) = &map_key {
        tx.put(IMPORT_MAP, k, &capsule.id.to_be_bytes())?;
    }
    let caller = Caller { part: part.clone(), agent: agent.to_owned(), now };
    let change = Change {
        family: "handoff",
        target: &capsule.task_id,
        op: "import",
        before: None,
        after: Some(capsule.render()),
        patch: None,
    };
    history::record(tx, &caller, change)?;
    out.imported.handoffs += 1;
    Ok(Ok(()))
}
