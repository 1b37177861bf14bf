//! Import of exported records into the caller's partition. Pages may come in any order and more
//! than once: every exported id is mapped to its local id in `k.import_map`
//! (`part | kind byte | origin | source id` → local id; the origin, `origin.rs`, is the digest of
//! where the ids were handed out, which every exported record names, since ids restart in every
//! partition; a record naming none keys by `part | kind byte | source id`, the layout before
//! origins), entities are also matched by exact (folded) name, and documents by their content
//! hash, so importing a record again changes nothing. The map is a shortcut, never the authority:
//! an entity it gives is used only when its name is the one the record gives, a fact only when
//! its ends and type are the record's, a document only when its text is the record's (or that
//! text with forgotten passages blanked), so ids of another origin, or of a hand-made record,
//! never make a record `unchanged` or join a fact to an entity its names contradict. Within one
//! call entities go first, then facts, then documents, whatever the order of the list. A fact
//! whose endpoint is not known yet is resolved by the name the export carries beside the id (the
//! entity is stored then, and its own record fills in types and attributes when it arrives); a
//! fact citing a document not imported yet reserves that document's local id, which the document
//! takes when it comes. History is kept: recorded, ended and ingested times are the exported ones.
//! Notes and handoffs go last, each by the notes engine's rules (`notes::import`,
//! `notes::handoff_exchange`), which record their own history events.

use super::docs::{Document, MAX_TEXT_BYTES, PassageSpan, add_hash, hash_key, stored_doc};
use super::export::{FORMAT, FORMAT_VERSION, MAX_LIMIT, kind_names};
use super::fact_attribute_time::WritesIn;
use super::fact_sources::Also;
use super::forget::entity_in;
use super::graph::{
    Entity, Relation, Shortened, Source, check_name, create_entity, has_control, relation_in, upsert_counted,
};
use super::ids::next_id;
use super::import_attributes;
use super::import_checks::{document_date, fact_times, known_fields, label_ok, name_ok};
use super::import_links::Links;
use super::import_pairs::{Pairs, Version};
use super::import_provenance;
use super::import_rules::{not_future, own_author};
use super::import_runs::{self, Of, Run};
use super::origin::Origin;
use super::part::Partition;
use super::records::{decode, encode};
use super::tally::Tally;
use super::trees::{ADJ, ADJ_PAST, DOC, ENT, IN, MENTION, MENTIONED, OUT, PSG, REL, adj_key, ent_key, rel_key};
use super::version_writes::Lens;
use crate::error::{Error, Result};
use crate::fts;
use crate::text::{char_slice, fold, heading_path, headings, with_headings};
use crate::time::parse_iso_ms;
use crate::write::WriteTxn;
use serde::Serialize;
use serde_json::{Map, Value};

/// `part | kind byte | origin (16 bytes, none for a record naming no origin) | source id` → local id.
pub(crate) const IMPORT_MAP: &str = "k.import_map";
pub(crate) const ENTITY: u8 = b'e';
pub(crate) const FACT: u8 = b'f';
pub(super) const DOCUMENT: u8 = b'd';
/// `k.import_map` kind byte of a document id a fact reserved before its document was imported:
/// `part | 'r' | local id` → empty, deleted when the document takes the id (or is found stored
/// here under another). While it is there the citation reads `source_not_imported`, not
/// `source_forgotten` (`citation.rs`): nothing was forgotten.
const RESERVED: u8 = b'r';

/// The key marking local document id `id` as reserved for a document not imported yet.
pub(crate) fn reserved_key(part: &Partition, id: u64) -> Vec<u8> {
    part.key(&[&[RESERVED], &id.to_be_bytes()])
}

/// Records stored or changed, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ImportCounts {
    pub entities: u64,
    pub facts: u64,
    pub documents: u64,
    pub notes: u64,
    pub handoffs: u64,
}

impl ImportCounts {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &ImportCounts) {
        self.entities += other.entities;
        self.facts += other.facts;
        self.documents += other.documents;
        self.notes += other.notes;
        self.handoffs += other.handoffs;
    }
}

/// A record not imported, by its index in the request, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub index: usize,
    pub reason: String,
}

/// What `import` did. `written` lists (family, target, local id) for the history events.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Imported {
    pub imported: ImportCounts,
    /// Records already present (imported before, or the same entity, fact or text stored here).
    pub unchanged: ImportCounts,
    pub skipped: Vec<Skipped>,
    /// What was imported but does not yet read as it did at the source, and why.
    pub not_reproduced: Vec<Value>,
    #[serde(skip)]
    pub written: Vec<(&'static str, String, u64)>,
    /// Entities written (name, id) with the dated attribute writes their records carried.
    #[serde(skip)]
    pub attribute_writes: Vec<(String, u64, Vec<import_attributes::Write>)>,
}

