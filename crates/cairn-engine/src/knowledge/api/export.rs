//! `memory_export`: `{cursor?, limit?}` → `{records, next}` (see `knowledge::export`).

use super::Caller;
use crate::error::{Error, Result};
use crate::knowledge::{EXPORT_DEFAULT_LIMIT, EXPORT_MAX_LIMIT, export};
use crate::store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    cursor: Option<String>,
    limit: Option<u64>,
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let req: Request = super::parse("export", body)?;
    let limit = match req.limit {
        None => EXPORT_DEFAULT_LIMIT,
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| (1..=EXPORT_MAX_LIMIT).contains(n))
            .ok_or_else(|| Error::InvalidArgument(format!("limit: must be 1..={EXPORT_MAX_LIMIT}, got {n}")))?,
    };
    let snap = store.snapshot()?;
    let page = export(&snap, &caller.part, req.cursor.as_deref(), limit, caller.now)?;
    Ok(json!({ "records": page.records, "next": page.next }))
}
