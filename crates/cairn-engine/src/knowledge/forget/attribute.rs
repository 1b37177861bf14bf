//! Forgetting one attribute of an entity (`{subject, key}`): the key and its value go from the
//! entity; the entity, its other attributes and its facts stay.

use super::super::graph::Entity;
use super::super::part::Partition;
use super::super::records::encode;
use super::super::trees::{ENT, ent_key};
use super::subject::names_meant;
use super::{Counts, Outcome, Strip, bury, entity_in, missing, strip_events};
use crate::error::{Error, Result};
use crate::text::fold;
use crate::write::WriteTxn;

/// Forgets attribute `key` of the entity named `subject` (up to case and spacing: only the
/// `subject` form of forget asks for the exact name, DESIGN.md §2).
pub fn forget_attribute(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    subject: &str,
    key: &str,
    now: i64,
) -> Result<Outcome> {
    if subject.trim().is_empty() {
        return Err(Error::InvalidArgument("attribute.subject must not be empty".into()));
    }
    if key.is_empty() {
        return Err(Error::InvalidArgument("attribute.key must not be empty".into()));
    }
    let target = format!("{}\0{key}", fold(subject.trim()));
    let Some(mut entity): Option<Entity> = entity_in(tx, part, subject)? else {
        let message = format!("no entity is named {subject:?}, in any case");
        return Ok(match missing(tx, part, "attribute", &target, message)? {
            // A subject that names no entity is offered the names it may mean, as the `subject`
            // form offers them (found by an audit: this form offered none).
            Outcome::NotFound { message, .. } => Outcome::NotFound {
                message,
                did_you_mean: names_meant(tx, part, subject.trim())?,
                stored_between: Vec::new(),
            },
            other => other,
        });
    };
    if entity.attributes.remove(key).is_none() {
        return missing(tx, part, "attribute", &target, format!("{:?} has no attribute {key:?}", entity.name));
    }
    // Only an attribute goes: the entity and its types stay, so no count changes (`tally.rs`).
    tx.put(ENT, &ent_key(part, entity.id), &encode(&entity))?;
    super::super::attr_index::remove(tx, part, entity.id, Some(key))?;
    bury(tx, part, "attribute", &target, now)?;
    strip_events(tx, part, &Strip::Attribute(&fold(subject.trim()), key))?;
    Ok(Outcome::Forgotten { counts: Counts { attributes: 1, ..Counts::default() }, kept: Vec::new() })
}
