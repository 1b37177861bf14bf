//! The knowledge model: entities and typed relations, partitioned by (tenant, user, scope). This
//! is the first slice of the knowledge issue: partitions, ids, entities with types and
//! attributes, relations with provenance and valid/transaction time, and both-direction
//! adjacency. Records are JSON (self-describing, so later fields can be added without a format
//! change); keys are laid out in `docs/design/knowledge-keys.md`.

pub mod api;
mod asked_moment;
mod asked_time;
mod attr_index;
pub(crate) mod attr_index_build;
#[cfg(test)]
mod attr_index_tests;
pub(crate) mod attr_writes;
pub(crate) mod attr_writes_build;
#[cfg(test)]
mod attr_writes_tests;
mod attribute_sources;
pub(crate) mod attribute_time;
pub(crate) mod build_once;
mod cache;
mod cache_budget;
mod citation;
mod context;
mod context_derived;
mod context_walk;
mod cursor;
mod derive;
mod derived_words;
mod docs;
pub(crate) mod edge_reads;
mod edge_view;
mod elsewhere;
#[cfg(test)]
mod elsewhere_tests;
mod entity_windows;
mod ergative_verbs;
pub(crate) mod event_names;
pub(crate) mod event_view;
mod event_writes;
#[cfg(test)]
mod exchange_notes_tests;
#[cfg(test)]
mod exchange_properties;
#[cfg(test)]
mod exchange_split_tests;
#[cfg(test)]
mod exchange_tests;
mod export;
mod fact_attribute_time;
#[cfg(test)]
mod fact_attribute_time_tests;
mod fact_readings;
#[cfg(test)]
mod fact_readings_tests;
#[cfg(test)]
mod fact_revisions_tests;
mod fact_sources;
#[cfg(test)]
mod fact_sources_tests;
mod fact_writes;
mod fact_writes_build;
#[cfg(test)]
mod fact_writes_properties;
#[cfg(test)]
mod fact_writes_tests;
pub(crate) mod facts_between;
#[cfg(test)]
mod facts_between_tests;
mod foreign_stems;
mod forget;
pub(crate) mod fts_terms_build;
mod graph;
mod grounding_rules;
#[cfg(test)]
mod heading_tests;
#[cfg(test)]
mod history_miss_tests;
#[cfg(test)]
mod hub_tests;
mod ids;
#[cfg(test)]
mod ids_tests;
mod import;
mod import_attributes;
pub(crate) mod import_checks;
mod import_fact_runs;
mod import_links;
#[cfg(test)]
mod import_links_tests;
#[cfg(test)]
mod import_origin_tests;
mod import_pairs;
#[cfg(test)]
mod import_pairs_tests;
mod import_provenance;
pub(crate) mod import_rules;
mod import_runs;
mod irregular_verbs;
pub mod limits;
mod load;
#[cfg(test)]
mod load_tests;
#[cfg(test)]
mod long_keys_tests;
#[cfg(test)]
mod notes_model;
#[cfg(test)]
mod now_tests;
mod ontology;
mod origin;
mod outside_time;
#[cfg(test)]
mod outside_time_tests;
mod part;
mod past_adjacency;
pub(crate) mod past_adjacency_build;
#[cfg(test)]
mod past_adjacency_properties;
#[cfg(test)]
mod past_adjacency_tests;
mod present_adjacency;
#[cfg(test)]
mod present_adjacency_properties;
#[cfg(test)]
mod present_adjacency_tests;
#[cfg(test)]
mod properties;
mod question_clauses;
mod question_language;
mod recall;
mod recency;
mod records;
mod relate_plan;
#[cfg(test)]
mod relate_plan_properties;
#[cfg(test)]
mod replaces_scale_tests;
pub mod shown_attributes;
pub(crate) mod source_index;
pub(crate) mod source_index_build;
#[cfg(test)]
mod source_index_tests;
mod spread;
pub(crate) mod tally;
pub(crate) mod tally_build;
#[cfg(test)]
mod tally_tests;
#[cfg(test)]
mod testing;
#[cfg(test)]
pub(crate) mod testing_api;
mod trees;
mod type_spelling;
#[cfg(test)]
mod type_spelling_tests;
mod unsaid_agent;
mod valid;
#[cfg(test)]
mod valid_properties;
mod version_writes;
#[cfg(test)]
mod version_writes_tests;
pub mod wire;
mod write_runs;
#[cfg(test)]
mod write_runs_tests;
#[cfg(test)]
mod yes_no_grounding_tests;

pub use crate::time::{iso_ms, parse_iso_ms};
pub(crate) use attribute_time::source_of;
pub use cache_budget::{DEFAULT_BYTES as NAME_CACHE_BYTES, set_budget as set_name_cache_bytes};
pub use context::{Ask, Channel, Context, Coverage, Grounding, Item, ItemKind, MAX_HOPS, RRF_K, Seed, context};
pub use derive::{Derived, INVERSE, MAX_LINKS, Rule, SYMMETRIC, TRANSITIVE};
pub use docs::{Document, MAX_TEXT_BYTES, PassageSpan, Remembered, remember_text};
pub(crate) use export::json_len;
pub use export::{
    DEFAULT_LIMIT as EXPORT_DEFAULT_LIMIT, FORMAT as EXPORT_FORMAT, MAX_LIMIT as EXPORT_MAX_LIMIT,
    PAGE_BYTES as EXPORT_PAGE_BYTES, Page, Reader, export,
};
pub(crate) use forget::entity_in;
pub use forget::{
    Counts, FactRef, Forgot, Kept, Outcome, UserDeleted, compact, delete_user, forget_attribute, forget_document,
    forget_fact, forget_scope, forget_source, forget_subject, rehash_forgotten, subject_outcome,
};
pub use graph::{
    Assertion, Direction, Entity, Neighbour, Related, Relation, Source, entity_by_name, neighbours, relate,
    upsert_entity,
};
pub(crate) use ids::next_id;
pub(crate) use import::{IMPORT_MAP, import_among};
pub use import::{ImportCounts, Imported, Skipped, import};
pub(crate) use import_pairs::{Kept as KeptPairs, Pairs as ImportPairs};
pub use ontology::{Ontology, TypeCount, ontology};
pub use origin::Origin;
pub use part::Partition;
pub(crate) use part::user_scopes;
pub(crate) use recall::add_suggestions;
pub use recall::{Recall, SUGGESTIONS, When, recall};
