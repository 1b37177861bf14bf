//! Entities and relations: an entity is identified in its partition by its folded name (so
//! "Priya Raman" and "priya  raman" are one entity); a relation is a typed edge with provenance,
//! valid time (`valid_from`/`valid_to`, as given) and transaction time (`recorded_at`, and
//! `ended_at` once it is superseded), indexed from both ends.

use super::edge_view::EdgeView;
use super::fact_attribute_time::{AttributeWrite, WritesIn, with_write};
use super::fact_sources::{self, Also};
use super::fact_writes::Kept;
use super::ids::next_id;
use super::part::Partition;
use super::records::{decode, encode};
use super::relate_plan::{Plan, plain, replace_in_valid_time};
use super::tally::Tally;
use super::trees::{
    ADJ, ADJ_PAST, ENT, ENT_NAME, IN, OUT, REL, adj_key, adj_prefix, adj_type_prefix, bump_names, ent_key, name_key,
    name_prefix, rel_key, trailing_id,
};
use super::type_spelling::TypeSpellings;
use super::valid;
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;
use crate::text::fold;
use crate::write::WriteTxn;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Longest entity name or relation type, in bytes (DESIGN.md §2: names 1 KiB).
pub const MAX_NAME_LEN: usize = 1024;

/// A stored entity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    pub id: u64,
    /// The spelling it was first stored with.
    pub name: String,
    pub types: Vec<String>,
    pub attributes: Map<String, Value>,
    /// Milliseconds since the Unix epoch.
    pub recorded_at: i64,
}

/// Where a relation came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// Stated directly by an agent.
    Asserted { label: Option<String> },
    /// Extracted from a stored document.
    Document { doc_id: u64, label: Option<String> },
}

/// A stored relation `from` → `to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Relation {
    pub id: u64,
    pub from: u64,
    pub to: u64,
    /// The type as first spelled; matched case-insensitively.
    #[serde(rename = "type")]
    pub rel_type: String,
    pub attributes: Map<String, Value>,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
    pub recorded_at: i64,
    pub ended_at: Option<i64>,
    pub source: Source,
    /// The agent that wrote it (from its token, never from a model).
    pub agent: String,
    /// Set when a `replaces` ended it and moved its `valid_to` to the replacing start: the
    /// `valid_to` it had until then, which an `as_of` read before the end sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortened: Option<Shortened>,
    /// When it was said (the call's `date`), kept when that is not its `valid_from`: a
    /// `valid_from` given beside a `date` says when it became true, the `date` when it was stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_date: Option<String>,
    /// Set on an earlier version of the live fact with this id, which a re-assertion revised (an
    /// earlier start, a later end, new attributes): kept, ended when the revision was recorded, so
    /// a read `as_of` before then sees the fact as it was known; no other read sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_of: Option<u64>,
    /// Its attribute writes, each with the start it stated, kept once a call changed what its
    /// attributes say from some start (`fact_attribute_time.rs`): in memory once a read needs
    /// them (`WritesIn::fill`), stored apart (`fact_writes.rs`, `writes`). Read from the records
    /// of a store written before, which held them here, and never written here again.
    #[serde(default, skip_serializing)]
    pub attribute_writes: Vec<AttributeWrite>,
    /// What it keeps in `k.fact_writes`; `None` until a call changed what its attributes say from
    /// some start: its attributes were all set at its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<Kept>,
    /// On an earlier version (`version_of`) whose fact kept a list: where its list is, in place of
    /// `attribute_writes` (`fact_attribute_time::WritesIn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes_in: Option<WritesIn>,
    /// Every other provenance that stated it, in the order they did (`fact_sources.rs`); empty
    /// (and absent in stores written before it was kept) when `source` is its only one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Also>,
}

/// A relation's valid end before a `replaces` shortened it (`None`: unbounded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortened {
    pub valid_to: Option<String>,
}

/// Which end of a relation an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Outbound,
    Inbound,
}

/// A relation seen from one of its ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    pub relation: Relation,
    pub direction: Direction,
    /// The entity at the other end.
    pub other: u64,
}

/// `name` trimmed and folded, after the checks every stored name passes (length, no control
/// character); `what` names it in the error.
pub(crate) fn check_name(name: &str, what: &str) -> Result<String> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.len() > MAX_NAME_LEN {
        return Err(Error::InvalidArgument(format!("{what} must be 1..={MAX_NAME_LEN} bytes, got {}", trimmed.len())));
    }
    if has_control(trimmed) {
        return Err(Error::InvalidArgument(format!("{what} must not contain control characters")));
    }
    let folded = fold(trimmed);
    if folded.is_empty() {
        return Err(Error::InvalidArgument(format!("{what} must hold a visible character")));
    }
    Ok(folded)
}

/// Whether `s` holds a control character (category Cc: U+0000–U+001F, U+007F–U+009F), which the
/// node refuses in names: a NUL would also split the `name \0 …` keys, so one name could be taken
/// for another it extends.
pub(crate) fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

fn find_id(tx: &mut WriteTxn<'_>, part: &Partition, folded: &str) -> Result<Option<u64>> {
    match tx.prefix(ENT_NAME, &name_prefix(part, folded))?.first() {
        Some((k, _)) => Ok(Some(trailing_id(k)?)),
        None => Ok(None),
    }
}

fn load_entity(tx: &mut WriteTxn<'_>, part: &Partition, id: u64) -> Result<Entity> {
    let bytes = tx
        .get(ENT, &ent_key(part, id))?
        .ok_or_else(|| Error::corrupt(None, format!("entity {id} is indexed but missing")))?;
    decode(&bytes, "entity")
}

