//! `memory_import`: `{records}` → `{imported, unchanged, skipped, not_reproduced}` (see
//! `knowledge::import`). Every record stored or changed appends one history event (op `import`)
//! naming it by name or id.

use super::Caller;
use crate::error::Result;
use crate::history::{Change, record};
use crate::knowledge::import;
use crate::store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    records: Vec<Value>,
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let req: Request = super::parse("import", body)?;
    let caller = caller.clone();
    let (done, _) = store.write(move |tx| {
        let done = import(tx, &caller.part, &req.records, &caller.agent, caller.now)?;
        if !done.written.is_empty() {
            caller.part.register(tx)?;
        }
        for (family, target, id) in &done.written {
            let after = json!({ "id": id.to_string() });
            record(
                tx,
                &caller,
                Change { family, target, op: "import", before: None, after: Some(after), patch: None },
            )?;
        }
        Ok(done)
    })?;
    Ok(json!({
        "imported": done.imported,
        "unchanged": done.unchanged,
        "skipped": done.skipped,
        "not_reproduced": done.not_reproduced,
    }))
}
