//! `memory_import`: `{records}` → `{imported, unchanged, skipped, not_reproduced}` (see
//! `knowledge::import`). Every record stored or changed appends one history event (op `import`)
//! naming it by name or id.

use super::Caller;
use crate::error::{Error, Result};
use crate::history::{Change, record};
use crate::knowledge::{Imported, KeptPairs, import_among};
use crate::store::Store;
use crate::write::WriteTxn;
use serde_json::{Map, Value, json};

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let mut req: Map<String, Value> = super::parse("import", body)?;
    if let Some(field) = req.keys().find(|k| !matches!(k.as_str(), "records" | "allAgents")) {
        return Err(Error::InvalidArgument(format!("{field}: import takes only records")));
    }
    // `allAgents` comes from the node (an admin token), never from a client.
    let all_agents = match req.remove("allAgents") {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => return Err(Error::InvalidArgument("allAgents: must be true or false".into())),
    };
    let Some(Value::Array(records)) = req.remove("records") else {
        return Err(Error::InvalidArgument("records: must be an array of exported records".into()));
    };
    let caller = caller.clone();
    let part = caller.part.clone();
    // What the call before read of the pairs of ends its facts joined, if nothing was committed
    // since (`import_pairs.rs`): the pages of one import read a pair once, not once a page.
    let kept = store.take_import_pairs();
    let dir = store.dir().to_path_buf();
    let ((done, pairs), txn) = store.write(move |tx| {
        let mut pairs = KeptPairs::resume(kept, tx, &caller.part);
        let who = (caller.agent.as_str(), all_agents);
        let done = import_among(tx, &caller.part, &records, who, caller.now, (&mut pairs, Some(&dir)))?;
        if !done.written.is_empty() {
            caller.part.register(tx)?;
        }
        record_imported(tx, &caller, &done)?;
        Ok((done, pairs))
    })?;
    store.keep_import_pairs(KeptPairs::of(&part, txn, pairs));
    Ok(json!({
        "imported": done.imported,
        "unchanged": done.unchanged,
        "skipped": done.skipped,
        "not_reproduced": done.not_reproduced,
    }))
}

/// One history event (op `import`) for each record an import or a load stored or changed, and
/// one for each dated attribute write its entity records carried (`import_attributes.rs`).
pub(super) fn record_imported(tx: &mut WriteTxn<'_>, caller: &Caller, done: &Imported) -> Result<()> {
    for (family, target, id) in &done.written {
        let after = json!({ "id": id.to_string() });
        record(tx, caller, Change { family, target, op: "import", before: None, after: Some(after), patch: None })?;
    }
    for (name, id, writes) in &done.attribute_writes {
        crate::knowledge::import_attributes::record_writes(tx, caller, name, *id, writes)?;
    }
    Ok(())
}
