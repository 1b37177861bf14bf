//! The knowledge model: entities and typed relations, partitioned by (tenant, user, scope). This
//! is the first slice of the knowledge issue: partitions, ids, entities with types and
//! attributes, relations with provenance and valid/transaction time, and both-direction
//! adjacency. Records are JSON (self-describing, so later fields can be added without a format
//! change); keys are laid out in `docs/design/knowledge-keys.md`.

pub mod api;
mod cache;
mod citation;
mod context;
mod derive;
mod docs;
mod forget;
mod graph;
pub mod limits;
mod ontology;
mod part;
#[cfg(test)]
mod properties;
mod recall;
mod records;
#[cfg(test)]
mod testing;
mod trees;
pub mod wire;

pub use context::{Ask, Channel, Context, Coverage, Grounding, Item, ItemKind, MAX_HOPS, RRF_K, Seed, context};
pub use derive::{Derived, INVERSE, MAX_LINKS, Rule, SYMMETRIC, TRANSITIVE};
pub use docs::{Document, MAX_TEXT_BYTES, PassageSpan, Remembered, remember_text};
pub use forget::{Forgot, forget_subject};
pub use graph::{
    Assertion, Direction, Entity, Neighbour, Related, Relation, Source, entity_by_name, neighbours, relate,
    upsert_entity,
};
pub use ontology::{Ontology, TypeCount, ontology};
pub use part::Partition;
pub use recall::{Recall, SUGGESTIONS, When, recall};
pub(crate) use trees::next_id;
