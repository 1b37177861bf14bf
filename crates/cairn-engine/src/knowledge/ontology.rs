//! The ontology summary of a partition (for `memory_status` with a scope): entity types and
//! relation types with live counts, in the exact spellings to reuse, and the largest classes.
//! Read from the partition's tally (`tally.rs`): a few keys per type, whatever the data's size.

use super::part::Partition;
use super::tally::{self, ENTITY_TYPE, RELATION_TYPE};
use crate::error::Result;
use crate::snapshot::Snapshot;

/// A type (entity or relation) and how many live things have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeCount {
    /// A spelling stored for it: the first one counted since its count was last zero (reuse it:
    /// types match case-insensitively).
    pub spelling: String,
    pub count: u64,
}

/// What a partition holds, by kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ontology {
    pub entities: u64,
    pub relations: u64,
    /// Entity types, largest class first (ties by spelling).
    pub entity_types: Vec<TypeCount>,
    /// Live relation types, most used first (ties by spelling).
    pub relation_types: Vec<TypeCount>,
}

/// Largest count first, ties by spelling.
pub(crate) fn ranked(mut out: Vec<TypeCount>) -> Vec<TypeCount> {
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.spelling.cmp(&b.spelling)));
    out
}

fn types(snap: &Snapshot, part: &Partition, kind: u8) -> Result<Vec<TypeCount>> {
    let list = tally::types(snap, part, kind)?;
    Ok(ranked(list.into_iter().map(|(spelling, count)| TypeCount { spelling, count }).collect()))
}

/// Summarises `part` as of `snap`; ended relations are not counted.
pub fn ontology(snap: &Snapshot, part: &Partition) -> Result<Ontology> {
    let totals = tally::totals(snap, part)?;
    Ok(Ontology {
        entities: totals.entities,
        relations: totals.relations,
        entity_types: types(snap, part, ENTITY_TYPE)?,
        relation_types: types(snap, part, RELATION_TYPE)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::testing::{assertion, fresh};
    use crate::knowledge::{Assertion, relate, upsert_entity};
    use serde_json::Map;

    #[test]
    fn counts_live_things_by_type_in_first_spellings() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        store
            .write(move |tx| {
                let none = Map::new();
                for (name, t) in [("Acme", "Company"), ("Globex", "company"), ("Priya", "Person")] {
                    upsert_entity(tx, &p, name, &[t.to_owned()], &none, 1)?;
                }
                relate(tx, &p, assertion("Priya", "Acme", "Works_At", &none, "a"), 2)?;
                relate(
                    tx,
                    &p,
                    Assertion { replaces: true, ..assertion("Priya", "Globex", "works_at", &none, "a") },
                    3,
                )?;
                relate(tx, &p, assertion("Acme", "Berlin", "located_in", &none, "a"), 4)
            })
            .unwrap();
        let o = ontology(&store.snapshot().unwrap(), &part).unwrap();
        assert_eq!((o.entities, o.relations), (4, 2), "Berlin counts; the ended relation does not");
        assert_eq!(
            o.entity_types,
            vec![TypeCount { spelling: "Company".into(), count: 2 }, TypeCount { spelling: "Person".into(), count: 1 }]
        );
        // The ended Works_At relation no longer counts, so the live one's spelling is the one shown.
        assert_eq!(
            o.relation_types,
            vec![
                TypeCount { spelling: "located_in".into(), count: 1 },
                TypeCount { spelling: "works_at".into(), count: 1 }
            ]
        );
        let other = Partition::new("local", "u2", "default").unwrap();
        let empty = ontology(&store.snapshot().unwrap(), &other).unwrap();
        assert_eq!((empty.entities, empty.relations, empty.entity_types.len()), (0, 0, 0));
    }
}
