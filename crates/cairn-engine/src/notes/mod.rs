//! Notes and handoffs (DESIGN.md §2): versioned structured memory that agents share inside one
//! partition, with optimistic concurrency (`expectedVersion`), idempotent retries, visibility
//! (`user`/`task`/`agent`), private notes behind the node's policy, `as_of` reads, an immutable
//! event for every write, and handoff capsules one agent leaves for another. Every write runs in
//! one transaction on the store's single writer thread, so a version check and the write it
//! guards cannot interleave with another write. Keys and rules: `docs/design/notes.md`.

pub mod api;
mod block;
mod count;
mod cursor;
mod event_order;
mod event_target;
mod events;
pub(crate) mod exchange;
pub(crate) mod exchange_windows;
mod fields;
mod forget;
mod handoff;
mod handoff_addressed;
mod handoff_elsewhere;
pub(crate) mod handoff_exchange;
mod handoff_forget;
mod handoff_index;
#[cfg(test)]
mod handoff_index_tests;
#[cfg(test)]
mod handoff_page_tests;
mod handoff_task_elsewhere;
pub(crate) mod handoff_tasks;
#[cfg(test)]
mod handoff_tasks_tests;
#[cfg(test)]
mod handoff_tests;
#[cfg(test)]
mod history_newest_tests;
#[cfg(test)]
mod history_same_key_tests;
mod idempotency;
mod idempotency_upgrade;
mod idempotency_window;
#[cfg(test)]
mod idempotency_window_tests;
pub(crate) mod import;
pub(crate) mod index;
#[cfg(test)]
mod key_parts_tests;
mod key_words;
pub(crate) use key_words::key_words;
mod list;
mod list_meant;
mod list_tasks;
mod lookup;
mod merge;
mod notes_elsewhere;
#[cfg(test)]
mod notes_elsewhere_tests;
mod notes_meant;
#[cfg(test)]
mod notes_meant_tests;
mod purge;
mod record;
mod same_key;
mod search;
mod search_text;
mod slot_counts;
#[cfg(test)]
mod spelling_tests;
#[cfg(test)]
mod task_id_search_tests;
#[cfg(test)]
mod tests;
mod visibility;
mod write;
#[cfg(test)]
mod write_receipt_tests;

pub use crate::time::{iso_ms, parse_rfc3339};
pub(crate) use count::{live_handoffs, visible_notes};
pub use merge::merge;
pub(crate) use purge::forget_partition;

use crate::error::Error;
use crate::knowledge::api::Refusal;
use serde_json::{Value, json};

/// Why a notes verb did not produce its reply: a refusal the caller sees, or a store failure.
#[derive(Debug)]
pub(crate) enum Fail {
    Refused(Refusal),
    Store(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Store(e)
    }
}

impl From<Refusal> for Fail {
    fn from(r: Refusal) -> Self {
        Fail::Refused(r)
    }
}

/// A verb's outcome inside this module.
pub(crate) type Outcome<T> = std::result::Result<T, Fail>;

/// A `VALIDATION_ERROR` naming `field`; details carry `{field, message}` (DESIGN §3) so a client can point at it.
pub(crate) fn invalid(field: &str, message: impl std::fmt::Display) -> Fail {
    let message = message.to_string();
    Fail::Refused(Refusal {
        code: "VALIDATION_ERROR",
        message: format!("{field}: {message}"),
        details: vec![json!({ "field": field, "message": message })],
    })
}

/// A refusal with `code` and `details`.
pub(crate) fn refuse(code: &'static str, message: impl Into<String>, details: Vec<Value>) -> Fail {
    Fail::Refused(Refusal { code, message: message.into(), details })
}

/// Default and largest page of a list, history or audit.
pub const DEFAULT_LIMIT: u64 = 20;
pub const MAX_LIMIT: u64 = 100;