/// Stores an entity, or merges into the one with the same folded name: new types are added
/// (case-insensitively once each), given attributes replace stored ones. Returns the entity and
/// whether it was created.
pub fn upsert_entity(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    name: &str,
    types: &[String],
    attributes: &Map<String, Value>,
    now: i64,
) -> Result<(Entity, bool)> {
    let mut tally = Tally::default();
    let out = upsert_counted(tx, part, (name, types, attributes), now, &mut tally)?;
    tally.flush(tx)?;
    Ok(out)
}

/// `upsert_entity`, its count changes left in `tally` (a bulk caller flushes them once).
pub(crate) fn upsert_counted(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (name, types, attributes): (&str, &[String], &Map<String, Value>),
    now: i64,
    tally: &mut Tally,
) -> Result<(Entity, bool)> {
    let folded = check_name(name, "entity name")?;
    for t in types {
        check_name(t, "entity type")?;
    }
    if let Some(id) = find_id(tx, part, &folded)? {
        let mut entity = load_entity(tx, part, id)?;
        let before = entity.clone();
        for t in types {
            if !entity.types.iter().any(|have| have.eq_ignore_ascii_case(t) || fold(have) == fold(t)) {
                entity.types.push(t.trim().to_owned());
            }
        }
        for (k, v) in attributes {
            entity.attributes.insert(k.clone(), v.clone());
        }
        // A value held before is filed already: only new ones are added.
        let new = attributes.iter().filter(|(k, v)| before.attributes.get(*k) != Some(*v));
        super::attr_index::add(tx, part, id, new)?;
        if entity != before {
            tx.put(ENT, &ent_key(part, id), &encode(&entity))?;
            tally.entity(part, Some(&before), Some(&entity));
        }
        if entity.types != before.types {
            // Type seeds (context's "which companies") come from the cached name index.
            bump_names(tx, part, id)?;
        }
        return Ok((entity, false));
    }
    let (entity, _) = create_entity(tx, part, (name, &folded), (types, attributes), now, tally)?;
    Ok((entity, true))
}

/// Stores a new entity named `name` (`folded` is `fold(name.trim())`, which no stored entity
/// has; types already checked), linked to the stored passages that name it, counted in `tally`.
/// Returns it and its record's bytes.
pub(crate) fn create_entity(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (name, folded): (&str, &str),
    (types, attributes): (&[String], &Map<String, Value>),
    now: i64,
    tally: &mut Tally,
) -> Result<(Entity, Vec<u8>)> {
    let id = next_id(tx, part)?;
    let mut kept_types: Vec<String> = Vec::new();
    for t in types {
        if !kept_types.iter().any(|have| fold(have) == fold(t)) {
            kept_types.push(t.trim().to_owned());
        }
    }
    let entity = Entity {
        id,
        name: name.trim().to_owned(),
        types: kept_types,
        attributes: attributes.clone(),
        recorded_at: now,
    };
    let bytes = encode(&entity);
    tx.put(ENT, &ent_key(part, id), &bytes)?;
    tally.entity(part, None, Some(&entity));
    tx.put(ENT_NAME, &name_key(part, folded, id), &[])?;
    super::attr_index::add(tx, part, id, &entity.attributes)?;
    bump_names(tx, part, id)?;
    super::docs::link_existing(tx, part, id, &entity.name)?;
    Ok((entity, bytes))
}

/// The entity whose folded name equals `name`'s, as of `snap`.
pub fn entity_by_name(snap: &Snapshot, part: &Partition, name: &str) -> Result<Option<Entity>> {
    let folded = check_name(name, "entity name")?;
    let Some(first) = snap.prefix(ENT_NAME, &name_prefix(part, &folded))?.next() else { return Ok(None) };
    let id = trailing_id(&first?.0)?;
    let bytes = snap
        .get(ENT, &ent_key(part, id))?
        .ok_or_else(|| Error::corrupt(None, format!("entity {id} is indexed but missing")))?;
    decode(&bytes, "entity").map(Some)
}

/// One relation to record.
#[derive(Debug, Clone)]
pub struct Assertion<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub rel_type: &'a str,
    /// Attributes; `valid_from` and `valid_to` (ISO 8601 strings) set the relation's valid time.
    pub attributes: &'a Map<String, Value>,
    pub source: Source,
    pub agent: &'a str,
    /// End the subject's other live relations of this type (they stay in history).
    pub replaces: bool,
    /// The call's `date`, when it gave one.
    pub date: Option<&'a str>,
}

/// What `relate` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    pub relation: Relation,
    /// A new relation was stored (else a live one was found and its attributes merged).
    pub created: bool,
    /// Relations ended by `replaces`.
    pub ended: Vec<u64>,
    /// An ended relation with the same ends and type that this assertion brings back: `relation`
    /// is it, live again under its own id (its earlier life is kept as an ended copy).
    pub restored: Option<u64>,
    /// The stored version this call merged into or restored (`None` when it created one); equal
    /// to `relation` when the call changed nothing.
    pub before: Option<Relation>,
    /// With `replaces`: edges of the type that start later in valid time than this assertion;
    /// it is older news, stored ended, true until the first of them starts.
    pub superseded_by: Vec<u64>,
}

impl Relation {
    /// Whether the store knew this relation as live at transaction time `as_of` (ms).
    #[must_use]
    pub fn known_at(&self, as_of: i64) -> bool {
        self.recorded_at <= as_of && self.ended_at.is_none_or(|end| end > as_of)
    }

    /// Whether a read `as_of` (now when `None`) may see this record at all: an earlier version of
    /// a revised fact (`version_of`) only before the revision was recorded (its `ended_at`).
    #[must_use]
    pub fn current_at(&self, as_of: Option<i64>) -> bool {
        self.version_of.is_none() || as_of.is_some_and(|t| self.ended_at.is_some_and(|end| t < end))
    }

    /// The start of its valid time as an instant (ms); `None` is unbounded.
    #[must_use]
    pub fn valid_start(&self) -> Option<i64> {
        self.valid_from.as_deref().and_then(valid::bound)
    }

