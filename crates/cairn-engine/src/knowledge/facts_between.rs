//! What is stored between two entities, offered when a fact named `{from, to, type}` has both
//! ends stored but no fact of that type joins them in any reading: the caller had the type
//! wrong (`works_at` for a stored `employed_by`) or the direction reversed (found by an audit:
//! such a 404 offered nothing, where a misspelt end offered names). `forget {fact}` offers live
//! facts only, what it can forget as named; `memory_history {fact}` offers ended ones too, whose
//! events it reads. A forgotten fact is gone from the graph, so never offered. Facts are read
//! from the partition only (own tenant, user and scope), from the end with fewer edges, at most
//! `MOST_EDGES_READ` of them: between two larger hubs nothing is offered.

use super::edge_reads::{self, Reads};
use super::graph::Relation;
use super::part::Partition;
use super::recall::SUGGESTIONS;
use crate::error::Result;
use crate::text::fold;
use serde_json::{Value, json};

/// Most edges of one end read for the facts between two entities.
const MOST_EDGES_READ: usize = 4096;

/// Which facts between the ends are offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Those not ended.
    Live,
    /// Those not ended, then ended ones.
    Stored,
}

/// A fact stored between the two ends, as stored: its ends' names and its type's exact spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Between {
    pub from: String,
    pub rel_type: String,
    pub to: String,
}

impl Between {
    /// A `details` entry of the 404: `did_you_mean` as the name suggestions have it (text), and
    /// `fact`, the object to send as `fact` to name it.
    #[must_use]
    pub fn detail(&self) -> Value {
        json!({
            "did_you_mean": format!("{} -[{}]-> {}", self.from, self.rel_type, self.to),
            "fact": { "from": self.from, "to": self.to, "type": self.rel_type },
        })
    }
}

/// `message` with the facts `between` named after it, for the model that reads only the message.
pub(crate) fn message(message: String, between: &[Between]) -> String {
    if between.is_empty() {
        return message;
    }
    let named: Vec<String> = between.iter().map(|b| format!("{:?} -[{}]-> {:?}", b.from, b.rel_type, b.to)).collect();
    format!("{message}; stored between them: {} (name a fact as stored)", named.join(", "))
}

/// Up to `SUGGESTIONS` facts stored between entities `a` and `b` of `part`, each once (by its
/// ends and folded type): those from `a` to `b` first (the direction asked), live before ended,
/// then by type.
pub(crate) fn between(r: &mut impl Reads, part: &Partition, (a, b): (u64, u64), keep: Keep) -> Result<Vec<Between>> {
    let Some(joining) = edge_reads::any_type(r, part, (a, b), MOST_EDGES_READ)? else { return Ok(Vec::new()) };
    let mut found: Vec<(bool, bool, String, Relation)> = Vec::new();
    for rel in joining {
        // An earlier version of a revised fact is that fact; forget offers what is not ended.
        if rel.version_of.is_some() || (keep == Keep::Live && rel.ended_at.is_some()) {
            continue;
        }
        found.push((rel.from != a, rel.ended_at.is_some(), fold(rel.rel_type.trim()), rel));
    }
    found.sort_by(|x, y| (x.0, x.1, &x.2, x.3.id).cmp(&(y.0, y.1, &y.2, y.3.id)));
    found.dedup_by(|x, y| x.0 == y.0 && x.2 == y.2);
    let mut out = Vec::new();
    for (_, _, _, rel) in found.into_iter().take(SUGGESTIONS) {
        let (from, to) = (r.name(part, rel.from)?, r.name(part, rel.to)?);
        out.push(Between { from, rel_type: rel.rel_type.trim().to_owned(), to });
    }
    Ok(out)
}
