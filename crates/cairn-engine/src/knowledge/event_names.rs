//! The stored spellings `memory_history` reads knowledge events under. Writers file an entity's
//! events under its stored name and a fact's under its ends' stored names and its stored type; a
//! reader names them the way recall resolves a name that is exact or differs only in case (and
//! accents or spacing), a type up to case, or as another spelling of it (`type_spelling.rs`), and
//! a fact in any reading of it: from its other end under a symmetric or inverse type too, as
//! `relate` and `forget` name it (`fact_readings.rs`).

use super::derive::rule_key;
use super::edge_reads;
use super::edge_view::EdgeView;
use super::fact_readings;
use super::facts_between::{self, Between, Keep};
use super::forget::{buried_in, fact_target};
use super::graph::{self, MAX_NAME_LEN, Relation, has_control};
use super::part::Partition;
use super::trees::{FORGOTTEN, SEQ, forgotten_key, keyed_type, legacy_forgotten_key};
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::text::fold;

/// The stored name of the entity `name` names, if one does (a name no entity could have names none).
pub(crate) fn entity(snap: &Snapshot, part: &Partition, name: &str) -> Result<Option<String>> {
    Ok(stored(snap, part, name)?.map(|e| e.name))
}

/// Whether an entity of this name (folded) was forgotten: its events went with it, so its
/// history is an empty page, not a miss (`forget/subject.rs` keeps the same marker).
pub(crate) fn entity_forgotten(snap: &Snapshot, part: &Partition, name: &str) -> Result<bool> {
    let folded = fold(name.trim());
    Ok(snap.get(FORGOTTEN, &forgotten_key(part, &folded))?.is_some()
        || snap.get(FORGOTTEN, &legacy_forgotten_key(part, &folded))?.is_some())
}

/// Whether the partition was forgotten whole (`forget {all}`, `delete_user`): no marker of what
/// went is kept, but its id counter moves to its retired partition (`forget/retire.rs`), so every
/// name there reads as forgotten, an empty page, not as never stored.
pub(crate) fn scope_forgotten(snap: &Snapshot, part: &Partition) -> Result<bool> {
    Ok(snap.get(SEQ, part.retired().prefix())?.is_some())
}

/// The targets of the fact stored under `id`, in every reading (`fact`), if one is.
pub(crate) fn fact_by_id(snap: &Snapshot, part: &Partition, id: u64) -> Result<Option<Vec<String>>> {
    let Some(rel) = graph::relation_by_id(snap, part, id)? else { return Ok(None) };
    let name = |id| -> Result<String> { Ok(graph::entity_by_id(snap, part, id)?.map_or_else(String::new, |e| e.name)) };
    let (from, to) = (name(rel.from)?, name(rel.to)?);
    Ok(Some(fact(snap, part, (&from, &rel.rel_type, &to))?.targets))
}

/// Whether the fact of id `id` was forgotten (its tombstone is kept).
pub(crate) fn fact_id_forgotten(snap: &Snapshot, part: &Partition, id: u64) -> Result<bool> {
    buried_in(snap, part, "fact_id", &id.to_string())
}

/// What `memory_history {fact}` reads for a fact: the targets its events are filed under, and
/// whether the fact is known at all.
pub(crate) struct FactNames {
    /// `from \0 type \0 to` of each stored fact the request names, in each reading of it
    /// (`fact_readings.rs`): its ends' stored names and the type as that fact spells it (as asked
    /// when no fact is stored as asked).
    pub(crate) targets: Vec<String>,
    /// Whether a reading of it is stored, or was forgotten (a forget leaves its tombstone): a
    /// fact neither stored nor forgotten was never stored.
    pub(crate) known: bool,
}

