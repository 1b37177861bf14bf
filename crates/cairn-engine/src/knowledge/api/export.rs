//! `memory_export`: `{cursor?, limit?, maxBytes?, includePrivate?}` → `{records, next}` (see
//! `knowledge::export`). The node adds its policy as `allowPrivate`; private notes are exported
//! only when it is true and the caller sends `includePrivate: true`.

use super::Caller;
use crate::error::{Error, Result};
use crate::knowledge::{EXPORT_DEFAULT_LIMIT, EXPORT_MAX_LIMIT, EXPORT_PAGE_BYTES, Origin, Reader, export};
use crate::store::Store;
use serde_json::{Map, Value, json};

/// The fields an export request may carry (`allowPrivate` is the node's policy, not the caller's).
const FIELDS: [&str; 6] = ["cursor", "limit", "maxBytes", "includePrivate", "allowPrivate", "allAgents"];

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let req: Map<String, Value> = super::parse("export", body)?;
    if let Some(field) = req.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(Error::InvalidArgument(format!("{field}: export takes only {}", FIELDS.join(", "))));
    }
    let flag = |field: &str| match req.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(Error::InvalidArgument(format!("{field}: must be true or false"))),
    };
    let (allow, include) = (flag("allowPrivate")?, flag("includePrivate")?);
    // `allAgents` comes from the node (an admin token), never from a client.
    let agent = (!flag("allAgents")?).then_some(caller.agent.as_str());
    let reader = Reader { private: allow && include, agent };
    let cursor = match req.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.as_str()),
        Some(_) => return Err(Error::InvalidArgument("cursor: must be a string from a previous page's next".into())),
    };
    let limit = match req.get("limit") {
        None | Some(Value::Null) => EXPORT_DEFAULT_LIMIT,
        Some(n) => {
            n.as_u64().and_then(|n| usize::try_from(n).ok()).filter(|n| (1..=EXPORT_MAX_LIMIT).contains(n)).ok_or_else(
                || Error::InvalidArgument(format!("limit: must be an integer 1..={EXPORT_MAX_LIMIT}, got {n}")),
            )?
        }
    };
    // Checked against its range by `export`, which names it.
    let max_bytes = match req.get("maxBytes") {
        None | Some(Value::Null) => EXPORT_PAGE_BYTES,
        Some(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::InvalidArgument(format!("maxBytes: must be an integer of bytes, got {n}")))?,
    };
    let snap = store.snapshot()?;
    let origin = Origin::of(store.store_id(), &caller.part);
    let page = export(&snap, &caller.part, origin, cursor, (limit, max_bytes), caller.now, &reader)?;
    Ok(json!({ "records": page.records, "next": page.next }))
}