pub(crate) fn map_key(part: &Partition, kind: u8, origin: Origin, source: u64) -> Vec<u8> {
    part.key(&[&[kind], origin.key_bytes(), &source.to_be_bytes()])
}

pub(super) fn mapped(tx: &mut WriteTxn<'_>, part: &Partition, kind: u8, (origin, source): Src) -> Result<Option<u64>> {
    tx.get(IMPORT_MAP, &map_key(part, kind, origin, source))?
        .map(|v| {
            v.as_slice()
                .try_into()
                .map(u64::from_be_bytes)
                .map_err(|_| Error::corrupt(None, "an import map entry is not 8 bytes"))
        })
        .transpose()
}

pub(super) fn set_map(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    kind: u8,
    (origin, source): Src,
    local: u64,
) -> Result<()> {
    tx.put(IMPORT_MAP, &map_key(part, kind, origin, source), &local.to_be_bytes())
}

/// A source id with the origin it was handed out in.
pub(super) type Src = (Origin, u64);

/// Whether `name` (as a record gives it) names `e` (the same folded name, as `entity_in` finds).
fn names(e: &Entity, name: &str) -> bool {
    fold(name.trim()) == fold(e.name.trim())
}

/// The stored entity `source` maps to, if the record's `name` (when it gives one) is that
/// entity's: an id of another origin, or of a hand-made record, is not trusted over a name.
fn mapped_entity(tx: &mut WriteTxn<'_>, part: &Partition, source: Src, name: Option<&str>) -> Result<Option<Entity>> {
    let Some(local) = mapped(tx, part, ENTITY, source)? else { return Ok(None) };
    let Some(bytes) = tx.get(ENT, &ent_key(part, local))? else { return Ok(None) };
    let e: Entity = decode(&bytes, "entity")?;
    Ok(name.is_none_or(|n| n.trim().is_empty() || names(&e, n)).then_some(e))
}

/// A record field problem, as a skip reason naming the field.
pub(super) type Field<T> = std::result::Result<T, String>;

pub(super) fn id_field(r: &Map<String, Value>, field: &str) -> Field<u64> {
    r.get(field)
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{field}: must be an id as a decimal string"))
}

pub(super) fn opt_str(r: &Map<String, Value>, field: &str) -> Field<Option<String>> {
    match r.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{field}: must be a string or null")),
    }
}

pub(super) fn time_field(r: &Map<String, Value>, field: &str) -> Field<Option<i64>> {
    match opt_str(r, field)? {
        None => Ok(None),
        Some(s) => parse_iso_ms(&s).map(Some).ok_or_else(|| format!("{field}: not an ISO 8601 UTC time")),
    }
}

fn attrs_field(r: &Map<String, Value>) -> Field<Map<String, Value>> {
    match r.get("attributes") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err("attributes: must be an object".into()),
    }
}

/// The local entity for an exported one (by id map, then by name), stored if neither finds it.
/// An id mapped to an entity of another name is not used: the name wins, and the map is pointed
/// at the entity it names.
fn resolve_entity(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    source: Option<Src>,
    name: Option<&str>,
    recorded_at: i64,
    tally: &mut Tally,
) -> Result<Option<(Entity, bool)>> {
    if let Some(src) = source
        && let Some(e) = mapped_entity(tx, part, src, name)?
    {
        return Ok(Some((e, false)));
    }
    let Some(name) = name.filter(|n| !n.trim().is_empty() && !has_control(n)) else { return Ok(None) };
    let found = if let Some(e) = entity_in(tx, part, name)? {
        (e, false)
    } else {
        // No entity of that name, as `entity_in` just found: created without looking again.
        let folded = check_name(name, "entity name")?;
        (create_entity(tx, part, (name, &folded), (&[], &Map::new()), recorded_at, tally)?.0, true)
    };
    if let Some(src) = source {
        set_map(tx, part, ENTITY, src, found.0.id)?;
    }
    Ok(Some(found))
}

