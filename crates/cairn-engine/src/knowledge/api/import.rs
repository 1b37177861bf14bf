//! `memory_import`.

use super::Caller;
use crate::error::{Error, Result};
use crate::store::Store;
use serde_json::Value;

pub(super) fn run(_store: &Store, _caller: &Caller, _body: &[u8]) -> Result<Value> {
    Err(Error::InvalidArgument("memory_import is not served by this build yet".into()))
}
