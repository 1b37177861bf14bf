//! The notes verbs as the engine serves them, mirroring `knowledge::api`: one JSON request in,
//! one JSON reply out. The node strips identity and passes its policy (`allowPrivate`) in the
//! body; the agent comes from the `Caller` (bound to the token), never from the body. A refusal
//! (validation, `VERSION_CONFLICT`, `IDEMPOTENCY_CONFLICT`, `NOT_FOUND`) is a reply carrying
//! `error` in DESIGN.md §3 terms and changes nothing; store failures are engine `Error`s.

use super::{Fail, events, forget, handoff, handoff_forget, handoff_index, handoff_tasks, index, list, write};
use crate::error::{Error, Result};
use crate::knowledge::api::Caller;
use crate::store::Store;

/// The verbs served here.
pub const VERBS: [&str; 8] = [
    "note_write",
    "note_list",
    "note_forget",
    "history",
    "audit",
    "handoff_create",
    "handoff_resume",
    "handoff_forget",
];

/// Runs `verb` for `caller` with the JSON `body`; returns the JSON reply. Reads run on a snapshot
/// in the calling thread; writes wait until durable.
pub fn call(store: &Store, verb: &str, caller: &Caller, body: &[u8]) -> Result<Vec<u8>> {
    // A store written before the index took blocks is rebuilt before its first use.
    index::upgrade(store)?;
    // And one written before the indexes of addressed handoffs and of each task's gets them
    // before a handoff verb reads them or a forget must remove from them (`handoff_index.rs`,
    // `handoff_tasks.rs`); other notes verbs never touch them.
    if verb.starts_with("handoff_") {
        handoff_index::upgrade(store)?;
        handoff_tasks::upgrade(store)?;
    }
    let outcome = match verb {
        "note_write" => write::run(store, caller, body),
        "note_list" => list::run(store, caller, body),
        "note_forget" => forget::run(store, caller, body),
        "history" => events::history(store, caller, body),
        "audit" => events::audit(store, caller, body),
        "handoff_create" => handoff::create(store, caller, body),
        "handoff_resume" => handoff::resume(store, caller, body),
        "handoff_forget" => handoff_forget::run(store, caller, body),
        other => return Err(Error::InvalidArgument(format!("unknown notes verb {other:?}"))),
    };
    reply(outcome)
}

/// Bodies above this many bytes are never `quick`.
const QUICK_BODY: usize = 4096;

/// Whether the call is cheap enough to run on the caller's event loop instead of a thread of
/// its own (a thread hop and a wake-up there and back cost more than the work): a `note_list` of
/// one `key`'s current notes (no `query`, no `as_of`: a few records read from a snapshot). A
/// body that does not parse is not quick: the verb reports the error. Writes are not quick:
/// working a `note_write` out on the event loop cost the 8-writer CAS bench throughput (the
/// loop serialised what the verb pool spreads), though it saved CPU.
#[must_use]
pub fn quick(verb: &str, body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Peek {
        key: Option<serde::de::IgnoredAny>,
        query: Option<serde::de::IgnoredAny>,
        as_of: Option<serde::de::IgnoredAny>,
    }
    if body.len() > QUICK_BODY {
        return false;
    }
    verb == "note_list"
        && serde_json::from_slice::<Peek>(body).is_ok_and(|p| p.key.is_some() && p.query.is_none() && p.as_of.is_none())
}

/// Whether `submit` may run `verb` on the caller's event loop when no other write is in flight:
/// a `note_write` on a store whose index is current. Working a lone write out there (parsing,
/// reading the note, building its version: tens of microseconds) spares it the hop to a pool
/// thread; with writes in flight the pool spreads that work over the cores instead (see `quick`).
/// A store still in the first index layout rebuilds it on its first write, never on the loop.
#[must_use]
pub fn quick_write(store: &Store, verb: &str) -> bool {
    verb == "note_write" && index::current(store).unwrap_or(false)
}

/// Where `submit` sends a verb's JSON reply (or its store failure).
pub type Answer = Box<dyn FnOnce(Result<Vec<u8>>) + Send>;

/// As `call`, answering through `done` instead of returning. A `note_write` is worked out on the
/// calling thread and queued for the writer, and the calling thread is free at once: `done` runs
/// on the store's syncer thread once the write is durable (or has failed), so no thread waits
/// for the fsync. Every other verb runs on the calling thread and answers before this returns.
pub fn submit(store: &Store, verb: &str, caller: &Caller, body: &[u8], done: Answer) {
    if verb != "note_write" {
        return done(call(store, verb, caller, body));
    }
    if let Err(e) = index::upgrade(store) {
        return done(Err(e));
    }
    write::submit(store, caller, body, Box::new(move |outcome| done(reply(outcome))));
}

/// A verb's outcome as its JSON reply: a refusal is a reply too.
fn reply(outcome: super::Outcome<serde_json::Value>) -> Result<Vec<u8>> {
    let reply = match outcome {
        Ok(reply) => reply,
        Err(Fail::Refused(refusal)) => refusal.reply(),
        Err(Fail::Store(e)) => return Err(e),
    };
    Ok(serde_json::to_vec(&reply).expect("a JSON value serialises"))
}
