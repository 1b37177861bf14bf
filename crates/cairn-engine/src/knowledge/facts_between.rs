//! What is stored between two entities, offered when a fact named `{from, to, type}` has both
//! ends stored but no fact of that type joins them in any reading: the caller had the type
//! wrong (`works_at` for a stored `employed_by`) or the direction reversed (found by an audit:
//! such a 404 offered nothing, where a misspelt end offered names). `forget {fact}` offers live
//! facts only, what it can forget as named; `memory_history {fact}` offers ended ones too, whose
//! events it reads. A forgotten fact is gone from the graph, so never offered. Facts are read
//! from the partition only (own tenant, user and scope), from the end with fewer edges, at most
//! `MOST_EDGES_READ` of them: between two larger hubs nothing is offered.

use super::graph::{self, Relation};
use super::part::Partition;
use super::recall::SUGGESTIONS;
use super::trees::{ADJ, adj_prefix, trailing_id};
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::text::fold;
use crate::write::WriteTxn;
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

/// The reads the facts between two entities take: a write transaction's (`forget`) or a
/// snapshot's (`memory_history`).
pub(crate) trait Reads {
    /// The ids of the relations at `entity` (both directions), when there are at most `max`.
    fn edges_within(&mut self, part: &Partition, entity: u64, max: usize) -> Result<Option<Vec<u64>>>;
    fn relation(&mut self, part: &Partition, id: u64) -> Result<Option<Relation>>;
    /// The stored name of entity `id` (empty when it is gone).
    fn name(&mut self, part: &Partition, id: u64) -> Result<String>;
}

impl Reads for WriteTxn<'_> {
    fn edges_within(&mut self, part: &Partition, entity: u64, max: usize) -> Result<Option<Vec<u64>>> {
        let Some(entries) = self.prefix_within(ADJ, &adj_prefix(part, entity), max)? else { return Ok(None) };
        entries.iter().map(|(k, _)| trailing_id(k)).collect::<Result<_>>().map(Some)
    }

    fn relation(&mut self, part: &Partition, id: u64) -> Result<Option<Relation>> {
        graph::relation_in(self, part, id)
    }

    fn name(&mut self, part: &Partition, id: u64) -> Result<String> {
        Ok(graph::entity_in(self, part, id)?.map(|e| e.name).unwrap_or_default())
    }
}

impl Reads for &Snapshot {
    fn edges_within(&mut self, part: &Partition, entity: u64, max: usize) -> Result<Option<Vec<u64>>> {
        let mut ids = Vec::new();
        self.scan_prefix(ADJ, &adj_prefix(part, entity), |k, _| {
            ids.push(trailing_id(k)?);
            Ok(ids.len() <= max)
        })?;
        Ok((ids.len() <= max).then_some(ids))
    }

    fn relation(&mut self, part: &Partition, id: u64) -> Result<Option<Relation>> {
        graph::relation_by_id(self, part, id)
    }

    fn name(&mut self, part: &Partition, id: u64) -> Result<String> {
        Ok(graph::entity_by_id(self, part, id)?.map(|e| e.name).unwrap_or_default())
    }
}

/// Up to `SUGGESTIONS` facts stored between entities `a` and `b` of `part`, each once (by its
/// ends and folded type): those from `a` to `b` first (the direction asked), live before ended,
/// then by type.
pub(crate) fn between(r: &mut impl Reads, part: &Partition, (a, b): (u64, u64), keep: Keep) -> Result<Vec<Between>> {
    let Some(ids) = shorter_end(r, part, (a, b))? else { return Ok(Vec::new()) };
    let mut found: Vec<(bool, bool, String, Relation)> = Vec::new();
    for id in ids {
        let Some(rel) = r.relation(part, id)? else { continue };
        let joins = (rel.from, rel.to) == (a, b) || (rel.from, rel.to) == (b, a);
        // An earlier version of a revised fact is that fact; forget offers what is not ended.
        if !joins || rel.version_of.is_some() || (keep == Keep::Live && rel.ended_at.is_some()) {
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

/// The relation ids of whichever of `a` and `b` has fewer edges, read a growing stretch at a time
/// (as `graph::edges_between`); `None` when both have more than `MOST_EDGES_READ`.
fn shorter_end(r: &mut impl Reads, part: &Partition, (a, b): (u64, u64)) -> Result<Option<Vec<u64>>> {
    let mut max = 16;
    loop {
        for end in [a, b] {
            if let Some(ids) = r.edges_within(part, end, max)? {
                return Ok(Some(ids));
            }
        }
        if max == MOST_EDGES_READ {
            return Ok(None);
        }
        max = (max * 8).min(MOST_EDGES_READ);
    }
}
