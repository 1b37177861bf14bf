//! The knowledge verbs as the engine serves them: one JSON request in, one JSON reply out, so a
//! verb crosses the N-API boundary once. The node validates shape, identity and permissions before
//! calling; this layer owns the verb's rules (linking, time, citations, counts). A refusal the
//! caller should see (a miss with suggestions, a passage whose mention is absent) is a reply with
//! an `error` object in DESIGN.md §3 terms, never an engine `Error`, which is kept for failures of
//! the store itself and for malformed requests (`INVALID_ARGUMENT`).

mod attribute_keys;
mod context;
mod delete_user;
mod derived;
mod duplicates;
#[cfg(test)]
mod duplicates_pages_tests;
mod export;
mod forget;
mod import;
mod load;
#[cfg(test)]
mod quick_tests;
mod recall;
mod recall_cursor;
#[cfg(test)]
mod recall_paging_tests;
mod relate;
mod remember;
mod remember_facts;
mod status;

use super::part::Partition;
use crate::error::{Error, Result};
use crate::store::Store;
pub(crate) use recall::names_meant;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Who is calling, as the node established it: the partition the call may touch, the agent the
/// token names (recorded on writes), and the call's clock (milliseconds since the Unix epoch).
#[derive(Debug, Clone)]
pub struct Caller {
    pub part: Partition,
    pub agent: String,
    pub now: i64,
}

/// A refusal in the product's terms (DESIGN.md §3): `code` is one of its codes.
#[derive(Debug, Clone, Serialize)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Value>,
}

impl Refusal {
    /// The reply that carries this refusal.
    #[must_use]
    pub fn reply(self) -> Value {
        serde_json::json!({ "error": self })
    }
}

/// The verbs served here, by their DESIGN.md names without the `memory_` prefix.
pub const VERBS: [&str; 9] =
    ["status", "remember", "relate", "recall", "context", "forget", "export", "import", "delete_user"];

/// Whether `verb` only reads and is usually quick enough to try on the caller's own thread under
/// a deadline (`crate::budget::within`): a recall or a status. Not a context: fusing every
/// channel took about 0.5 ms at 10k entities, past any deadline worth trying first.
#[must_use]
pub fn quick(verb: &str) -> bool {
    matches!(verb, "recall" | "status")
}

/// Runs `verb` for `caller` with the JSON `body`; returns the JSON reply. Reads run on a snapshot
/// in the calling thread; writes wait until durable. Besides `VERBS`, `load` fills an empty scope
/// from a whole export; its body is the export's JSON lines, not a JSON document, and `load_whole`
/// does the same or, when any line fails its checks, nothing (`load.rs`).
pub fn call(store: &Store, verb: &str, caller: &Caller, body: &[u8]) -> Result<Vec<u8>> {
    // A store written before the partitions' counts were kept gets them first: every verb after
    // may read (status) or change them (`tally_build.rs`).
    super::tally_build::upgrade(store)?;
    // Likewise its attribute index, which a recall by attribute reads (`attr_index_build.rs`).
    super::attr_index_build::upgrade(store)?;
    // And its source index, which `forget {source}` reads (`source_index_build.rs`).
    super::source_index_build::upgrade(store)?;
    // And its index of attribute writes, which reads of what is true now seek (`attr_writes_build.rs`).
    super::attr_writes_build::upgrade(store)?;
    // A full-text index of an older tokenizer's terms is rebuilt (`fts_terms_build.rs`).
    super::fts_terms_build::upgrade(store)?;
    // An import checks a handoff record against the capsules of its task left at its time, which
    // the index of each task's capsules finds (`notes/handoff_tasks.rs`).
    if matches!(verb, "import" | "load" | "load_whole") {
        crate::notes::handoff_tasks::upgrade(store)?;
    }
    // And its earlier versions, out of the lists a `relate` plan reads (`past_adjacency_build.rs`).
    super::past_adjacency_build::upgrade(store)?;
    // And its facts' attribute writes, out of their records (`fact_writes_build.rs`).
    super::fact_writes_build::upgrade(store)?;
    let reply = match verb {
        "status" => status::run(store, caller, body)?,
        "remember" => remember::run(store, caller, body)?,
        "relate" => relate::run(store, caller, body)?,
        "recall" => recall::run(store, caller, body)?,
        "context" => context::run(store, caller, body)?,
        "forget" => forget::run(store, caller, body)?,
        "export" => export::run(store, caller, body)?,
        "import" => import::run(store, caller, body)?,
        "load" => load::run(store, caller, body, false)?,
        "load_whole" => load::run(store, caller, body, true)?,
        "delete_user" => delete_user::run(store, caller, body)?,
        other => return Err(Error::InvalidArgument(format!("unknown knowledge verb {other:?}"))),
    };
    Ok(serde_json::to_vec(&reply).expect("a JSON value serialises"))
}

/// `call` for a `remember` whose passages' texts come beside the body instead of inside it:
/// `texts[i]` is the text of `passages[i]` (whose `text` in `body` is a placeholder, replaced).
/// The reply is `call`'s for the body with the texts in place. A binding uses it to hand over
/// many texts without encoding them into JSON and parsing them back, which was most of the
/// JavaScript thread's work on a passage ingest.
///
/// # Errors
/// `INVALID_ARGUMENT` for another verb, a body without `passages`, or a count of texts that is
/// not the number of passages; else as `call`.
pub fn call_with_texts(store: &Store, verb: &str, caller: &Caller, body: &[u8], texts: Vec<String>) -> Result<Vec<u8>> {
    if verb != "remember" {
        return Err(Error::InvalidArgument(format!("texts beside the body are for remember, not {verb:?}")));
    }
    super::tally_build::upgrade(store)?;
    super::attr_index_build::upgrade(store)?;
    super::source_index_build::upgrade(store)?;
    super::attr_writes_build::upgrade(store)?;
    super::fts_terms_build::upgrade(store)?;
    super::past_adjacency_build::upgrade(store)?;
    super::fact_writes_build::upgrade(store)?;
    let reply = remember::run_with_texts(store, caller, body, Some(texts))?;
    Ok(serde_json::to_vec(&reply).expect("a JSON value serialises"))
}

/// Parses a request body into the verb's request type; a mismatch names the field.
pub(crate) fn parse<T: DeserializeOwned>(verb: &str, body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|e| Error::InvalidArgument(format!("{verb}: {e}")))
}
