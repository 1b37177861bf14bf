//! Per-call limits of the knowledge verbs (DESIGN.md §2 `memory_remember`). A call over a limit is
//! refused whole, naming the field, before anything is written.

/// Entities in one `remember` call.
pub const MAX_ENTITIES: usize = 1000;
/// Relations in one `remember` call.
pub const MAX_RELATIONS: usize = 5000;
/// Passages in one `remember` call.
pub const MAX_PASSAGES: usize = 1000;
/// Bytes of one given passage.
pub const MAX_PASSAGE_BYTES: usize = 64 * 1024;
/// Bytes of text in one call (content, messages or passages together).
pub use super::docs::MAX_TEXT_BYTES;
/// Bytes of a name: entity, type, relation type, mention, source label.
pub use super::graph::MAX_NAME_LEN;
/// Facts a recall returns unless `k` says otherwise.
pub const RECALL_K: usize = 50;
/// The most facts a recall may ask for.
pub const MAX_RECALL_K: usize = 1000;
/// Items a context returns unless `k` says otherwise.
pub const CONTEXT_K: usize = 8;
/// Hops a context walks unless `hops` says otherwise.
pub const CONTEXT_HOPS: usize = 2;
/// Longest question, in bytes.
pub const MAX_QUESTION_BYTES: usize = 4096;