/// The stored fact `(from, type, to)` names, in every reading of it. Read from what names it:
/// the facts of the type between the two ends, and of its mirror types the other way, each from
/// the shorter of the two lists that can hold them (`edge_reads.rs`), so a fact at a hub reads
/// what a fact elsewhere does (found by an audit: every fact of `from` was read, record by
/// record).
pub(crate) fn fact(snap: &Snapshot, part: &Partition, (from, rel_type, to): (&str, &str, &str)) -> Result<FactNames> {
    let (Some(from_entity), Some(to_entity)) = (stored(snap, part, from)?, stored(snap, part, to)?) else {
        return Ok(FactNames { targets: Vec::new(), known: forgotten(snap, part, (from, rel_type, to))? });
    };
    let (r, ends) = (&mut &*snap, (from_entity.id, to_entity.id));
    // Up to case first, then as any spelling of the type (`type_spelling.rs`).
    let as_asked: Vec<EdgeView> = edge_reads::of_type(r, part, ends, &fold(rel_type.trim()))?;
    let spelled = match as_asked.into_iter().next() {
        Some(view) => Some(view.rel_type),
        None => other_spelling(r, part, ends, rel_type)?.map(|rel| rel.rel_type),
    };
    let mut known = spelled.is_some();
    let own = spelled.unwrap_or_else(|| rel_type.trim().to_owned());
    let mut targets = vec![format!("{}\0{own}\0{}", from_entity.name, to_entity.name)];
    for rel in from_other_end(r, part, ends, rel_type)? {
        known = true;
        let target = format!("{}\0{}\0{}", to_entity.name, rel.rel_type, from_entity.name);
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    let known = known || forgotten(snap, part, (from, rel_type, to))?;
    Ok(FactNames { targets, known })
}

/// The fact from `from` to `to` whose type is another spelling of `rel_type`, the first as
/// `from`'s list holds them (by folded type, then id). Those spellings are more than can be
/// listed (`works at`, `worksAt`, `Works-At`, `works__at`), so every fact between the two ends is
/// read, from the end with fewer facts: a fact asked in its stored spelling never gets here.
fn other_spelling(
    r: &mut &Snapshot,
    part: &Partition,
    (from, to): (u64, u64),
    rel_type: &str,
) -> Result<Option<Relation>> {
    let key = rule_key(rel_type);
    let between = edge_reads::any_type(r, part, (from, to), usize::MAX)?.unwrap_or_default();
    Ok(between
        .into_iter()
        .filter(|rel| (rel.from, rel.to) == (from, to) && rule_key(&rel.rel_type) == key)
        .min_by_key(|rel| (listed(part, &rel.rel_type), rel.id)))
}

/// The facts stored from `to` to `from` that state `from -[rel_type]-> to` from the other end
/// (`fact_readings.rs`), in the order `from`'s inbound list holds them (by folded type, then
/// id). A fact from an entity to itself is not among them: it is its own stored reading.
fn from_other_end(r: &mut &Snapshot, part: &Partition, ends: (u64, u64), rel_type: &str) -> Result<Vec<EdgeView>> {
    let mut stated: Vec<EdgeView> = fact_readings::mirrored(r, part, ends, rel_type)?;
    stated.retain(|rel| rel.from != rel.to);
    stated.sort_by_key(|rel| (listed(part, &rel.rel_type), rel.id));
    Ok(stated)
}

/// A stored type as adjacency keys hold it, which orders an entity's list.
fn listed(part: &Partition, rel_type: &str) -> Vec<u8> {
    keyed_type(part, &fold(rel_type.trim())).into_owned()
}

/// Whether a reading of the fact `from -[rel_type]-> to` (the type as spelled) was forgotten.
fn forgotten(snap: &Snapshot, part: &Partition, (from, rel_type, to): (&str, &str, &str)) -> Result<bool> {
    for (f, t, o) in fact_readings::readings(from, rel_type, to) {
        if buried_in(snap, part, "fact", &fact_target(&f, &t, &o))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The facts stored between the entities `from` and `to` name, live and ended, for a fact named
/// with another type or direction (`facts_between.rs`): history reads ended facts too.
pub(crate) fn facts_between(snap: &Snapshot, part: &Partition, (from, to): (&str, &str)) -> Result<Vec<Between>> {
    let (Some(from), Some(to)) = (stored(snap, part, from)?, stored(snap, part, to)?) else { return Ok(Vec::new()) };
    facts_between::between(&mut &*snap, part, (from.id, to.id), Keep::Stored)
}

fn stored(snap: &Snapshot, part: &Partition, name: &str) -> Result<Option<graph::Entity>> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.len() > MAX_NAME_LEN || has_control(trimmed) {
        return Ok(None);
    }
    graph::entity_by_name(snap, part, trimmed)
}
