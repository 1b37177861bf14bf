//! `load`: a whole export, as JSON lines (the body is the lines themselves, not a JSON
//! document), into an empty scope in one transaction: the bulk path an operator fills a scope
//! with (`knowledge::load`). The reply is `import`'s: `{imported, unchanged, skipped,
//! not_reproduced}`, with `skipped`/`not_reproduced` indexes counting lines from 0. A scope that
//! already holds an entity, fact or document is refused (`VALIDATION_ERROR`) and nothing changes:
//! pages into such a scope go through `import`, which matches what is stored.
//!
//! `load_whole` is `load` for a Memory Package (DESIGN.md §4, "verified first"): the file goes in
//! whole or not at all. A line `load` would skip rolls the transaction back, and the reply is a
//! `VALIDATION_ERROR` naming each such line (`details`: `{field: "line N", message: reason}`).

use super::{Caller, Refusal};
use crate::error::{Error, Result};
use crate::knowledge::import::Skipped;
use crate::knowledge::load::{self, Plan};
use crate::store::Store;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The skipped lines a refused `load_whole` names, at most.
const NAMED: usize = 100;

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8], whole: bool) -> Result<Value> {
    // Parsing, checking, deduplicating and numbering happen here, off the writer thread.
    let plan = Plan::read(body, &caller.agent, caller.now);
    let caller = caller.clone();
    // The lines that made a whole load roll back: the write's error says only that it did.
    let refused: Arc<Mutex<Option<Vec<Skipped>>>> = Arc::default();
    let held = refused.clone();
    let written = store.write(move |tx| {
        let part = &caller.part;
        if !load::is_empty(tx, part)? {
            return Ok(None);
        }
        part.register(tx)?;
        let done = load::store(tx, part, plan, &caller.agent, caller.now)?;
        if whole && !done.skipped.is_empty() {
            *held.lock().expect("refused lines") = Some(done.skipped);
            return Err(Error::InvalidArgument("a whole load met lines it skips; rolled back".into()));
        }
        // The fast path recorded its own events; these are the records `import` stored.
        super::import::record_imported(tx, &caller, &done)?;
        Ok(Some(done))
    });
    if let Some(skipped) = refused.lock().expect("refused lines").take() {
        return Ok(whole_refusal(&skipped));
    }
    let Some(done) = written?.0 else {
        return Ok(Refusal {
            code: "VALIDATION_ERROR",
            message: "load fills an empty scope, and this one holds knowledge: import its records a page at a time"
                .into(),
            details: vec![json!({"field": "scope", "message": "not empty"})],
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

/// The refusal of a whole load whose `skipped` lines fail their checks: nothing was stored.
fn whole_refusal(skipped: &[Skipped]) -> Value {
    let details = skipped
        .iter()
        .take(NAMED)
        .map(|s| json!({"field": format!("line {}", s.index + 1), "message": s.reason}))
        .collect();
    Refusal {
        code: "VALIDATION_ERROR",
        message: format!("{} lines fail their checks; nothing was stored", skipped.len()),
        details,
    }
    .reply()
}