    /// The end of its valid time as the store read it at `as_of` (now when `None`), an instant
    /// (ms); `None` is unbounded. An edge ended without a `valid_to` (stores written before
    /// `replaces` set one) was true until it was ended.
    #[must_use]
    pub fn valid_end(&self, as_of: Option<i64>) -> Option<i64> {
        let ended = self.ended_at.filter(|&end| as_of.is_none_or(|t| end <= t));
        self.valid_to_at(as_of).and_then(valid::bound).or(ended)
    }

    /// `valid_to` as the store read it at `as_of` (now when `None`): before a `replaces` ended
    /// the relation, the one it had then.
    #[must_use]
    pub fn valid_to_at(&self, as_of: Option<i64>) -> Option<&str> {
        let end_unknown = as_of.is_some_and(|t| self.ended_at.is_some_and(|end| end > t));
        match &self.shortened {
            Some(s) if end_unknown => s.valid_to.as_deref(),
            _ => self.valid_to.as_deref(),
        }
    }

    /// Whether the relation was true at instant `at` (ms), half-open `[valid_from, valid_to)`,
    /// as the store read it at `as_of`.
    #[must_use]
    pub fn valid_at(&self, at: i64, as_of: Option<i64>) -> bool {
        self.valid_start().is_none_or(|from| from <= at) && self.valid_end(as_of).is_none_or(|end| at < end)
    }
}

/// Records `a.from` → `a.to` of type `a.rel_type`, creating missing entities. Asserting a live
/// relation again (same ends, same type up to case) confirms it, or revises it where it adds
/// something (an earlier start, a later end, attributes): the fact keeps its id, and the version
/// known before is kept for `as_of` reads (`restated`). With `replaces`, the subject's other
/// relations of that type true at the assertion's `valid_from` (else now) end there in valid time
/// and now in transaction time (and are kept).
/// Asserting an ended relation again restores it: live again under its id from the assertion's
/// start, its earlier life kept as an ended copy so `as_of` and `valid_at` reads still see it. The
/// rules are `plain`'s and `replace_in_valid_time`'s (`relate_plan.rs`).
pub fn relate(tx: &mut WriteTxn<'_>, part: &Partition, a: Assertion<'_>, now: i64) -> Result<Related> {
    let mut tally = Tally::default();
    let none = Map::new();
    let (from_entity, _) = upsert_counted(tx, part, (a.from, &[], &none), now, &mut tally)?;
    let (to_entity, _) = upsert_counted(tx, part, (a.to, &[], &none), now, &mut tally)?;
    let related = relate_between(tx, part, (&from_entity, &to_entity), a, now, &mut tally)?;
    tally.flush(tx)?;
    Ok(related)
}

/// `relate` between entities the caller has already resolved (`a.from`/`a.to` name them).
pub(crate) fn relate_between(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (from_entity, to_entity): (&Entity, &Entity),
    a: Assertion<'_>,
    now: i64,
    tally: &mut Tally,
) -> Result<Related> {
    check_name(a.rel_type, "relation type")?;
    let spelling = TypeSpellings::default().resolve(tx, part, a.rel_type)?;
    let folded_type = fold(&spelling);
    let a = Assertion { rel_type: &spelling, ..a };
    let mut ids = |tx: &mut WriteTxn<'_>| next_id(tx, part);
    let (related, _) = relate_ids(tx, part, (from_entity.id, to_entity.id), &folded_type, (a, now), &mut ids, tally)?;
    Ok(related)
}

