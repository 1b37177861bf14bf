//! Forgetting a fact: the relation `from` → `to` of one type, every version of it (the live one
//! and every ended one kept for history), named by its ends or by the id of any version. The
//! entities at its ends stay.

use super::super::graph::Relation;
use super::super::part::Partition;
use super::super::records::decode;
use super::super::tally::Tally;
use super::super::trees::{ADJ, OUT, REL, adj_type_prefix, rel_key, trailing_id};
use super::super::type_spelling::TypeSpellings;
use super::{
    Counts, Kept, Outcome, Strip, bury_relation, entity_in, fact_target, missing, name_of, remove_relation,
    strip_events,
};
use crate::error::Result;
use crate::text::fold;
use crate::write::WriteTxn;

/// How a request names a fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactRef {
    /// By its ends and type (names matched exactly up to case and spacing; type case-insensitively).
    Ends { from: String, to: String, rel_type: String },
    /// By the id of any of its versions.
    Id(u64),
}

fn entity_id(tx: &mut WriteTxn<'_>, part: &Partition, name: &str) -> Result<Option<u64>> {
    Ok(entity_in(tx, part, name)?.map(|e| e.id))
}

/// Forgets every version of the fact `fact` names.
pub fn forget_fact(tx: &mut WriteTxn<'_>, part: &Partition, fact: &FactRef, now: i64) -> Result<Outcome> {
    let (from, to, folded_type, target) = match fact {
        FactRef::Id(id) => {
            let Some(bytes) = tx.get(REL, &rel_key(part, *id))? else {
                return missing(tx, part, "fact_id", &id.to_string(), format!("no fact has id {id}"));
            };
            let rel: Relation = decode(&bytes, "relation")?;
            let target = fact_target(&name_of(tx, part, rel.from)?, &rel.rel_type, &name_of(tx, part, rel.to)?);
            (rel.from, rel.to, fold(&rel.rel_type), target)
        }
        FactRef::Ends { from, to, rel_type } => {
            // Named as the partition spells the type, as `relate` stores it (`type_spelling.rs`).
            let rel_type = &TypeSpellings::default().resolve(tx, part, rel_type)?;
            let target = fact_target(from, rel_type, to);
            let message = format!("no fact {from:?} -[{rel_type}]-> {to:?} is stored");
            let (Some(f), Some(t)) = (entity_id(tx, part, from)?, entity_id(tx, part, to)?) else {
                return missing(tx, part, "fact", &target, message);
            };
            (f, t, fold(rel_type.trim()), target)
        }
    };
    let out_prefix = adj_type_prefix(part, from, OUT, &folded_type);
    let mut versions = Vec::new();
    for (key, _) in tx.prefix(ADJ, &out_prefix)? {
        if let Some(bytes) = tx.get(REL, &rel_key(part, trailing_id(&key)?))? {
            let rel: Relation = decode(&bytes, "relation")?;
            if rel.to == to {
                versions.push(rel);
            }
        }
    }
    if versions.is_empty() {
        return missing(tx, part, "fact", &target, "no version of this fact is stored".into());
    }
    let mut tally = Tally::default();
    for rel in &versions {
        remove_relation(tx, part, rel, &mut tally)?;
        bury_relation(tx, part, rel, &target, now)?;
    }
    tally.flush(tx)?;
    strip_events(tx, part, &Strip::Facts(std::slice::from_ref(&target)))?;
    let counts = Counts { facts: versions.len() as u64, ..Counts::default() };
    let kept = vec![Kept { what: "entities", count: 2, why: "the ends of a fact are entities in their own right" }];
    Ok(Outcome::Forgotten { counts, kept })
}
