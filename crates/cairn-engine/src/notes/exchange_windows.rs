//! A note's export records, cut to a byte bound. A note value may be 64 KiB (`MAX_VALUE_BYTES`),
//! so a note written often would make one record larger than any page, and than the body
//! `memory_import` takes: such a record could never be sent back. So a note is exported as one
//! record per run of versions (a window), in version order, as many versions as keep the record
//! within the room its page has left (one at least: a single version larger than a small page
//! comes alone). Each is a valid note record whose own fields are the last version of its run
//! and whose `versions` are the earlier ones of the run; every record but the last says
//! `continued: true` (more versions of this note follow), every one but the first says
//! `follows: n`, the last version the record before it held, so an import can tell a record that
//! continues the copy from one whose predecessor has not come (`import.rs`). A note that fits is
//! one record, as before.

use super::exchange::{given, version_fields};
use super::record::{NoteRecord, VER, Visibility};
use crate::error::Result;
use crate::knowledge::{Partition, json_len};
use crate::snapshot::Snapshot;
use serde_json::{Map, Value, json};
use std::ops::Bound;

/// One export record of a note and where it ends.
pub(crate) struct Window {
    pub record: Value,
    /// The last version the record holds (its own).
    pub last: u64,
    /// Whether versions of the note come after this record's.
    pub continued: bool,
}

/// The identity fields of `note`'s records (and the page's `origin`).
fn identity(note: &NoteRecord, origin: &Value) -> Map<String, Value> {
    let mut r = Map::new();
    r.insert("kind".into(), json!("note"));
    r.insert("id".into(), json!(note.id.to_string()));
    r.insert("key".into(), json!(note.key));
    r.insert("visibility".into(), json!(note.visibility));
    if let Some(t) = note.task_id() {
        r.insert("taskId".into(), json!(t));
    }
    if note.visibility() == Visibility::Agent {
        r.insert("owner".into(), json!(note.owner));
    }
    r.insert("origin".into(), origin.clone());
    r
}

/// The export record of the stored current note `value` over its versions after `from` (0: from
/// the first), as many as keep the record within `room` bytes of JSON, one at least; `None` for a
/// note the reader does not get (a private note not asked for, another agent's note), or one
/// with no version after `from` (it changed since the page before). Without `private`, the
/// private earlier versions are left out (the header counts them). Reads the versions from
/// `from` on, and stops at the first that does not fit.
pub(crate) fn window(
    snap: &Snapshot,
    part: &Partition,
    value: &[u8],
    (private, agent): (bool, Option<&str>),
    (from, room): (u64, usize),
    origin: &Value,
) -> Result<Option<Window>> {
    let note = NoteRecord::decode(value)?;
    if !given(&note, private, agent) || note.version <= from {
        return Ok(None);
    }
    let mut r = identity(&note, origin);
    // The markers a record may take, counted whether or not it does, so the bound holds.
    r.insert("continued".into(), json!(true));
    r.insert("follows".into(), json!(from));
    r.insert("versions".into(), json!([]));
    let mut bytes = json_len(&Value::Object(r.clone()));
    let mut taken: Vec<Map<String, Value>> = Vec::new();
    let mut continued = false;
    let prefix = note.identity().versions_prefix(part);
    let start = note.identity().ver_key(part, from + 1);
    let mut stored = snap.range(VER, Bound::Included(&start[..]), Bound::Unbounded)?;
    let mut current = Some(note.clone());
    loop {
        // The next version the reader gets: a stored earlier one, then the current one.
        let mut next = None;
        while current.is_some() && next.is_none() {
            match stored.next().transpose()? {
                Some((key, value)) if key.starts_with(&prefix) => {
                    let v = NoteRecord::decode(&value)?;
                    if v.version >= note.version {
                        next = current.take();
                    } else if private || !v.private {
                        next = Some(v);
                    }
                }
                _ => next = current.take(),
            }
        }
        let Some(v) = next else { break };
        let fields = version_fields(&v);
        // As an entry of `versions` (with its comma); as the record's own fields it takes less.
        let size = json_len(&Value::Object(fields.clone())) + 1;
        if !taken.is_empty() && bytes + size > room {
            continued = true;
            break;
        }
        bytes += size;
        taken.push(fields);
    }
    let own = taken.pop().expect("one version at least");
    let last = own["version"].as_u64().expect("a version number");
    r.remove("continued");
    r.remove("follows");
    r.extend(own);
    r.insert("versions".into(), Value::Array(taken.into_iter().map(Value::Object).collect()));
    if continued {
        r.insert("continued".into(), json!(true));
    }
    if from > 0 {
        r.insert("follows".into(), json!(from));
    }
    Ok(Some(Window { record: Value::Object(r), last, continued }))
}
