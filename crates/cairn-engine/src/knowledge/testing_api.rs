//! Test helpers for the verbs: a caller and a one-line verb call.

use super::Partition;
use super::api::{Caller, call};
use crate::store::Store;
use serde_json::Value;

/// A caller of `part` as agent `a` at time `now`.
pub(crate) fn caller(part: &Partition, now: i64) -> Caller {
    Caller { part: part.clone(), agent: "a".into(), now }
}

/// Runs `verb` with `body`; the reply, or the engine error's code as `Err`.
pub(crate) fn verb(store: &Store, who: &Caller, name: &str, body: &Value) -> Result<Value, &'static str> {
    call(store, name, who, &serde_json::to_vec(body).unwrap())
        .map(|bytes| serde_json::from_slice(&bytes).unwrap())
        .map_err(|e| e.code())
}