fn import_entity(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    r: &Map<String, Value>,
    now: i64,
    (out, tally): (&mut Imported, &mut Tally),
) -> Result<Field<()>> {
    let Some(name) = r.get("name").and_then(Value::as_str).filter(|n| !n.trim().is_empty()) else {
        return Ok(Err("name: must be a non-empty string".into()));
    };
    if let Err(e) = name_ok("name", name) {
        return Ok(Err(e));
    }
    let origin = match Origin::of_record(r) {
        Ok(o) => o,
        Err(e) => return Ok(Err(e)),
    };
    let source = if r.contains_key("id") {
        match id_field(r, "id") {
            Ok(id) => Some((origin, id)),
            Err(e) => return Ok(Err(e)),
        }
    } else {
        None
    };
    let types: Vec<String> = match r.get("types") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
            a.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect()
        }
        Some(_) => return Ok(Err("types: must be an array of strings".into())),
    };
    for (i, t) in types.iter().enumerate() {
        if let Err(e) = name_ok(&format!("types[{i}]"), t) {
            return Ok(Err(e));
        }
    }
    let attributes = match attrs_field(r) {
        Ok(a) => a,
        Err(e) => return Ok(Err(e)),
    };
    let recorded_at = match time_field(r, "recorded_at") {
        Ok(t) => t,
        Err(e) => return Ok(Err(e)),
    };
    if let Err(e) = not_future("recorded_at", recorded_at, now) {
        return Ok(Err(e));
    }
    let writes = match import_attributes::field(r, now) {
        Ok(w) => w,
        Err(e) => return Ok(Err(e)),
    };
    let run = match Run::of(r, Of::Entity, source) {
        Ok(run) => run,
        Err(e) => return Ok(Err(e)),
    };
    if let (Some(src), Some(follows)) = (source, run.follows) {
        let here = mapped_entity(tx, part, src, Some(name))?.is_some();
        if let Some(reason) = import_runs::gap(tx, part, (Of::Entity, src, follows), here)? {
            return Ok(Err(reason));
        }
    }
    let Some((existing, created_now)) =
        resolve_entity(tx, part, source, Some(name), recorded_at.unwrap_or(now), tally)?
    else {
        return Ok(Err("name: must be a non-empty string".into()));
    };
    let (mut merged, _) = upsert_counted(tx, part, (name, &types, &attributes), 0, tally)?;
    // The earliest time the entity is known from is kept, so a stub made for a fact takes the
    // entity's own time when its record arrives.
    if let Some(t) = recorded_at
        && t < merged.recorded_at
    {
        merged.recorded_at = t;
        // Only its time changes: nothing to count.
        tx.put(ENT, &ent_key(part, merged.id), &encode(&merged))?;
    }
    let changed = created_now || merged != existing;
    let writes = import_runs::replayed(tx, part, (source, run), changed, writes)?;
    if changed {
        out.written.push(("entity", merged.name.clone(), merged.id));
    }
    if changed || !writes.is_empty() {
        out.imported.entities += 1;
    } else {
        out.unchanged.entities += 1;
    }
    if !writes.is_empty() {
        out.attribute_writes.push((merged.name.clone(), merged.id, writes));
    }
    Ok(Ok(()))
}

/// Where one end of a fact would resolve, before anything is written: a stored entity, or one
/// to be created by this (folded) name.
#[derive(PartialEq, Eq)]
enum End {
    Here(u64),
    New(String),
}

/// Where a fact's end resolves as `resolve_entity` would resolve it, without writing; with the
/// entity when the id map gave it (the usual case for an export's facts), which `resolve_ends`
/// then takes as it is instead of reading it again.
fn peek_end(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    source: Option<Src>,
    name: Option<&str>,
) -> Result<Option<(End, Option<Entity>)>> {
    if let Some(src) = source
        && let Some(e) = mapped_entity(tx, part, src, name)?
    {
        return Ok(Some((End::Here(e.id), Some(e))));
    }
    let Some(name) = name.filter(|n| !n.trim().is_empty() && !has_control(n)) else { return Ok(None) };
    Ok(Some((
        match entity_in(tx, part, name)? {
            Some(e) => End::Here(e.id),
            None => End::New(fold(name.trim())),
        },
        None,
    )))
}

/// Whether both ends of a fact can be resolved (mapped to a stored entity the names do not
/// contradict, or named), and to two entities: a fact never joins an entity to itself (`relate`
/// refuses it too). Gives the ends the id map resolved, for `resolve_ends`.
fn check_ends(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    origin: Origin,
    r: &Map<String, Value>,
) -> Result<Field<[Option<Entity>; 2]>> {
    let mut ends = Vec::with_capacity(2);
    let mut mapped: [Option<Entity>; 2] = [None, None];
    for (i, (id_name, name_name)) in [("from", "from_name"), ("to", "to_name")].into_iter().enumerate() {
        let src = id_field(r, id_name).ok().map(|id| (origin, id));
        let name = r.get(name_name).and_then(Value::as_str);
        match peek_end(tx, part, src, name)? {
            Some((end, entity)) => {
                ends.push(end);
                mapped[i] = entity;
            }
            None => {
                return Ok(Err(format!(
                    "{id_name}: the entity is neither in this import nor in the store, and {name_name} is missing"
                )));
            }
        }
    }
    if ends[0] == ends[1] {
        return Ok(Err("to: from and to name the same entity; a fact joins two".into()));
    }
    Ok(Ok(mapped))
}

