//! Who stated a fact: a relation's `source` (its first provenance) and `also`, each other
//! provenance that said it again. A provenance is a document (by id), else a source label, else
//! none (asserted without one): the same fact said under another is another statement of it,
//! recorded (`relate` makes it a revision) so that `forget {source}` of one keeps what another
//! still states and finds the second at all (found by an audit: `Acme located_in Berlin` under
//! `press`, then `wiki`, wrote nothing the second time; forgetting `press` took the fact `wiki`
//! states, and forgetting `wiki` was a 404). The entity half is `attribute_sources.rs`.

use super::graph::{Relation, Source};
use serde::{Deserialize, Serialize};

/// Another provenance of a fact: who said it under which source, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Also {
    pub source: Source,
    /// The agent that said it (from its token).
    pub agent: String,
    /// When the store learnt it from this provenance (ms since the epoch).
    pub recorded_at: i64,
    /// The call's `date`, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_date: Option<String>,
}

/// Whether `a` and `b` are one provenance: the same document, or both asserted under the same
/// label (or both under none). A document's label is its document's, so its id decides.
pub(crate) fn same(a: &Source, b: &Source) -> bool {
    match (a, b) {
        (Source::Document { doc_id: x, .. }, Source::Document { doc_id: y, .. }) => x == y,
        (Source::Asserted { label: x }, Source::Asserted { label: y }) => x == y,
        _ => false,
    }
}

/// Whether `rel` has `source` among its provenances.
pub(crate) fn states(rel: &Relation, source: &Source) -> bool {
    same(&rel.source, source) || rel.also.iter().any(|a| same(&a.source, source))
}

/// `rel` once `said` (another provenance, not yet among its own) states it too. A fact only
/// asserted so far that a document states is cited from that document from then on (found by
/// an audit: the document's support was dropped); its asserted provenance comes first among
/// `also`, so forgetting the document's source keeps the fact.
pub(crate) fn add(rel: &mut Relation, said: Also) {
    if matches!(rel.source, Source::Asserted { .. }) && matches!(said.source, Source::Document { .. }) {
        let asserted = Also {
            source: std::mem::replace(&mut rel.source, said.source),
            agent: std::mem::replace(&mut rel.agent, said.agent),
            recorded_at: rel.recorded_at,
            source_date: None,
        };
        rel.also.insert(0, asserted);
    } else {
        rel.also.push(said);
    }
}

/// What is left of a record once the provenances `gone` tells are taken from it.
#[derive(Debug, PartialEq)]
pub(crate) enum Left {
    /// None of its provenances went.
    Untouched,
    /// Another provenance still states it: the record without the ones that went, the first
    /// left promoted to `source` if its own went.
    Rewritten(Box<Relation>),
    /// Every provenance it had went.
    Gone,
}

/// `rel` without the provenances `gone` tells.
pub(crate) fn without(rel: &Relation, gone: &dyn Fn(&Source) -> bool) -> Left {
    let own = gone(&rel.source);
    if !own && !rel.also.iter().any(|a| gone(&a.source)) {
        return Left::Untouched;
    }
    let mut left = rel.clone();
    left.also.retain(|a| !gone(&a.source));
    if own {
        if left.also.is_empty() {
            return Left::Gone;
        }
        let first = left.also.remove(0);
        left.source = first.source;
        left.agent = first.agent;
    }
    Left::Rewritten(Box::new(left))
}
