//! Forgetting a fact: the relation `from` → `to` of one type, every version of it (the live one
//! and every ended one kept for history), named by its ends or by the id of any version. The
//! entities at its ends stay.

use super::super::fact_readings;
use super::super::facts_between::{self, Keep};
use super::super::graph::Relation;
use super::super::part::Partition;
use super::super::recall::add_suggestions;
use super::super::records::decode;
use super::super::tally::Tally;
use super::super::trees::{REL, rel_key};
use super::super::type_spelling::TypeSpellings;
use super::subject::names_meant;
use super::{
    Counts, Kept, Outcome, Strip, buried, bury_relation, entity_in, fact_target, missing, name_of, remove_relation,
    strip_events,
};
use crate::error::Result;
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

/// Forgets every version of the fact `fact` names, in every reading of it (`fact_readings.rs`):
/// named from the other end of a symmetric or inverse type, it is the fact stored from this one.
pub fn forget_fact(tx: &mut WriteTxn<'_>, part: &Partition, fact: &FactRef, now: i64) -> Result<Outcome> {
    // The type as spelled: the rules read `childOf` as `child_of`, which its fold no longer says.
    let (from, to, rel_type, readings, asked) = match fact {
        FactRef::Id(id) => {
            let Some(bytes) = tx.get(REL, &rel_key(part, *id))? else {
                return missing(tx, part, "fact_id", &id.to_string(), format!("no fact has id {id}"));
            };
            let rel: Relation = decode(&bytes, "relation")?;
            (rel.from, rel.to, rel.rel_type.trim().to_owned(), Vec::new(), format!("no fact has id {id}"))
        }
        FactRef::Ends { from, to, rel_type } => {
            // Named as the partition spells the type, as `relate` stores it (`type_spelling.rs`).
            let rel_type = &TypeSpellings::default().resolve(tx, part, rel_type)?;
            let readings: Vec<String> = fact_readings::readings(from, rel_type, to)
                .into_iter()
                .map(|(f, t, o)| fact_target(&f, &t, &o))
                .collect();
            let (f, t) = (entity_id(tx, part, from)?, entity_id(tx, part, to)?);
            let message = format!("no fact {from:?} -[{rel_type}]-> {to:?} is stored");
            let (Some(f), Some(t)) = (f, t) else {
                let unknown: Vec<&str> =
                    [(f, from), (t, to)].into_iter().filter(|(id, _)| id.is_none()).map(|(_, n)| n.as_str()).collect();
                return match unstored(tx, part, &readings, message)? {
                    Outcome::NotFound { message, .. } => Ok(Outcome::NotFound {
                        did_you_mean: ends_meant(tx, part, &unknown)?,
                        message,
                        stored_between: Vec::new(),
                    }),
                    answered => Ok(answered),
                };
            };
            (f, t, rel_type.trim().to_owned(), readings, message)
        }
    };
    let versions: Vec<Relation> = fact_readings::stored_versions(tx, part, (from, to), &rel_type)?;
    if versions.is_empty() {
        return match unstored(tx, part, &readings, asked)? {
            // Both ends are stored: what joins them is what the caller may have meant.
            Outcome::NotFound { message, did_you_mean, .. } => {
                let stored_between = facts_between::between(tx, part, (from, to), Keep::Live)?;
                let message = facts_between::message(message, &stored_between);
                Ok(Outcome::NotFound { message, did_you_mean, stored_between })
            }
            answered => Ok(answered),
        };
    }
    let mut tally = Tally::default();
    // Each version is buried under the reading it is stored in; the events filed under any reading
    // go (a `relate` input naming the fact from its other end is filed on the facts it ended).
    let mut targets = readings;
    for rel in &versions {
        let target = fact_target(&name_of(tx, part, rel.from)?, &rel.rel_type, &name_of(tx, part, rel.to)?);
        remove_relation(tx, part, rel, &mut tally)?;
        bury_relation(tx, part, rel, &target, now)?;
        targets.push(target);
    }
    tally.flush(tx)?;
    targets.sort_unstable();
    targets.dedup();
    strip_events(tx, part, &Strip::Facts(&targets))?;
    let counts = Counts { facts: versions.len() as u64, ..Counts::default() };
    let kept = vec![Kept { what: "entities", count: 2, why: "the ends of a fact are entities in their own right" }];
    Ok(Outcome::Forgotten { counts, kept })
}

/// The stored names the `unknown` ends of a fact may mean (`names_meant`, the subject form's
/// rule), each end's in turn, at most three in all: a misspelt end ("Priya Ramen") answered
/// nothing before, where forgetting the subject offered "Priya Raman".
fn ends_meant(tx: &mut WriteTxn<'_>, part: &Partition, unknown: &[&str]) -> Result<Vec<String>> {
    let mut meant: Vec<String> = Vec::new();
    for end in unknown {
        add_suggestions(&mut meant, names_meant(tx, part, end)?);
    }
    Ok(meant)
}

/// The answer for a fact with no stored version: "already forgotten" when a reading of it went
/// before (`readings`, as `fact_target`s, the one asked first), else not found.
fn unstored(tx: &mut WriteTxn<'_>, part: &Partition, readings: &[String], message: String) -> Result<Outcome> {
    for target in readings.iter().skip(1) {
        if buried(tx, part, "fact", target)? {
            return Ok(Outcome::AlreadyForgotten);
        }
    }
    missing(tx, part, "fact", readings.first().map_or("", String::as_str), message)
}