/// The local entities at a fact's ends, by id map or by the names the export carries; `mapped`
/// holds those `check_ends` found through the id map already (nothing was written since).
fn resolve_ends(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (origin, mapped): (Origin, [Option<Entity>; 2]),
    r: &Map<String, Value>,
    recorded_at: i64,
    (out, tally): (&mut Imported, &mut Tally),
) -> Result<Field<[Entity; 2]>> {
    let mut ends: [Option<Entity>; 2] = [None, None];
    for (i, ((id_name, name_name), known)) in
        [("from", "from_name"), ("to", "to_name")].into_iter().zip(mapped).enumerate()
    {
        if let Some(e) = known {
            ends[i] = Some(e);
            continue;
        }
        let src = id_field(r, id_name).ok().map(|id| (origin, id));
        let name = r.get(name_name).and_then(Value::as_str);
        if let Some((e, created)) = resolve_entity(tx, part, src, name, recorded_at, tally)? {
            if created {
                out.written.push(("entity", e.name.clone(), e.id));
            }
            ends[i] = Some(e);
        } else {
            return Ok(Err(format!(
                "{id_name}: the entity is neither in this import nor in the store, and {name_name} is missing"
            )));
        }
    }
    let [Some(from), Some(to)] = ends else { unreachable!("each end was resolved or returned") };
    Ok(Ok([from, to]))
}

