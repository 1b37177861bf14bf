//! The stored spellings `memory_history` reads knowledge events under. Writers file an entity's
//! events under its stored name and a fact's under its ends' stored names and its stored type; a
//! reader names them the way recall resolves a name that is exact or differs only in case (and
//! accents or spacing), and a type up to case, or as another spelling of it (`type_spelling.rs`).

use super::graph::{self, Direction, MAX_NAME_LEN, has_control, neighbours};
use super::part::Partition;
use super::type_spelling::match_key;
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::text::fold;

/// The stored name of the entity `name` names, if one does (a name no entity could have names none).
pub(crate) fn entity(snap: &Snapshot, part: &Partition, name: &str) -> Result<Option<String>> {
    Ok(stored(snap, part, name)?.map(|e| e.name))
}

/// The target `from \0 type \0 to` of the stored fact `(from, type, to)` names: its ends' stored
/// names and the type as that fact spells it (as asked when no such fact is stored).
pub(crate) fn fact(
    snap: &Snapshot,
    part: &Partition,
    (from, rel_type, to): (&str, &str, &str),
) -> Result<Option<String>> {
    let (Some(from), Some(to)) = (stored(snap, part, from)?, stored(snap, part, to)?) else { return Ok(None) };
    // Up to case first, then as any spelling of the type (`type_spelling.rs`).
    let folded = fold(rel_type.trim());
    let key = match_key(rel_type);
    let outbound: Vec<_> = neighbours(snap, part, from.id)?
        .into_iter()
        .filter(|n| n.direction == Direction::Outbound && n.other == to.id)
        .collect();
    let spelled = outbound
        .iter()
        .find(|n| fold(&n.relation.rel_type) == folded)
        .or_else(|| outbound.iter().find(|n| match_key(&n.relation.rel_type) == key))
        .map_or_else(|| rel_type.trim().to_owned(), |n| n.relation.rel_type.clone());
    Ok(Some(format!("{}\0{spelled}\0{}", from.name, to.name)))
}

fn stored(snap: &Snapshot, part: &Partition, name: &str) -> Result<Option<graph::Entity>> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.len() > MAX_NAME_LEN || has_control(trimmed) {
        return Ok(None);
    }
    graph::entity_by_name(snap, part, trimmed)
}
