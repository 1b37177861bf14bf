//! `load`: a whole export, as JSON lines (the body is the lines themselves, not a JSON
//! document), into an empty scope in one transaction: the bulk path an operator fills a scope
//! with (`knowledge::load`). The reply is `import`'s: `{imported, unchanged, skipped,
//! not_reproduced}`, with `skipped`/`not_reproduced` indexes counting lines from 0. A scope that
//! already holds an entity, fact or document is refused (`VALIDATION_ERROR`) and nothing changes:
//! pages into such a scope go through `import`, which matches what is stored.

use super::{Caller, Refusal};
use crate::error::Result;
use crate::knowledge::load::{self, Plan};
use crate::store::Store;
use serde_json::{Value, json};

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    // Parsing, checking, deduplicating and numbering happen here, off the writer thread.
    let plan = Plan::read(body, &caller.agent, caller.now);
    let caller = caller.clone();
    let (done, _) = store.write(move |tx| {
        let part = &caller.part;
        if !load::is_empty(tx, part)? {
            return Ok(None);
        }
        part.register(tx)?;
        let done = load::store(tx, part, plan, &caller.agent, caller.now)?;
        // The fast path recorded its own events; these are the records `import` stored.
        super::import::record_imported(tx, &caller, &done)?;
        Ok(Some(done))
    })?;
    let Some(done) = done else {
        return Ok(Refusal {
            code: "VALIDATION_ERROR",
            message: "load fills an empty scope, and this one holds knowledge: import its records a page at a time"
                .into(),
            details: Vec::new(),
        }
        .reply());
    };
    Ok(json!({
        "imported": done.imported,
        "unchanged": done.unchanged,
        "skipped": done.skipped,
        "not_reproduced": done.not_reproduced,
    }))
}