/// The plan (`relate_plan.rs`) of assertion `a` `from` → `to`, made from the stored edges it is
/// read against, each read as its light `EdgeView` (`edge_view.rs`), the edges the plan names
/// then read whole. `replaces` ends the subject's other edges of the type: it reads them all.
/// Otherwise only the fact's own edges count, in each of its readings (`fact_readings.rs`). A
/// symmetric or inverse type's edges stored from the other end say the same (`Bruno married_to
/// Ana` is `Ana married_to Bruno`, `X employs Priya` is `Priya employed_by X`: derive.rs), so they
/// are read too (found by an audit: said from the other end, a fact was stored twice, and
/// `replaces` left the other end's fact live). Each edge read has `from` at one end: the rules
/// compare its other end with `to`. The copies a fact keeps of itself are read only when they
/// may count (`past_adjacency.rs`), so a call costs the same after thousands of revisions; with
/// `every`, always (what they would change, a test compares).
pub(super) fn planned(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (from, to): (u64, u64),
    (a, now): (&Assertion<'_>, i64),
    attributes: &mut Map<String, Value>,
    every: bool,
) -> Result<Plan<Relation>> {
    let facts = if a.replaces {
        every_edge_of_type(tx, part, from, a.rel_type, false)?
    } else {
        super::fact_readings::stored_facts(tx, part, (from, to), a.rel_type)?
    };
    let views: Vec<EdgeView> = if every || may_need_past(&facts, attributes, now) {
        if a.replaces {
            every_edge_of_type(tx, part, from, a.rel_type, true)?.into_iter().map(|(v, _)| v).collect()
        } else {
            super::fact_readings::stored_versions(tx, part, (from, to), a.rel_type)?
        }
    } else {
        facts.into_iter().map(|(v, _)| v).collect()
    };
    let plan =
        if a.replaces { replace_in_valid_time(attributes, views, to, now) } else { plain(attributes, views, to, now)? };
    plan.read_whole(|view| relation_in(tx, part, view.id)?.ok_or_else(|| missing(view.id)))
}

/// Whether an earlier life a fact keeps apart may count in the plan of an assertion with
/// `attributes` (`past_adjacency.rs`): its start `s` (its `valid_from`, else now) is before the
/// bound of a fact's lives, or the fact starts after `s`, or the assertion gives an end and no
/// start. Never when no fact read keeps one.
fn may_need_past(facts: &[(EdgeView, Option<i64>)], attributes: &Map<String, Value>, now: i64) -> bool {
    let given = attributes.get("valid_from").and_then(Value::as_str).and_then(valid::bound);
    let start = given.unwrap_or(now);
    let ends_only = given.is_none() && attributes.contains_key("valid_to");
    facts.iter().any(|(fact, bound)| {
        bound.is_some_and(|b| ends_only || b > start || super::edge_view::Edge::start(fact).is_some_and(|s| s > start))
    })
}

/// An adjacency entry naming relation `id`, which is not stored: corruption.
fn missing(id: u64) -> Error {
    Error::corrupt(None, format!("relation {id} is indexed but missing"))
}

/// Every edge of type `rel_type` (as spelled) with `from` at its subject end, as its light view
/// with the bound of the earlier lives its entry holds: outbound under the type, and inbound under
/// each spelling of its mirror type that reads as it (`fact_readings.rs`). With `with_copies`, the copies
/// filed apart too (`past_adjacency.rs`), each list in id order as one list.
fn every_edge_of_type(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    from: u64,
    rel_type: &str,
    with_copies: bool,
) -> Result<Vec<(EdgeView, Option<i64>)>> {
    let mut lists = vec![(adj_type_prefix(part, from, OUT, &fold(rel_type.trim())), false)];
    for mirror in super::fact_readings::mirror_types(rel_type) {
        lists.push((adj_type_prefix(part, from, IN, &mirror), true));
    }
    let mut views = Vec::new();
    for (prefix, mirrored) in lists {
        let mut entries = tx.prefix(ADJ, &prefix)?;
        if with_copies {
            entries.extend(tx.prefix(ADJ_PAST, &prefix)?);
            entries.sort_unstable_by(|x, y| x.0.cmp(&y.0));
        }
        for (key, value) in entries {
            let id = trailing_id(&key)?;
            let bytes = tx.get(REL, &rel_key(part, id))?.ok_or_else(|| missing(id))?;
            let view: EdgeView = decode(&bytes, "relation")?;
            let subject_end = if mirrored { view.to } else { view.from };
            if subject_end == from && (!mirrored || super::fact_readings::is_mirror(&view.rel_type, rel_type)) {
                views.push((view, super::past_adjacency::bound_of(&value)?));
            }
        }
    }
    Ok(views)
}

/// `rel`, an edge true at an assertion's start `at` under `replaces`, as it is stored once it ends
/// there: its `valid_to` moves to `at`, the one it had kept (`shortened`) for `as_of` reads.
fn ended_at_start(rel: Relation, at: &str) -> Relation {
    let shortened = rel.shortened.clone().or_else(|| Some(Shortened { valid_to: rel.valid_to.clone() }));
    Relation { valid_to: Some(at.to_owned()), shortened, ..rel }
}

/// `relate` between entity ids, `folded_type` being `fold(a.rel_type.trim())`; new ids come from
/// `ids` (a bulk caller hands them out from a reserved block); count changes go to `tally`. Also
/// returns the stored record's bytes when it wrote one, so a caller recording history need not
/// encode the relation again.
pub(crate) fn relate_ids(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (from, to): (u64, u64),
    folded_type: &str,
    (a, now): (Assertion<'_>, i64),
    ids: &mut dyn FnMut(&mut WriteTxn<'_>) -> Result<u64>,
    tally: &mut Tally,
) -> Result<(Related, Option<Vec<u8>>)> {
    let mut attributes = a.attributes.clone();
    let plan = planned(tx, part, (from, to), (&a, now), &mut attributes, false)?;
    let mut ended = Vec::new();
    for stored in plan.end {
        let before = stored.ended_at.is_none().then(|| stored.clone());
        let mut rel = ended_at_start(stored, &plan.end_at);
        rel.ended_at = rel.ended_at.or(Some(now));
        // Only its end changes: its provenances, and so its source index entries, stay.
        tx.put(REL, &rel_key(part, rel.id), &encode(&rel))?;
        tally.relation(part, before.as_ref(), Some(&rel));
        ended.push(rel.id);
    }
    let superseded_by = plan.newer;
    if let Some(stored) = plan.same {
        // An ended edge that already says it is returned as it is. A live one reads the plan's
        // attributes: under `replaces`, an end is never later than the next edge's start.
        let (revised, added) = if stored.ended_at.is_none() {
            let mut list = || super::fact_writes::first_in(tx, part, stored.id, u32::MAX);
            restated(&stored, &attributes, (a.date, &a.source, a.agent), now, &mut list)?
        } else {
            (stored.clone(), Vec::new())
        };
        let mut written = None;
        if revised != stored {
            // The version known until now stays, ended now, for `as_of` reads before this call;
            // the fact itself (same id) is recorded anew as it is known from now on.
            let mut copy =
                Relation { id: ids(tx)?, ended_at: Some(now), version_of: Some(stored.id), ..stored.clone() };
            WritesIn::point(&mut copy);
            tx.put(REL, &rel_key(part, copy.id), &encode(&copy))?;
            super::source_index::refile(tx, part, None, Some(&copy))?;
            super::past_adjacency::file_version(tx, part, &copy)?;
            let bytes = encode(&revised);
            tx.put(REL, &rel_key(part, revised.id), &bytes)?;
            super::fact_writes::append(tx, part, revised.id, stored.writes.map_or(0, |k| k.n), &added)?;
            super::source_index::refile(tx, part, Some(&stored), Some(&revised))?;
            // The copy is ended (never counted); the fact keeps its liveness and its type.
            tally.relation(part, Some(&stored), Some(&revised));
            written = Some(bytes);
        }
        let related =
            Related { relation: revised, created: false, ended, restored: None, superseded_by, before: Some(stored) };
        return Ok((related, written));
    }
    let mut restored = plan.restored;
    if let Some(old) = restored.as_mut().filter(|old| old.writes.is_some()) {
        // Its list moves to the copy below; the event of the restore still shows it as it was.
        old.attribute_writes = super::fact_writes::first_in(tx, part, old.id, u32::MAX)?;
    }
    let mut earlier_life = None;
    if let Some(old) = &restored {
        // The earlier life stays as history under a new id; the fact itself lives on under its own.
        let copy = Relation { id: ids(tx)?, ended_at: old.ended_at.or(Some(now)), ..old.clone() };
        tx.put(REL, &rel_key(part, copy.id), &encode(&copy))?;
        super::source_index::refile(tx, part, None, Some(&copy))?;
        // The new life starts without a list: the earlier versions read theirs from the copy.
        WritesIn::moved(tx, part, old, copy.id)?;
        earlier_life = Some(copy);
    }
    // A fact stored from the other end is restored as it is stored: its adjacency stays true.
    let (from, to, rel_type) = match restored.as_ref().filter(|old| old.from != from) {
        Some(old) => (old.from, old.to, old.rel_type.clone()),
        None => (from, to, a.rel_type.trim().to_owned()),
    };
    let id = match &restored {
        Some(old) => old.id,
        None => ids(tx)?,
    };
    let text = |key: &str| attributes.get(key).and_then(Value::as_str).map(str::to_owned);
    let older = !superseded_by.is_empty();
    let valid_from = text("valid_from");
    let rel = Relation {
        shortened: None,
        version_of: None,
        id,
        from,
        to,
        rel_type,
        source_date: a.date.filter(|&d| valid_from.as_deref() != Some(d)).map(str::to_owned),
        valid_from,
        valid_to: text("valid_to"),
        attributes,
        recorded_at: now,
        // Older news is history from the start: never live, still read by `valid_at`.
        ended_at: older.then_some(now),
        source: a.source,
        agent: a.agent.to_owned(),
        // A new life: its attributes are all set at its start, its provenance the call's.
        attribute_writes: Vec::new(),
        writes_in: None,
        writes: None,
        also: Vec::new(),
    };
    let bytes = encode(&rel);
    tx.put(REL, &rel_key(part, id), &bytes)?;
    super::source_index::refile(tx, part, restored.as_ref(), Some(&rel))?;
    // A restored fact was ended; a new one was nothing; either may be stored ended (older news).
    tally.relation(part, restored.as_ref(), Some(&rel));
    if let Some(copy) = &earlier_life {
        super::past_adjacency::file_life(tx, part, (restored.as_ref().unwrap_or(&rel), &rel), copy)?;
    } else {
        tx.put(ADJ, &adj_key(part, rel.from, OUT, folded_type, id), &[])?;
        tx.put(ADJ, &adj_key(part, rel.to, IN, folded_type, id), &[])?;
    }
    let related = Related {
        relation: rel,
        created: restored.is_none(),
        ended,
        restored: restored.as_ref().map(|r| r.id),
        superseded_by,
        before: restored,
    };
    Ok((related, Some(bytes)))
}

/// `stored`, a live edge, as it reads once an assertion with `attributes` (and the call's `date`)
/// says it again (knowledge-verbs.md "Saying a live fact again"): its valid interval only grows.
/// A start earlier than its own, an end later than its own, and an end where its own is unknown
/// are news and move there; a start it already covers (the same fact said again at a later date)
/// or an end sooner than its own confirm it and change nothing (an unbounded start is never
/// moved). Given attributes that change what is true from the start the assertion states merge
/// in, that write kept with its start (`fact_attribute_time.rs`). Said under a provenance it
/// does not have yet (another document, label, or none), it records that one too
/// (`fact_sources::add`). Equal to `stored` when the assertion adds nothing; else recorded at
/// `now`, the time from which the store knows this version. Also returns the writes to append
/// to its list (`fact_writes.rs`), which `list` reads when the new write's start needs it.
fn restated(
    stored: &Relation,
    attributes: &Map<String, Value>,
    (date, source, agent): (Option<&str>, &Source, &str),
    now: i64,
    list: &mut dyn FnMut() -> Result<Vec<AttributeWrite>>,
) -> Result<(Relation, Vec<AttributeWrite>)> {
    let given = |key: &str| {
        let text = attributes.get(key).and_then(Value::as_str)?;
        Some((text, valid::bound(text)?))
    };
    let mut rel = stored.clone();
    if !fact_sources::states(stored, source) {
        let said = Also {
            source: source.clone(),
            agent: agent.to_owned(),
            recorded_at: now,
            source_date: date.map(str::to_owned),
        };
        fact_sources::add(&mut rel, said);
    }
    // Attributes merge in only when they change what is true from the start the call states; the
    // write is kept with that start, so reads at other instants still see the earlier values.
    let added = with_write(stored, attributes, now, list)?.unwrap_or_default();
    if !added.is_empty() {
        for (k, v) in attributes {
            if k != "valid_from" && k != "valid_to" {
                rel.attributes.insert(k.clone(), v.clone());
            }
        }
        rel.writes = Kept::after(stored.writes, &added);
    }
    if let Some((text, start)) = given("valid_from")
        && stored.valid_start().is_some_and(|own| start < own)
    {
        rel.valid_from = Some(text.to_owned());
        rel.attributes.insert("valid_from".into(), Value::String(text.to_owned()));
        rel.source_date = date.filter(|&d| d != text).map(str::to_owned);
    }
    // An end given for a fact whose end is unknown is news too: the fact stops there (a bounded
    // end is never moved sooner). An end at or before the fact's start would leave no interval.
    if let Some((text, end)) = given("valid_to")
        && stored.valid_end(None).map_or(stored.valid_start().is_none_or(|start| end > start), |own| end > own)
    {
        rel.valid_to = Some(text.to_owned());
        rel.attributes.insert("valid_to".into(), Value::String(text.to_owned()));
    }
    if rel != *stored {
        rel.recorded_at = now;
    }
    Ok((rel, added))
}

/// The entity with `id` in `part`, as of `snap`.
pub(crate) fn entity_by_id(snap: &Snapshot, part: &Partition, id: u64) -> Result<Option<Entity>> {
    snap.get(ENT, &ent_key(part, id))?.map(|b| decode(&b, "entity")).transpose()
}

/// The relation with `id` in `part`, as of `snap`.
pub(crate) fn relation_by_id(snap: &Snapshot, part: &Partition, id: u64) -> Result<Option<Relation>> {
    snap.get(REL, &rel_key(part, id))?.map(|b| decode(&b, "relation")).transpose()
}

/// The entity with `id` in `part`, including `tx`'s own writes.
pub(crate) fn entity_in(tx: &mut WriteTxn<'_>, part: &Partition, id: u64) -> Result<Option<Entity>> {
    tx.get(ENT, &ent_key(part, id))?.map(|b| decode(&b, "entity")).transpose()
}

/// The relation with `id` in `part`, including `tx`'s own writes.
pub(crate) fn relation_in(tx: &mut WriteTxn<'_>, part: &Partition, id: u64) -> Result<Option<Relation>> {
    tx.get(REL, &rel_key(part, id))?.map(|b| decode(&b, "relation")).transpose()
}

/// The entity whose folded name is `name`'s, including `tx`'s own writes.
pub(crate) fn entity_by_name_in(tx: &mut WriteTxn<'_>, part: &Partition, name: &str) -> Result<Option<Entity>> {
    match find_id(tx, part, &fold(name.trim()))? {
        Some(id) => load_entity(tx, part, id).map(Some),
        None => Ok(None),
    }
}

/// Whether entity `id` exists in `part`, including `tx`'s own writes.
pub(crate) fn entity_exists_in(tx: &mut WriteTxn<'_>, part: &Partition, id: u64) -> Result<bool> {
    Ok(tx.get(ENT, &ent_key(part, id))?.is_some())
}

/// The id of the entity whose folded name is `name`'s, including `tx`'s own writes.
pub(crate) fn entity_id_in(tx: &mut WriteTxn<'_>, part: &Partition, name: &str) -> Result<Option<u64>> {
    find_id(tx, part, &fold(name.trim()))
}

/// The id of the entity whose folded name is `folded` (already `fold(name.trim())`), including
/// `tx`'s own writes.
pub(crate) fn entity_id_folded(tx: &mut WriteTxn<'_>, part: &Partition, folded: &str) -> Result<Option<u64>> {
    find_id(tx, part, folded)
}

/// Every entity of `part` as of `snap`, in id order.
pub(crate) fn entities(snap: &Snapshot, part: &Partition) -> Result<Vec<Entity>> {
    snap.prefix(ENT, part.prefix())?.map(|item| decode(&item?.1, "entity")).collect()
}

/// Every entity of `part`, including this transaction's writes, in id order.
pub(crate) fn entities_in(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<Vec<Entity>> {
    tx.prefix(ENT, part.prefix())?.iter().map(|(_, bytes)| decode(bytes, "entity")).collect()
}

/// Every relation touching `entity`, outbound then inbound, each group by type and then id. A
/// relation from `entity` to itself (no verb writes one now; an older store or an import may hold
/// it) is one stored fact, listed once, outbound: its inbound entry is skipped.
pub fn neighbours(snap: &Snapshot, part: &Partition, entity: u64) -> Result<Vec<Neighbour>> {
    let mut out = Vec::new();
    for (rel_id, direction) in adjacency(snap, part, entity, &adj_prefix(part, entity))? {
        out.extend(neighbour(snap, part, rel_id, direction)?);
    }
    Ok(out)
}

/// The relations under `prefix` (an `adj_prefix` of `entity`, or one of its `adj_type_prefix`es)
/// as their `ADJ` keys name them, the copies filed apart (`past_adjacency.rs`) in their place, in
/// key order: each id and which end `entity` is. Reads keys only, no relation: a caller that
/// keeps some of a hub's thousands of edges decodes only those.
pub(crate) fn adjacency(
    snap: &Snapshot,
    part: &Partition,
    entity: u64,
    prefix: &[u8],
) -> Result<Vec<(u64, Direction)>> {
    let at = adj_prefix(part, entity).len();
    let entry = |key: &[u8]| adjacency_entry(at, key);
    let mut copies = Vec::new();
    snap.scan_prefix(ADJ_PAST, prefix, |key, _| {
        copies.push(key.to_vec());
        Ok(true)
    })?;
    let mut copies = copies.into_iter().peekable();
    let mut out = Vec::new();
    snap.scan_prefix(ADJ, prefix, |key, _| {
        while let Some(copy) = copies.next_if(|c| c.as_slice() < key) {
            out.push(entry(&copy)?);
        }
        out.push(entry(key)?);
        Ok(true)
    })?;
    for copy in copies {
        out.push(entry(&copy)?);
    }
    Ok(out)
}

/// The relation id an adjacency `key` of an entity ends with, and which end the entity is (the
/// byte at `at`, the length of the entity's `adj_prefix`).
pub(crate) fn adjacency_entry(at: usize, key: &[u8]) -> Result<(u64, Direction)> {
    let direction = match key.get(at) {
        Some(&OUT) => Direction::Outbound,
        Some(&IN) => Direction::Inbound,
        _ => return Err(Error::corrupt(None, "an adjacency key has no direction")),
    };
    Ok((trailing_id(key)?, direction))
}

/// Relation `rel_id` seen from the end `direction` names; `None` for the inbound side of a
/// self-loop (one fact, listed once, outbound).
pub(crate) fn neighbour(
    snap: &Snapshot,
    part: &Partition,
    rel_id: u64,
    direction: Direction,
) -> Result<Option<Neighbour>> {
    // Decoded from its page, not from a copy: a hub's recall reads thousands of these.
    let relation: Relation = snap
        .get_with(REL, &rel_key(part, rel_id), |bytes| bytes.map(|b| decode(b, "relation")))?
        .ok_or_else(|| Error::corrupt(None, format!("relation {rel_id} is indexed but missing")))??;
    if direction == Direction::Inbound && relation.from == relation.to {
        return Ok(None);
    }
    Ok(Some(Neighbour::of(relation, direction)))
}

impl Neighbour {
    /// `relation` seen from the end `direction` names.
    #[must_use]
    pub fn of(relation: Relation, direction: Direction) -> Neighbour {
        let other = if direction == Direction::Outbound { relation.to } else { relation.from };
        Neighbour { relation, direction, other }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::testing::{assertion, fresh};
    use serde_json::json;

    #[test]
    fn replaces_ends_other_edges_and_reasserting_restores() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        let (steps, _) = store
            .write(move |tx| {
                let none = Map::new();
                let acme = relate(tx, &p, assertion("Priya", "Acme", "works_at", &none, "a"), 10)?;
                let globex = relate(
                    tx,
                    &p,
                    Assertion { replaces: true, ..assertion("Priya", "Globex", "works_at", &none, "a") },
                    20,
                )?;
                let back = relate(
                    tx,
                    &p,
                    Assertion { replaces: true, ..assertion("Priya", "Acme", "works_at", &none, "a") },
                    30,
                )?;
                Ok((acme, globex, back))
            })
            .unwrap();
        let (acme, globex, back) = steps;
        assert_eq!(globex.ended, vec![acme.relation.id]);
        assert_eq!(back.ended, vec![globex.relation.id]);
        assert_eq!(back.restored, Some(acme.relation.id));
        assert!(!back.created && back.relation.id == acme.relation.id, "the ended fact itself is live again");
        let snap = store.snapshot().unwrap();
        let priya = entity_by_name(&snap, &part, "Priya").unwrap().unwrap();
        let all = neighbours(&snap, &part, priya.id).unwrap();
        assert_eq!(all.len(), 3, "ended relations stay in history");
        let employer_at =
            |t: i64| -> Vec<u64> { all.iter().filter(|n| n.relation.known_at(t)).map(|n| n.other).collect() };
        let names = |ids: Vec<u64>| -> Vec<String> {
            ids.into_iter()
                .map(|id| {
                    let bytes = snap.get(ENT, &ent_key(&part, id)).unwrap().unwrap();
                    decode::<Entity>(&bytes, "entity").unwrap().name
                })
                .collect()
        };
        assert_eq!(names(employer_at(5)), Vec::<String>::new());
        assert_eq!(names(employer_at(15)), vec!["Acme"]);
        assert_eq!(names(employer_at(25)), vec!["Globex"]);
        assert_eq!(names(employer_at(35)), vec!["Acme"]);
    }

    /// A hub's edges of one type outnumber what `edges_between` reads of a list at first, so a
    /// new edge to it is matched through the other end's list: said again, it is found, not
    /// stored twice, in either direction and whether the hub is the subject or the object; and
    /// `replaces` still ends every other edge of the hub.
    #[test]
    fn edges_of_a_hub_are_matched_through_the_other_end() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        store
            .write(move |tx| {
                let none = Map::new();
                for i in 0..200 {
                    relate(tx, &p, assertion("Acme", &format!("Person {i}"), "employs", &none, "a"), 10)?;
                    relate(tx, &p, assertion(&format!("Person {i}"), "Acme", "works_at", &none, "a"), 10)?;
                }
                Ok(())
            })
            .unwrap();
        // A later write reads the stored lists (not this transaction's own waiting changes).
        let p = part.clone();
        let ((again, into_hub, replaced), _) = store
            .write(move |tx| {
                let none = Map::new();
                let again = relate(tx, &p, assertion("Acme", "Person 150", "employs", &none, "a"), 20)?;
                let into_hub = relate(tx, &p, assertion("Person 150", "Acme", "works_at", &none, "a"), 20)?;
                let replaced = relate(
                    tx,
                    &p,
                    Assertion { replaces: true, ..assertion("Acme", "Person 7", "employs", &none, "a") },
                    30,
                )?;
                Ok((again, into_hub, replaced))
            })
            .unwrap();
        assert!(!again.created && again.before.is_some(), "the live edge is found, not stored again");
        assert!(!into_hub.created && into_hub.before.is_some());
        assert_eq!(replaced.ended.len(), 199, "replaces ends every other edge of the hub");
        let snap = store.snapshot().unwrap();
        let acme = entity_by_name(&snap, &part, "Acme").unwrap().unwrap();
        let edges = neighbours(&snap, &part, acme.id).unwrap();
        assert_eq!(edges.len(), 400, "200 employs and 200 works_at, none twice");
    }

    #[test]
    fn valid_time_bounds_are_half_open() {
        let rel = Relation {
            shortened: None,
            version_of: None,
            id: 1,
            from: 1,
            to: 2,
            rel_type: "t".into(),
            attributes: Map::new(),
            valid_from: Some("2024-01-01".into()),
            valid_to: Some("2025-01-01".into()),
            recorded_at: 0,
            ended_at: None,
            source: Source::Asserted { label: None },
            agent: "a".into(),
            source_date: None,
            attribute_writes: Vec::new(),
            writes_in: None,
            writes: None,
            also: Vec::new(),
        };
        let at = |date: &str| rel.valid_at(valid::instant(date).unwrap(), None);
        assert!(!at("2023-12-31"));
        assert!(at("2024-01-01"));
        assert!(at("2024-12-31T23:59:59.999Z"));
        assert!(!at("2025-01-01"));
        assert!(!at("2024-12-31T23:00:00-01:00"), "the same instant as 2025-01-01 midnight UTC");
    }

    fn attrs(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(map) => map,
            other => panic!("attributes must be an object, got {other}"),
        }
    }

    #[test]
    fn an_entity_is_one_per_folded_name_and_merges() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        let ((first, again), _) = store
            .write(move |tx| {
                let a = upsert_entity(tx, &p, "Priya Raman", &["person".into()], &attrs(json!({"role": "eng"})), 1)?;
                let b = upsert_entity(
                    tx,
                    &p,
                    "  priya   RAMAN ",
                    &["Person".into(), "author".into()],
                    &attrs(json!({"role": "lead"})),
                    2,
                )?;
                Ok((a, b))
            })
            .unwrap();
        assert!(first.1 && !again.1);
        assert_eq!(first.0.id, again.0.id);
        assert_eq!(again.0.name, "Priya Raman");
        assert_eq!(again.0.types, vec!["person".to_owned(), "author".to_owned()]);
        assert_eq!(again.0.attributes["role"], json!("lead"));
        let snap = store.snapshot().unwrap();
        assert_eq!(entity_by_name(&snap, &part, "PRIYA RAMAN").unwrap().unwrap(), again.0);
        assert_eq!(entity_by_name(&snap, &part, "Priya").unwrap(), None);
    }

    #[test]
    fn relations_are_found_from_both_ends_and_not_duplicated() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        let (rels, _) = store
            .write(move |tx| {
                let src = Source::Asserted { label: Some("chat".into()) };
                let first = attrs(json!({"valid_from": "2024-01-01"}));
                let second = attrs(json!({"team": "infra"}));
                let none = Map::new();
                let a = relate(
                    tx,
                    &p,
                    Assertion { source: src.clone(), ..assertion("Priya", "Acme", "works_at", &first, "claude") },
                    5,
                )?;
                let b = relate(
                    tx,
                    &p,
                    Assertion { source: src.clone(), ..assertion("priya", "ACME", "Works_At", &second, "codex") },
                    6,
                )?;
                let c = relate(
                    tx,
                    &p,
                    Assertion { source: src, ..assertion("Acme", "Berlin", "located_in", &none, "claude") },
                    7,
                )?;
                Ok(((a.relation, a.created), (b.relation, b.created), (c.relation, c.created)))
            })
            .unwrap();
        let (a, b, c) = rels;
        assert!(a.1 && !b.1 && c.1);
        assert_eq!(a.0.id, b.0.id);
        assert_eq!(b.0.attributes["team"], json!("infra"));
        assert_eq!(b.0.valid_from.as_deref(), Some("2024-01-01"));
        assert_eq!(b.0.agent, "claude");
        let snap = store.snapshot().unwrap();
        let acme = entity_by_name(&snap, &part, "acme").unwrap().unwrap();
        let (around, versions): (Vec<Neighbour>, Vec<Neighbour>) =
            neighbours(&snap, &part, acme.id).unwrap().into_iter().partition(|n| n.relation.current_at(None));
        assert_eq!(around.len(), 2);
        // The attribute the second call added revised the fact: the version before it is kept.
        assert_eq!(versions.len(), 1);
        assert_eq!(versions[0].relation.version_of, Some(a.0.id));
        assert!(versions[0].relation.attributes.get("team").is_none());
        assert_eq!(around[0].direction, Direction::Outbound);
        assert_eq!(around[0].relation.rel_type, "located_in");
        assert_eq!(around[1].direction, Direction::Inbound);
        assert_eq!(around[1].relation.rel_type, "works_at");
        assert_eq!(around[1].other, a.0.from);
    }

    #[test]
    fn partitions_do_not_see_each_other() {
        let (_dir, store, _) = fresh();
        let mine = Partition::new("local", "u1", "default").unwrap();
        let theirs = Partition::new("local", "u2", "default").unwrap();
        let m = mine.clone();
        store
            .write(move |tx| relate(tx, &m, assertion("Priya", "Acme", "works_at", &Map::new(), "claude"), 1))
            .unwrap();
        let snap = store.snapshot().unwrap();
        assert!(entity_by_name(&snap, &theirs, "Priya").unwrap().is_none());
        let priya = entity_by_name(&snap, &mine, "Priya").unwrap().unwrap();
        assert!(neighbours(&snap, &theirs, priya.id).unwrap().is_empty());
        assert_eq!(neighbours(&snap, &mine, priya.id).unwrap().len(), 1);
    }

    /// A self-loop an older store holds (the verbs refuse one now) is one fact, listed once.
    #[test]
    fn a_relation_from_an_entity_to_itself_is_one_neighbour() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        store.write(move |tx| relate(tx, &p, assertion("Wanda", "Wanda", "self", &Map::new(), "a"), 1)).unwrap();
        let snap = store.snapshot().unwrap();
        let wanda = entity_by_name(&snap, &part, "Wanda").unwrap().unwrap();
        let around = neighbours(&snap, &part, wanda.id).unwrap();
        assert_eq!(around.len(), 1, "{around:?}");
        assert_eq!((around[0].direction, around[0].other), (Direction::Outbound, wanda.id));
    }

    #[test]
    fn bad_names_change_nothing() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        let err = store
            .write(move |tx| relate(tx, &p, assertion("Priya", &"x".repeat(1025), "knows", &Map::new(), "a"), 1))
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        let snap = store.snapshot().unwrap();
        assert!(entity_by_name(&snap, &part, "Priya").unwrap().is_none());
        assert_eq!(snap.tree_len(ENT).unwrap(), 0);
    }
}