/// Whether stored fact `rel` is the one record `r` describes: the same type, and ends the
/// record's names (when it gives them) name.
fn same_fact(tx: &mut WriteTxn<'_>, part: &Partition, rel: &Relation, r: &Map<String, Value>) -> Result<bool> {
    if r.get("type").and_then(Value::as_str).is_none_or(|t| fold(t.trim()) != fold(rel.rel_type.trim())) {
        return Ok(false);
    }
    for (local, name_name) in [(rel.from, "from_name"), (rel.to, "to_name")] {
        let Some(name) = r.get(name_name).and_then(Value::as_str).filter(|n| !n.trim().is_empty()) else { continue };
        let Some(bytes) = tx.get(ENT, &ent_key(part, local))? else { return Ok(false) };
        if !names(&decode::<Entity>(&bytes, "entity")?, name) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A fact record's `recorded_at` (required) and `ended_at`, neither ahead of `now`, once the
/// agents it names as its writer (`provenance.agent`, or `agent` beside it) are found to be the
/// importer, or the import an admin's (`import_rules`).
fn fact_stamps(r: &Map<String, Value>, who: (&str, bool), now: i64) -> Field<(i64, Option<i64>)> {
    let recorded_at = time_field(r, "recorded_at")?.ok_or("recorded_at: required")?;
    let ended_at = time_field(r, "ended_at")?;
    not_future("recorded_at", Some(recorded_at), now)?;
    not_future("ended_at", ended_at, now)?;
    if ended_at.is_some_and(|end| end < recorded_at) {
        return Err("ended_at: must not be earlier than recorded_at".into());
    }
    let prov = r.get("provenance").and_then(Value::as_object).and_then(|p| p.get("agent")).and_then(Value::as_str);
    own_author("provenance.agent", prov, who)?;
    own_author("agent", r.get("agent").and_then(Value::as_str), who)?;
    Ok((recorded_at, ended_at))
}

/// A fact record's `valid_to_before_end` (present, even null, only on a fact a `replaces`
/// shortened): the end it had until its `ended_at`, checked as its `valid_to` is.
fn before_end(r: &Map<String, Value>, valid_from: Option<&str>, ended_at: Option<i64>) -> Field<Option<Shortened>> {
    if !r.contains_key("valid_to_before_end") {
        return Ok(None);
    }
    if ended_at.is_none() {
        return Err("valid_to_before_end: only an ended fact has one (give its ended_at)".into());
    }
    let valid_to = opt_str(r, "valid_to_before_end")?;
    fact_times(valid_from, valid_to.as_deref(), None, &Map::new())
        .map_err(|e| e.replacen("valid_to", "valid_to_before_end", 1))?;
    Ok(Some(Shortened { valid_to }))
}

/// A fact record's `version_of`: an earlier version of a revised fact stays one, of the fact its
/// source id maps to here (imported before it: an export lists a fact before its versions); with
/// where it finds its writes when it counts them in its fact's (`version_writes.rs`).
fn version_field(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    origin: Origin,
    r: &Map<String, Value>,
    ended_at: Option<i64>,
    lens: &mut Lens,
) -> Result<Field<(Option<u64>, Option<WritesIn>)>> {
    let fact = match version_fact(tx, part, origin, r, ended_at)? {
        Ok(fact) => fact,
        Err(e) => return Ok(Err(e)),
    };
    Ok(super::version_writes::field(tx, part, r, fact, lens)?.map(|writes_in| (fact, writes_in)))
}

/// The fact here a record's `version_of` names, checked; `None` when it is no version.
fn version_fact(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    origin: Origin,
    r: &Map<String, Value>,
    ended_at: Option<i64>,
) -> Result<Field<Option<u64>>> {
    if r.get("version_of").is_none_or(Value::is_null) {
        return Ok(Ok(None));
    }
    if ended_at.is_none() {
        return Ok(Err("version_of: an earlier version has an ended_at".into()));
    }
    let fact = match id_field(r, "version_of") {
        Ok(id) => id,
        Err(e) => return Ok(Err(e)),
    };
    Ok(match mapped(tx, part, FACT, (origin, fact))? {
        Some(local) if tx.get(REL, &rel_key(part, local))?.is_some() => Ok(Some(local)),
        _ => {
            Err("version_of: the fact this is an earlier version of is not imported yet (it comes first in an export)"
                .into())
        }
    })
}

/// A fact record's origin and source id, and the fact stored here they map to when it is this
/// very one.
fn fact_source(tx: &mut WriteTxn<'_>, part: &Partition, r: &Map<String, Value>) -> Result<Field<(Src, Option<u64>)>> {
    let source = match (Origin::of_record(r), id_field(r, "id")) {
        (Ok(origin), Ok(id)) => (origin, id),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    if let Some(local) = mapped(tx, part, FACT, source)?
        && let Some(bytes) = tx.get(REL, &rel_key(part, local))?
    {
        return Ok(Ok((source, same_fact(tx, part, &decode(&bytes, "relation")?, r)?.then_some(local))));
    }
    Ok(Ok((source, None)))
}

/// A fact record's relation type, once it and the end names it gives are ones `relate` takes.
fn fact_names(r: &Map<String, Value>) -> Field<&str> {
    let rel_type = r
        .get("type")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .ok_or("type: must be a non-empty string")?;
    name_ok("type", rel_type)?;
    for end in ["from_name", "to_name"] {
        if let Some(n) = r.get(end).and_then(Value::as_str).filter(|n| !n.trim().is_empty()) {
            name_ok(end, n)?;
        }
    }
    Ok(rel_type)
}

fn import_fact(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    r: &Map<String, Value>,
    (agent, all_agents): (&str, bool),
    now: i64,
    (out, tally, lens, pairs): (&mut Imported, &mut Tally, &mut Lens, &mut Pairs),
) -> Result<Field<Option<u64>>> {
    let (source, run) = match fact_source(tx, part, r)?
        .and_then(|(source, here)| Run::of(r, Of::Fact, Some(source)).map(|run| (source, run, here)))
    {
        Ok((source, run, None)) if run.follows.is_none() => (source, run),
        Ok(again) => {
            return Ok(super::import_fact_runs::again(tx, part, r, again, now, (out, lens))?.map(|()| None));
        }
        Err(e) => return Ok(Err(e)),
    };
    let origin = source.0;
    let named_and_stamped = fact_names(r).and_then(|t| fact_stamps(r, (agent, all_agents), now).map(|s| (t, s)));
    let (rel_type, (recorded_at, ended_at)) = match named_and_stamped {
        Ok(t) => t,
        Err(e) => return Ok(Err(e)),
    };
    let times = (opt_str(r, "valid_from"), opt_str(r, "valid_to"), opt_str(r, "source_date"));
    let (valid_from, valid_to, source_date) = match times {
        (Ok(f), Ok(t), Ok(d)) => (f, t, d),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Ok(Err(e)),
    };
    let (version_of, writes_in) = match version_field(tx, part, origin, r, ended_at, lens)? {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    // Its attribute writes, when its source kept them, travel as they are: a copy answers reads
    // at any valid instant as the source does.
    let (attributes, attribute_writes) =
        match attrs_field(r).and_then(|a| import_attributes::fact_field(r, now).map(|w| (a, w))) {
            Ok(both) => both,
            Err(e) => return Ok(Err(e)),
        };
    let shortened = match fact_times(valid_from.as_deref(), valid_to.as_deref(), source_date.as_deref(), &attributes)
        .and_then(|()| before_end(r, valid_from.as_deref(), ended_at))
    {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    // Every check that can skip the record runs before anything is written for it.
    let mapped = match check_ends(tx, part, origin, r)? {
        Ok(mapped) => mapped,
        Err(e) => return Ok(Err(e)),
    };
    let (prov, writer, also) = match import_provenance::of_record(tx, part, (origin, r), (agent, all_agents), now)? {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    let [from, to] = match resolve_ends(tx, part, (origin, mapped), r, recorded_at, (out, tally))? {
        Ok(ends) => ends,
        Err(e) => return Ok(Err(e)),
    };
    let ends = [from.id, to.id];
    let folded_type = fold(rel_type.trim());
    // The same fact stored here already (live with live, or the same ended version) is reused,
    // found among the pair's facts as the call read them (`import_pairs.rs`), then read whole.
    let pair = (ends[0], ends[1], folded_type.as_str());
    let version = Version::of(recorded_at, ended_at, version_of);
    if let Some(have) = pairs.find(tx, part, pair, version)? {
        set_map(tx, part, FACT, source, have)?;
        // The fact is here already: a split one's later records bring nothing (`import_runs`).
        import_runs::replayed(tx, part, (Some(source), run), false, attribute_writes)?;
        let have = relation_in(tx, part, have)?
            .ok_or_else(|| Error::corrupt(None, format!("relation {have} is indexed but missing")))?;
        let own = Also { source: prov, agent: writer, recorded_at, source_date };
        let merged = import_provenance::merge(tx, part, &have, std::iter::once(own).chain(also))?;
        *if merged { &mut out.imported.facts } else { &mut out.unchanged.facts } += 1;
        return Ok(Ok(None));
    }
    let attribute_writes = import_runs::replayed(tx, part, (Some(source), run), true, attribute_writes)?;
    let id = next_id(tx, part)?;
    let mut rel = Relation {
        shortened,
        id,
        from: ends[0],
        to: ends[1],
        rel_type: rel_type.trim().to_owned(),
        attributes,
        valid_from,
        valid_to,
        recorded_at,
        ended_at,
        source: prov,
        agent: writer,
        source_date,
        version_of,
        attribute_writes,
        writes: None,
        writes_in,
        also,
    };
    WritesIn::point_at_stored(tx, part, &mut rel)?;
    super::fact_writes::move_out(tx, part, &mut rel)?;
    tx.put(REL, &rel_key(part, id), &encode(&rel))?;
    super::source_index::refile(tx, part, None, Some(&rel))?;
    tally.relation(part, None, Some(&rel));
    // An earlier version is filed apart, where no plan reads it (`past_adjacency.rs`); an earlier
    // life cannot be told from a fact here and is filed as one, as a store written before did.
    let tree = if rel.version_of.is_some() { ADJ_PAST } else { ADJ };
    tx.put(tree, &adj_key(part, rel.from, OUT, &folded_type, id), &[])?;
    tx.put(tree, &adj_key(part, rel.to, IN, &folded_type, id), &[])?;
    set_map(tx, part, FACT, source, id)?;
    pairs.stored(pair, version, id);
    out.imported.facts += 1;
    let target = format!("{}\0{}\0{}", from.name, rel.rel_type, to.name);
    out.written.push(("fact", target, id));
    Ok(Ok(match rel.source {
        Source::Document { doc_id, .. } => Some(doc_id),
        Source::Asserted { .. } => None,
    }))
}

/// Repoints the provenance of facts citing `from` to `to` (a reserved id whose text turned out to
/// be stored here already).
fn repoint_citations(tx: &mut WriteTxn<'_>, part: &Partition, from: u64, to: u64) -> Result<()> {
    // Those the source index files under `from` once it is built, else every fact of the scope.
    let filed = if super::source_index::built(tx)? { Some(super::source_index::citing(tx, part, from)?) } else { None };
    let mut citing = Vec::new();
    let cites = |s: &Source| matches!(s, Source::Document { doc_id, .. } if *doc_id == from);
    super::source_index::each_relation(tx, part, filed.as_ref(), |rel| {
        if cites(&rel.source) || rel.also.iter().any(|a| cites(&a.source)) {
            citing.push(rel);
        }
        Ok(())
    })?;
    for was in citing {
        let mut rel = was.clone();
        let mut changed = false;
        for source in std::iter::once(&mut rel.source).chain(rel.also.iter_mut().map(|a| &mut a.source)) {
            if let Source::Document { doc_id, .. } = source
                && *doc_id == from
            {
                *doc_id = to;
                changed = true;
            }
        }
        if changed {
            // Only the provenance changes: nothing to count.
            tx.put(REL, &rel_key(part, rel.id), &encode(&rel))?;
            super::source_index::refile(tx, part, Some(&was), Some(&rel))?;
        }
    }
    Ok(())
}

fn import_document(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    r: &Map<String, Value>,
    links: &mut Links,
    (index, tally): (&mut fts::Indexer, &mut Tally),
    now: i64,
    out: &mut Imported,
) -> Result<Field<()>> {
    let source = match (Origin::of_record(r), id_field(r, "id")) {
        (Ok(origin), Ok(id)) => (origin, id),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    let Some(text) =
        r.get("text").and_then(Value::as_str).filter(|t| !t.trim().is_empty() && t.len() <= MAX_TEXT_BYTES)
    else {
        return Ok(Err(format!("text: must be 1..={MAX_TEXT_BYTES} bytes of text")));
    };
    let label = opt_str(r, "label").and_then(|l| label_ok("label", l.as_deref()).map(|()| l));
    let date = opt_str(r, "date").and_then(|d| document_date(d.as_deref()).map(|()| d));
    let (label, date) = match (label, date) {
        (Ok(l), Ok(d)) => (l, d),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    let mut reserved = mapped(tx, part, DOCUMENT, source)?;
    if let Some(local) = reserved
        && let Some(bytes) = tx.get(DOC, &part.key(&[&local.to_be_bytes()]))?
    {
        let have: Document = decode(&bytes, "document")?;
        if same_document(&have, text, date.as_deref()) {
            out.unchanged.documents += 1;
            return Ok(Ok(()));
        }
        // Another document has this id here (ids of another origin): this one is matched by its
        // text, or stored under an id of its own.
        reserved = None;
    }
    let ingested_at = match time_field(r, "ingested_at") {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(Err("ingested_at: required".into())),
        Err(e) => return Ok(Err(e)),
    };
    if let Err(e) = not_future("ingested_at", Some(ingested_at), now) {
        return Ok(Err(e));
    }
    let chars = text.chars().count();
    let mut spans: Vec<(u32, PassageSpan)> = Vec::new();
    let Some(list) = r.get("passages").and_then(Value::as_array).filter(|l| !l.is_empty()) else {
        return Ok(Err("passages: must list the document's live passages".into()));
    };
    for (i, p) in list.iter().enumerate() {
        let field = |f: &str| p.get(f).and_then(Value::as_u64).and_then(|v| usize::try_from(v).ok());
        let (Some(start), Some(end)) = (field("start"), field("end")) else {
            return Ok(Err(format!("passages[{i}]: start and end must be code-point offsets")));
        };
        if start >= end || end > chars {
            return Ok(Err(format!("passages[{i}]: span {start}..{end} is not inside the text ({chars} code points)")));
        }
        let ordinal = match p.get("ordinal") {
            None => u32::try_from(i).ok(),
            Some(v) => v.as_u64().and_then(|o| u32::try_from(o).ok()),
        };
        let Some(ordinal) = ordinal.filter(|o| spans.iter().all(|(have, _)| have != o)) else {
            return Ok(Err(format!("passages[{i}].ordinal: must be a distinct non-negative integer")));
        };
        spans.push((ordinal, PassageSpan { start, end }));
    }
    let mut hash = hash_key(part, text, date.as_deref());
    if let Some(have) = stored_doc(tx, part, &mut hash, text, date.as_deref())? {
        if let Some(reserved) = reserved {
            repoint_citations(tx, part, reserved, have)?;
            tx.delete(IMPORT_MAP, &reserved_key(part, reserved))?;
        }
        set_map(tx, part, DOCUMENT, source, have)?;
        out.unchanged.documents += 1;
        return Ok(Ok(()));
    }
    let id = match reserved {
        Some(id) => id,
        None => next_id(tx, part)?,
    };
    // The id is the document's now, no longer reserved (a new id was never marked).
    tx.delete(IMPORT_MAP, &reserved_key(part, id))?;
    let doc = Document { id, text: text.to_owned(), label, date, ingested_at };
    tx.put(DOC, &part.key(&[&id.to_be_bytes()]), &encode(&doc))?;
    super::source_index::document(tx, part, &doc)?;
    tally.documents(part, 1);
    tally.passages(part, super::tally::delta(spans.len()));
    add_hash(tx, &hash, id)?;
    super::fts_terms_build::mark_first(tx)?;
    let sections = headings(text);
    for (ordinal, span) in spans {
        let passage = char_slice(text, span.start, span.end).expect("span checked above");
        let at = [&id.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
        tx.put(PSG, &part.key(&[&at]), &encode(&span))?;
        // Read under its headings, as `remember` indexed and linked it (`Passage::index_text`).
        let read = with_headings(&heading_path(&sections, span.start, span.end), passage);
        index.add(id, ordinal, &read)?;
        let entities = links.find(tx, part, &read, &out.written)?;
        for entity in entities {
            tx.put(MENTION, &part.key(&[&entity.to_be_bytes(), &at]), &[])?;
            tx.put(MENTIONED, &part.key(&[&at, &entity.to_be_bytes()]), &[])?;
        }
    }
    set_map(tx, part, DOCUMENT, source, id)?;
    out.imported.documents += 1;
    out.written.push(("document", id.to_string(), id));
    Ok(Ok(()))
}

/// Whether stored document `have` is the one a record gives as `text` and `date`: the same text,
/// or that text with forgotten passages blanked (`forget::blank_spans`: every code point but a
/// line break may have become a space), so a forget here is never undone by importing again.
fn same_document(have: &Document, text: &str, date: Option<&str>) -> bool {
    have.date.as_deref() == date
        && (have.text == text
            || have.text.chars().count() == text.chars().count()
                && have.text.chars().zip(text.chars()).all(|(h, t)| h == t || (h == ' ' && t != '\n')))
}

pub(crate) fn check_header(r: &Map<String, Value>) -> Field<()> {
    known_fields("header", r)?;
    if r.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(format!("format: must be {FORMAT:?}"));
    }
    if r.get("version").and_then(Value::as_u64) != Some(FORMAT_VERSION) {
        return Err(format!("version: this node reads version {FORMAT_VERSION}"));
    }
    // Each record names its own origin; the header's is checked only so a broken one is said.
    Origin::of_record(r)?;
    Ok(())
}

/// Imports `records` into `part`; `agent` is the provenance agent of facts that name none, `now`
/// the time of entities whose record gives none; `all_agents` (an admin's import, or a load) may
/// write records other agents wrote (`import_rules`); no record may be stamped later than `now`.
pub fn import(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    records: &[Value],
    who: (&str, bool),
    now: i64,
) -> Result<Imported> {
    import_among(tx, part, records, who, now, (&mut Pairs::default(), None))
}

/// `import`, matching fact records against `pairs`, what earlier calls read of the facts between
/// two ends when nothing was committed since (`import_pairs::Kept`), kept true as facts are stored;
/// with the store's directory `dir`, documents are linked through the cached names
/// (`import_links.rs`).
pub(crate) fn import_among(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    records: &[Value],
    (agent, all_agents): (&str, bool),
    now: i64,
    (pairs, dir): (&mut Pairs, Option<&std::path::Path>),
) -> Result<Imported> {
    if records.len() > MAX_LIMIT {
        return Err(Error::InvalidArgument(format!("records: at most {MAX_LIMIT} per call, got {}", records.len())));
    }
    let mut out = Imported::default();
    let mut tally = Tally::default();
    let mut by_kind: [Vec<(usize, &Map<String, Value>)>; 5] = Default::default();
    for (index, record) in records.iter().enumerate() {
        let Some(r) = record.as_object() else {
            out.skipped.push(Skipped { index, reason: "record: must be an object".into() });
            continue;
        };
        let slot = match r.get("kind").and_then(Value::as_str) {
            Some("header") => {
                if let Err(reason) = check_header(r) {
                    out.skipped.push(Skipped { index, reason });
                }
                continue;
            }
            Some(kind @ ("entity" | "fact" | "document" | "note" | "handoff")) => {
                if let Err(reason) = known_fields(kind, r) {
                    out.skipped.push(Skipped { index, reason });
                    continue;
                }
                ["entity", "fact", "document", "note", "handoff"].iter().position(|k| *k == kind).expect("listed")
            }
            _ => {
                let reason = format!("kind: must be one of {}", kind_names().join(", "));
                out.skipped.push(Skipped { index, reason });
                continue;
            }
        };
        by_kind[slot].push((index, r));
    }
    // The scope's names as they are before the call writes any entity, when it links documents.
    let mut links = if by_kind[2].is_empty() { Links::Whole(None) } else { Links::before(tx, part, dir)? };
    for &(index, r) in &by_kind[0] {
        if let Err(reason) = import_entity(tx, part, r, now, (&mut out, &mut tally))? {
            out.skipped.push(Skipped { index, reason });
        }
    }
    let mut citing = Vec::new();
    let mut lens = Lens::new();
    for &(index, r) in &by_kind[1] {
        match import_fact(tx, part, r, (agent, all_agents), now, (&mut out, &mut tally, &mut lens, pairs))? {
            Ok(Some(doc)) => citing.push((index, doc)),
            Ok(None) => {}
            Err(reason) => out.skipped.push(Skipped { index, reason }),
        }
    }
    // One index batch for the call's documents (one block per term).
    let mut passages = fts::Indexer::new(part.raw())?;
    for &(index, r) in &by_kind[2] {
        if let Err(reason) = import_document(tx, part, r, &mut links, (&mut passages, &mut tally), now, &mut out)? {
            out.skipped.push(Skipped { index, reason });
        }
    }
    passages.finish(tx)?;
    // The page's count changes, one write per touched count.
    tally.flush(tx)?;
    // Notes and handoffs stand alone: no other record refers to them.
    for &(index, r) in &by_kind[3] {
        if let Err(reason) = crate::notes::import::import(tx, part, r, (agent, all_agents), now, &mut out)? {
            out.skipped.push(Skipped { index, reason });
        }
    }
    for &(index, r) in &by_kind[4] {
        if let Err(reason) = crate::notes::handoff_exchange::import(tx, part, r, (agent, all_agents), now, &mut out)? {
            out.skipped.push(Skipped { index, reason });
        }
    }
    for (index, doc) in citing {
        if tx.get(DOC, &part.key(&[&doc.to_be_bytes()]))?.is_none()
            && tx.get(IMPORT_MAP, &reserved_key(part, doc))?.is_some()
        {
            out.not_reproduced.push(serde_json::json!({
                "index": index,
                "what": "citation",
                "why": "the document this fact was taken from is not imported yet; its citation resolves once it is",
            }));
        }
    }
    out.skipped.sort_by_key(|s| s.index);
    Ok(out)
}
