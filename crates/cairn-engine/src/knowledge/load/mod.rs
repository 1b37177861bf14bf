//! Bulk load: a whole export (JSON lines, one record a line) into an empty partition, in one
//! transaction. It is `import` for the operator who fills a scope from a file, as a graph
//! database's `COPY FROM` is: lines are parsed on two threads into compact records, entity and
//! fact records are checked, deduplicated and numbered in memory, and each tree's entries are
//! built one at a time in key order into one run (`WriteTxn::sorted_run`: into an empty tree the
//! leaf pages are packed as the entries come and sent on to the file, so no run is held in
//! memory), so the cost is one pass over the data instead of one B+tree walk per key. Memory is
//! what this path is shaped by: on the machines measured, fresh memory (the kernel zeroing it)
//! cost more than parsing or page building. The result is what `import` of the same records
//! would store: the same records, indexes, id map, name generations and one `import` history
//! event per record stored. Records the fast path does not take (documents, notes, handoffs, facts citing
//! documents, anything malformed) go through `import` itself afterwards in the same transaction,
//! so they are stored, or skipped with its reasons.

use super::graph::{MAX_NAME_LEN, has_control};
use super::import::{Imported, Skipped, check_header};
use super::import_checks::{fact_times, label_ok};
use super::import_rules::not_future;
use super::origin::Origin;
use super::part::Partition;
use super::trees::{DOC, ENT, REL};
use crate::error::Result;
use crate::text::{FastMap, fold};
use crate::time::parse_iso_ms;
use crate::write::WriteTxn;
use memchr::memmem::Finder;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::LazyLock;

mod entities;
mod folded;
mod line_scan;
use line_scan::Keys;
mod relation_record;
mod runs;
use entities::Entities;
pub(crate) use runs::store;

/// One line as the fast path reads it: every field optional, strings borrowed where they can be.
/// A line that does not fit this shape goes to `import`, which names the field at fault: a field
/// neither an entity nor a fact record holds among them (`import_checks::known_fields`).
#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    types: Option<Vec<String>>,
    attributes: Option<Map<String, Value>>,
    #[serde(borrow)]
    recorded_at: Option<Cow<'a, str>>,
    #[serde(borrow)]
    ended_at: Option<Cow<'a, str>>,
    #[serde(borrow)]
    from: Option<Cow<'a, str>>,
    #[serde(borrow)]
    to: Option<Cow<'a, str>>,
    #[serde(borrow)]
    from_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    to_name: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "type")]
    rel_type: Option<Cow<'a, str>>,
    valid_from: Option<String>,
    valid_to: Option<String>,
    /// When a fact was said, kept beside a `valid_from` that is not it.
    source_date: Option<String>,
    #[serde(borrow)]
    agent: Option<Cow<'a, str>>,
    #[serde(borrow)]
    provenance: Option<ProvenanceLine<'a>>,
    /// An earlier version of a revised fact: left to `import`, which maps the fact it is of.
    #[serde(borrow)]
    version_of: Option<Cow<'a, str>>,
    /// Where the record's ids were handed out (`Origin`).
    #[serde(borrow)]
    origin: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct ProvenanceLine<'a> {
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    label: Option<String>,
    #[serde(borrow)]
    agent: Option<Cow<'a, str>>,
}

/// An entity to store; its id is `base + index`.
struct NewEntity {
    name: String,
    types: Vec<String>,
    attributes: Map<String, Value>,
    recorded_at: i64,
}

/// A fact to store; its id is `base + entities + index`.
struct NewFact {
    from: usize,
    to: usize,
    /// Index into `Plan::spellings` (the type as stored) and `Plan::folded_types`.
    spelling: u32,
    folded_type: u32,
    recorded_at: i64,
    ended_at: Option<i64>,
    /// The label of its asserted source.
    label: Option<String>,
    /// Index into `Plan::agents`.
    agent: u32,
    /// Attributes and valid time, which most facts lack: boxed, so a plan of many facts holds
    /// less fresh memory (the kernel zeroing it measured more than a load's parsing).
    extra: Option<Box<FactExtra>>,
}

/// A fact's identity for deduplication: from, to (entity indexes) and folded type index; an ended
/// fact's is this and its (recorded, ended) times. Kept small: planning a fact looks one up at
/// random among every fact's, and a key of 40 bytes made that table larger than the cache.
type Triple = (u32, u32, u32);

/// What a history event is about.
#[derive(Clone, Copy)]
enum Written {
    Entity(usize),
    Fact(usize),
}

/// Everything decided before the write: what to store, in what order its events come, and the
/// lines left for `import`.
#[derive(Default)]
pub(crate) struct Plan {
    entities: Vec<NewEntity>,
    /// The entities' source ids, folded names and their index by name.
    known: Entities,
    facts: Vec<NewFact>,
    /// Source ids (with their origin) → local fact index (the `k.import_map` entries).
    fact_map: FastMap<Src, usize>,
    /// `(from, to, folded type)` → local fact index: one fact per live triple, and per ended
    /// version (`(recorded_at, ended_at)`), as `import` matches stored ones.
    triples: FastMap<Triple, u32>,
    ended: FastMap<(Triple, i64, i64), u32>,
    /// Relation types as sent (trimmed) → their spelling and folded indexes: a graph has few
    /// types and many facts, so each is folded once.
    types: FastMap<String, (u32, u32)>,
    spellings: Vec<String>,
    folded_types: Vec<String>,
    folded_index: FastMap<String, usize>,
    agents: Vec<String>,
    agent_index: FastMap<String, u32>,
    written: Vec<Written>,
    /// Lines for `import`, by line index.
    rest: Vec<(usize, Value)>,
    /// Whether planning a fact has created an entity or mapped an id: the ends resolved before
    /// the facts were planned (`Resolved`) no longer hold.
    remapped: bool,
    pub(crate) out: Imported,
}

/// Where a fact's ends resolve against the entities the entity records left, worked out on a
/// helper a chunk of lines ahead of the planning (`Plan::facts`): resolving an end (an id lookup,
/// then the entity's folded name compared) was most of planning a fact, each step a cache miss.
/// It holds while planning has not `remapped`; an export's facts name entities its entity
/// records hold, so for an export it holds throughout.
#[derive(Clone, Copy)]
struct Resolved {
    /// Each end's id is mapped.
    known: [bool; 2],
    /// Each end's entity (`None`: not one yet, or not resolvable; `peek` says which).
    found: [Option<Found<'static>>; 2],
}

/// A source id with the origin it was handed out in.
type Src = (Origin, u64);

/// A line's origin; `Err(())`: not one an export writes (the line goes to `import`, which says so).
fn origin(s: Option<&Cow<'_, str>>) -> std::result::Result<Origin, ()> {
    s.map_or(Ok(Origin::NONE), |s| Origin::parse(s).ok_or(()))
}

/// `Ok(None)`: absent; `Err(())`: present but not a valid id or time (the line goes to `import`).
fn source_id(s: Option<&Cow<'_, str>>) -> std::result::Result<Option<u64>, ()> {
    s.map(|s| s.parse::<u64>().map_err(|_| ())).transpose()
}

fn time(s: Option<&Cow<'_, str>>) -> std::result::Result<Option<i64>, ()> {
    s.map(|s| parse_iso_ms(s).ok_or(())).transpose()
}

/// An index into one of the plan's tables: far below `u32::MAX` (a load's body is held in memory
/// whole, and each record takes more than a byte of it).
fn index_u32(at: usize) -> u32 {
    u32::try_from(at).expect("fewer than 2^32 records, types and agents")
}

/// A name the fast path stores as given: 1..=1 KiB after trimming, no control characters (the
/// others go to `import`, which refuses them).
fn fits(name: &str) -> bool {
    let len = name.trim().len();
    len > 0 && len <= MAX_NAME_LEN && !has_control(name)
}

/// An entity line as the parse threads leave it: checked, its id and time read, its name and
/// types folded (everything that needs no other line).
struct EntityRec<'a> {
    source: Option<Src>,
    name: Cow<'a, str>,
    folded: String,
    /// The types as sent, each with its folded form.
    types: Vec<(String, String)>,
    attributes: Option<Map<String, Value>>,
    recorded_at: Option<i64>,
}

/// One end of a fact line: the entity id and name it gives.
struct End<'a> {
    id: Option<Src>,
    name: Option<Cow<'a, str>>,
}

impl End<'_> {
    /// The name, trimmed, unless it holds only whitespace.
    fn named(&self) -> Option<&str> {
        self.name.as_deref().map(str::trim).filter(|n| !n.is_empty())
    }
}

/// Where a fact's end resolves (`Plan::peek`).
#[derive(Clone, Copy, PartialEq)]
enum Found<'e> {
    /// The entity its id maps to.
    Mapped(usize),
    /// The entity its (folded) name names.
    Named(usize),
    /// No entity yet: one of this folded name is to be created.
    New(&'e str),
}

/// The rarely set parts of a fact line, boxed so the common line stays small.
#[derive(Clone)]
struct FactExtra {
    attributes: Map<String, Value>,
    valid_from: Option<String>,
    valid_to: Option<String>,
    source_date: Option<String>,
}

/// A fact line as the parse threads leave it (the line-local checks done, ids and times read).
struct FactRec<'a> {
    source: Src,
    /// The line fails a check of its own (type, times, provenance): unless its id was read
    /// before, it goes to `import`.
    bad: bool,
    rel_type: Cow<'a, str>,
    recorded_at: i64,
    ended_at: Option<i64>,
    ends: [End<'a>; 2],
    label: Option<String>,
    agent: Option<Cow<'a, str>>,
    extra: Option<Box<FactExtra>>,
}

/// A line that is neither an entity nor a fact the fast path reads.
#[derive(Clone, Copy)]
enum Other {
    Header,
    /// For `import` (or skipped, if not JSON).
    HandOver,
}

/// A fact line as parsed: its index, bytes and record (`None`: no valid id).
type FactLine<'a> = (usize, &'a [u8], Option<FactRec<'a>>);

/// The lines of part of the body, by kind, each with its index and bytes. The vectors are sized
/// once: growing one of a few hundred MB moves it and has the kernel zero fresh memory at every
/// doubling, which measured as much as the parsing.
struct Parsed<'a> {
    entities: Vec<(usize, &'a [u8], EntityRec<'a>)>,
    facts: Vec<FactLine<'a>>,
    others: Vec<(usize, &'a [u8], Other)>,
}

impl<'a> EntityRec<'a> {
    fn read(r: Line<'a>) -> Option<Self> {
        // A fact's field on an entity line: `import` skips it, naming the field.
        let fact_only = r.from.is_some()
            || r.to.is_some()
            || r.from_name.is_some()
            || r.to_name.is_some()
            || r.rel_type.is_some()
            || r.valid_from.is_some()
            || r.valid_to.is_some()
            || r.source_date.is_some()
            || r.ended_at.is_some()
            || r.agent.is_some()
            || r.provenance.is_some()
            || r.version_of.is_some();
        if fact_only {
            return None;
        }
        let name = r.name.filter(|n| fits(n))?;
        let origin = origin(r.origin.as_ref()).ok()?;
        let source = source_id(r.id.as_ref()).ok()?.map(|id| (origin, id));
        let recorded_at = time(r.recorded_at.as_ref()).ok()?;
        let types = r.types.unwrap_or_default();
        if !types.iter().all(|t| fits(t)) {
            return None;
        }
        let types = types
            .into_iter()
            .map(|t| {
                let folded = fold(&t);
                (t, folded)
            })
            .collect();
        Some(EntityRec { source, folded: fold(name.trim()), name, types, attributes: r.attributes, recorded_at })
    }
}

impl<'a> FactRec<'a> {
    /// `None` when the line has no valid id; `last` caches the last time read (an export's facts
    /// often share theirs).
    fn read(r: Line<'a>, last: &mut Option<(Cow<'a, str>, i64)>) -> Option<Self> {
        // An entity's field on a fact line: `import` skips it, naming the field.
        if r.name.is_some() || r.types.is_some() {
            return None;
        }
        let origin = origin(r.origin.as_ref()).ok()?;
        let source = (origin, source_id(r.id.as_ref()).ok().flatten()?);
        let mut bad = !r.rel_type.as_deref().is_some_and(fits) || r.version_of.is_some();
        let recorded_at = match (&r.recorded_at, &*last) {
            (Some(s), Some((have, ms))) if s == have => Some(*ms),
            (Some(s), _) => parse_iso_ms(s).inspect(|&ms| *last = Some((s.clone(), ms))),
            (None, _) => None,
        };
        bad |= recorded_at.is_none();
        let recorded_at = recorded_at.unwrap_or_default();
        let ended_at = time(r.ended_at.as_ref()).unwrap_or_else(|()| {
            bad = true;
            None
        });
        let (label, prov_agent) = match r.provenance {
            None => (None, None),
            Some(p) if matches!(p.kind.as_deref(), None | Some("asserted")) => (p.label, p.agent),
            Some(_) => {
                bad = true;
                (None, None)
            }
        };
        // What `import` checks beyond the shape: a label's size, the ends' names, valid time.
        bad |= label_ok("label", label.as_deref()).is_err();
        for name in [&r.from_name, &r.to_name].into_iter().flatten() {
            bad |= !name.trim().is_empty() && !fits(name);
        }
        let no_attributes = Map::new();
        bad |= fact_times(
            r.valid_from.as_deref(),
            r.valid_to.as_deref(),
            r.source_date.as_deref(),
            r.attributes.as_ref().unwrap_or(&no_attributes),
        )
        .is_err();
        let end = |id: Option<Cow<'a, str>>, name: Option<Cow<'a, str>>| End {
            id: source_id(id.as_ref()).ok().flatten().map(|id| (origin, id)),
            name,
        };
        let extra = (r.attributes.as_ref().is_some_and(|a| !a.is_empty())
            || r.valid_from.is_some()
            || r.valid_to.is_some()
            || r.source_date.is_some())
        .then(|| {
            Box::new(FactExtra {
                attributes: r.attributes.unwrap_or_default(),
                valid_from: r.valid_from,
                valid_to: r.valid_to,
                source_date: r.source_date,
            })
        });
        Some(FactRec {
            source,
            bad,
            rel_type: r.rel_type.unwrap_or_default(),
            recorded_at,
            ended_at,
            ends: [end(r.from, r.from_name), end(r.to, r.to_name)],
            label,
            agent: prov_agent.or(r.agent),
            extra,
        })
    }
}

/// The fields of an entity line (`import_checks`), each anything: a line holding another,
/// `null` included, is not one the fast path takes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "the fields are only matched, never read")]
struct EntityFields {
    kind: IgnoredAny,
    id: Option<IgnoredAny>,
    name: Option<IgnoredAny>,
    types: Option<IgnoredAny>,
    attributes: Option<IgnoredAny>,
    recorded_at: Option<IgnoredAny>,
    origin: Option<IgnoredAny>,
}

/// Whether entity line `raw`, which `Line` read without a fact's field set, also holds none set
/// to `null` (`Line` reads those as absent): only a line spelling `null` is parsed again.
fn entity_fields_only(raw: &[u8]) -> bool {
    static NULL: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"null"));
    NULL.find(raw).is_none() || serde_json::from_slice::<EntityFields>(raw).is_ok()
}

/// Whether fact line `raw` may hold an entity's field (`name`, `types`) set to `null`, which
/// `Line` reads as absent: it spells one of those keys, or an escape that could spell one. Such a
/// line goes to `import`, which names the field (a false alarm only costs the slower path). The
/// searchers are built once: building one per line measured as much as the searching.
fn may_name_entity_fields(raw: &[u8]) -> bool {
    static NEEDLES: LazyLock<[Finder<'static>; 3]> =
        LazyLock::new(|| [Finder::new(b"\"name\""), Finder::new(b"\"types\""), Finder::new(b"\\u")]);
    NEEDLES.iter().any(|needle| needle.find(raw).is_some())
}

/// The fields an entity line may hold (`EntityFields`): any other, even `null`, is a fact's.
const ENTITY_FIELDS: Keys = Keys::of(&["kind", "id", "name", "types", "attributes", "recorded_at", "origin"]);

/// The fields of an entity line that a fact line may not hold, even as `null`.
const ENTITY_ONLY: Keys = Keys::of(&["name", "types"]);

/// Parses the lines of `body` (the first at index `first`), blank ones left out.
fn parse_part(first: usize, part: &[u8]) -> Parsed<'_> {
    #[allow(clippy::naive_bytecount, reason = "one pass over the bytes about to be parsed")]
    let n = part.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut out = Parsed { entities: Vec::with_capacity(n), facts: Vec::with_capacity(n), others: Vec::new() };
    let mut last = None;
    for (i, raw) in part.split(|&b| b == b'\n').enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let index = first + i;
        // Which keys were `null` where the line was scanned; otherwise the checks below look.
        let (line, nulls) = if let Some((line, nulls)) = line_scan::scan(raw) {
            (line, Some(nulls))
        } else {
            let Ok(line) = serde_json::from_slice::<Line<'_>>(raw) else {
                out.others.push((index, raw, Other::HandOver));
                continue;
            };
            (line, None)
        };
        match line.kind.as_deref() {
            Some("entity") => {
                let only = || nulls.map_or_else(|| entity_fields_only(raw), |n| !n.meets(ENTITY_FIELDS.others()));
                match EntityRec::read(line).filter(|_| only()) {
                    Some(rec) => out.entities.push((index, raw, rec)),
                    None => out.others.push((index, raw, Other::HandOver)),
                }
            }
            Some("fact") => {
                let entity_field = || nulls.map_or_else(|| may_name_entity_fields(raw), |n| n.meets(ENTITY_ONLY));
                let rec = FactRec::read(line, &mut last).filter(|_| !entity_field());
                out.facts.push((index, raw, rec));
            }
            Some("header") => out.others.push((index, raw, Other::Header)),
            _ => out.others.push((index, raw, Other::HandOver)),
        }
    }
    out
}

/// What a helper thread returned (its panic goes on in the caller).
fn joined<T>(helper: std::thread::ScopedJoinHandle<'_, T>) -> T {
    helper.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// Parses the lines of `body` in order; a large body in two halves at once (JSON parsing is most
/// of reading a load, and each line parses alone).
fn parse_lines(body: &[u8]) -> Vec<Parsed<'_>> {
    const PARALLEL_FROM: usize = 1 << 20;
    let cut = (body.len() >= PARALLEL_FROM)
        .then(|| body[body.len() / 2..].iter().position(|&b| b == b'\n').map(|at| body.len() / 2 + at))
        .flatten();
    let Some(cut) = cut else { return vec![parse_part(0, body)] };
    let (head, tail) = (&body[..cut], &body[cut + 1..]);
    // Counting a megabyte of bytes once; a crate for it would buy nothing measurable here.
    #[allow(clippy::naive_bytecount, reason = "one pass over the first half, next to parsing it")]
    let tail_first = head.iter().filter(|&&b| b == b'\n').count() + 1;
    std::thread::scope(|s| {
        let later = s.spawn(|| parse_part(tail_first, tail));
        let first = parse_part(0, head);
        vec![first, joined(later)]
    })
}

impl Plan {
    /// Reads `body` (JSON lines; blank lines are ignored but keep their index) for `agent`, the
    /// provenance agent of facts that name none, at `now`, the time of entities whose record
    /// gives none.
    pub(crate) fn read(body: &[u8], agent: &str, now: i64) -> Plan {
        let mut plan = Plan::default();
        let parts = parse_lines(body);
        let entities: usize = parts.iter().map(|p| p.entities.len()).sum();
        let facts: usize = parts.iter().map(|p| p.facts.len()).sum();
        plan.entities.reserve(entities);
        let folded_bytes = parts.iter().flat_map(|p| &p.entities).map(|(_, _, e)| e.folded.len()).sum();
        plan.known.folded.reserve(entities, folded_bytes);
        plan.known.names.reserve(entities);
        plan.known.map.reserve(entities);
        plan.facts.reserve(facts);
        plan.fact_map.reserve(facts);
        plan.triples.reserve(facts);
        plan.written.reserve(entities + facts);
        // Entities first, then facts, whatever the order of the lines (as `import` does); the
        // lines left to `import` go in line order, those of the first pass before the facts'.
        let mut handed: Vec<(usize, &[u8])> = Vec::new();
        let mut fact_lines = Vec::with_capacity(parts.len());
        for part in parts {
            for (index, raw, other) in part.others {
                match other {
                    Other::Header => match serde_json::from_slice::<Map<String, Value>>(raw) {
                        Ok(r) => {
                            if let Err(reason) = check_header(&r) {
                                plan.out.skipped.push(Skipped { index, reason });
                            }
                        }
                        Err(_) => handed.push((index, raw)),
                    },
                    Other::HandOver => handed.push((index, raw)),
                }
            }
            for (index, raw, rec) in part.entities {
                if plan.entity(rec, now).is_err() {
                    handed.push((index, raw));
                }
            }
            fact_lines.push(part.facts);
        }
        handed.sort_unstable_by_key(|(index, _)| *index);
        for (index, raw) in handed {
            plan.hand_over(index, raw);
        }
        plan.facts(&fact_lines, agent, now);
        plan
    }

    /// Plans the fact lines of each part, in line order. A helper resolves their ends
    /// (`Resolved`) a chunk ahead, against a copy of the entities as the entity records left
    /// them: resolving an end and planning a fact cost about the same, each mostly cache misses,
    /// and one after the other they were a third of planning a load.
    fn facts(&mut self, parts: &[Vec<FactLine<'_>>], agent: &str, now: i64) {
        const CHUNK: usize = 4096;
        let known = self.known.clone();
        let chunks = || parts.iter().flat_map(|lines| lines.chunks(CHUNK));
        std::thread::scope(|s| {
            let (ahead, resolved) = std::sync::mpsc::sync_channel::<Vec<Option<Resolved>>>(8);
            let helper = s.spawn(move || {
                for chunk in chunks() {
                    let ends = chunk.iter().map(|(_, _, rec)| rec.as_ref().map(|r| known.resolved(r))).collect();
                    if ahead.send(ends).is_err() {
                        return;
                    }
                }
            });
            for chunk in chunks() {
                // A helper that stopped early panicked: joining it below goes on with that.
                let Ok(ends) = resolved.recv() else { break };
                for ((index, raw, rec), ends) in chunk.iter().zip(ends) {
                    if rec.as_ref().is_none_or(|rec| self.fact(rec, ends, agent, now).is_err()) {
                        self.hand_over(*index, raw);
                    }
                }
            }
            joined(helper);
        });
    }

    /// Leaves line `index` to `import` (or skips it, if it is not JSON at all).
    fn hand_over(&mut self, index: usize, raw: &[u8]) {
        match serde_json::from_slice::<Value>(raw) {
            Ok(v) => self.rest.push((index, v)),
            Err(e) => self.out.skipped.push(Skipped { index, reason: format!("record: not JSON ({e})") }),
        }
    }

    /// The entity an entity record names (`name`, which `fits`, folded as `folded`): by source
    /// id, then by folded name, else created with no types at `recorded_at` (the id is mapped
    /// either way); and whether it was created.
    fn resolve(&mut self, source: Option<Src>, name: &str, folded: String, recorded_at: i64) -> (usize, bool) {
        if let Some(at) = self.mapped(source, |f| f == folded) {
            return (at, false);
        }
        let (at, created) = if let Some(&at) = self.known.names.get(&folded) {
            (at, false)
        } else {
            self.entities.push(NewEntity {
                name: name.trim().to_owned(),
                types: Vec::new(),
                attributes: Map::new(),
                recorded_at,
            });
            self.known.folded.push(&folded);
            self.known.names.insert(folded, self.entities.len() - 1);
            (self.entities.len() - 1, true)
        };
        if let Some(s) = source {
            self.known.map.insert(s, at);
        }
        (at, created)
    }

    /// The entity `source` maps to, unless the record's name names another (`same` says whether
    /// the entity's folded name is the record's): an id of another origin, or of a hand-made
    /// record, is not trusted over a name (as `import`).
    fn mapped(&self, source: Option<Src>, same: impl Fn(&str) -> bool) -> Option<usize> {
        let at = *self.known.map.get(&source?)?;
        same(self.known.folded.get(at)).then_some(at)
    }

    /// Where a fact's end resolves, without creating it: an entity of the plan, or the folded
    /// name (`folded`, its name folded) of one to be created.
    fn peek<'e>(&self, end: &End<'_>, folded: Option<&'e str>) -> Option<Found<'e>> {
        if let Some(at) = self.known.mapped_end(end) {
            return Some(Found::Mapped(at));
        }
        let folded = folded?;
        Some(self.known.names.get(folded).map_or(Found::New(folded), |&at| Found::Named(at)))
    }

    /// The entity an end `peek` found as `found` resolves to, created if it is new (at
    /// `recorded_at`, recorded as written); its id is mapped to it. `None` when the name may
    /// not be stored.
    fn settle(&mut self, end: &End<'_>, found: Found<'_>, recorded_at: i64) -> Option<usize> {
        let at = match found {
            Found::Mapped(at) => return Some(at),
            Found::Named(at) => at,
            Found::New(folded) => {
                let name = end.name.as_deref().map(str::trim).filter(|n| !has_control(n))?;
                self.entities.push(NewEntity {
                    name: name.to_owned(),
                    types: Vec::new(),
                    attributes: Map::new(),
                    recorded_at,
                });
                let at = self.entities.len() - 1;
                self.known.folded.push(folded);
                self.known.names.insert(folded.to_owned(), at);
                self.remapped = true;
                // Recorded but not counted, as `import` does for an end it creates.
                self.written.push(Written::Entity(at));
                at
            }
        };
        if let Some(s) = end.id {
            self.known.map.insert(s, at);
            self.remapped = true;
        }
        Some(at)
    }

    /// Whether fact `at` of the plan is the one `r` describes: the same type and the ends its
    /// names name (as `import` checks a mapped fact).
    fn same_fact(&self, at: usize, r: &FactRec<'_>) -> bool {
        let f = &self.facts[at];
        self.folded_types[f.folded_type as usize] == fold(r.rel_type.trim())
            && self.known.same_name(&r.ends[0], f.from)
            && self.known.same_name(&r.ends[1], f.to)
    }

    /// An entity record, as `import` stores it: found or created (an id mapped to an entity of
    /// another name is not used: the name wins, and the id is mapped to the entity it names),
    /// then its types added (once each, up to folding), its attributes set, and the earliest
    /// `recorded_at` kept. `Err` leaves the record to `import` (checked before anything is
    /// decided for it).
    fn entity(&mut self, r: EntityRec<'_>, now: i64) -> std::result::Result<(), ()> {
        // A time later than now: `import` skips it, saying so.
        if not_future("recorded_at", r.recorded_at, now).is_err() {
            return Err(());
        }
        let (at, created) = self.resolve(r.source, &r.name, r.folded, r.recorded_at.unwrap_or(now));
        let e = &mut self.entities[at];
        let mut changed = created;
        for (t, ft) in &r.types {
            if !e.types.iter().any(|have| have.eq_ignore_ascii_case(t) || fold(have) == *ft) {
                e.types.push(t.trim().to_owned());
                changed = true;
            }
        }
        if let Some(attributes) = r.attributes {
            for (k, v) in attributes {
                if e.attributes.get(&k) != Some(&v) {
                    e.attributes.insert(k, v);
                    changed = true;
                }
            }
        }
        if let Some(t) = r.recorded_at
            && t < e.recorded_at
        {
            e.recorded_at = t;
            changed = true;
        }
        if changed {
            self.out.imported.entities += 1;
            self.written.push(Written::Entity(at));
        } else {
            self.out.unchanged.entities += 1;
        }
        Ok(())
    }

    /// The spelling and folded indexes of relation type `t` (trimmed).
    fn rel_type(&mut self, t: &str) -> (u32, u32) {
        if let Some(&ids) = self.types.get(t) {
            return ids;
        }
        let folded = fold(t);
        let next = self.folded_types.len();
        let f = *self.folded_index.entry(folded.clone()).or_insert(next);
        if f == next {
            self.folded_types.push(folded);
        }
        self.spellings.push(t.to_owned());
        let ids = (index_u32(self.spellings.len() - 1), index_u32(f));
        self.types.insert(t.to_owned(), ids);
        ids
    }

    /// The index of `agent` in `agents`.
    fn agent(&mut self, agent: &str) -> u32 {
        if let Some(&at) = self.agent_index.get(agent) {
            return at;
        }
        let at = index_u32(self.agents.len());
        self.agents.push(agent.to_owned());
        self.agent_index.insert(agent.to_owned(), at);
        at
    }

    /// A fact record citing no document, as `import` stores it. `Err` leaves it to `import`.
    fn fact(
        &mut self,
        r: &FactRec<'_>,
        resolved: Option<Resolved>,
        agent: &str,
        now: i64,
    ) -> std::result::Result<(), ()> {
        let resolved = resolved.filter(|_| !self.remapped);
        if let Some(&at) = self.fact_map.get(&r.source)
            && self.same_fact(at, r)
        {
            self.out.unchanged.facts += 1;
            return Ok(());
        }
        let bad_times = not_future("recorded_at", Some(r.recorded_at), now).is_err()
            || not_future("ended_at", r.ended_at, now).is_err()
            || r.ended_at.is_some_and(|end| end < r.recorded_at);
        if r.bad || bad_times {
            return Err(());
        }
        // Both ends must be resolvable before either is created.
        for (i, end) in r.ends.iter().enumerate() {
            let known =
                resolved.map_or_else(|| end.id.is_some_and(|s| self.known.map.contains_key(&s)), |p| p.known[i]);
            if !known && !end.name.as_deref().is_some_and(fits) {
                return Err(());
            }
        }
        // Folded only where the early answer does not hold.
        let early = |i: usize| resolved.and_then(|p| p.found[i]);
        let folded: [Option<String>; 2] =
            std::array::from_fn(|i| if early(i).is_some() { None } else { r.ends[i].named().map(fold) });
        let peek = |i: usize| early(i).or_else(|| self.peek(&r.ends[i], folded[i].as_deref()));
        // Both ends at one entity: `import` skips it, saying so.
        let (Some(from), Some(to)) = (peek(0), peek(1)) else { return Err(()) };
        let same = match (&from, &to) {
            (Found::Mapped(a) | Found::Named(a), Found::Mapped(b) | Found::Named(b)) => a == b,
            (a, b) => a == b,
        };
        if same {
            return Err(());
        }
        // Settling the first end cannot change where the second resolves: it is another entity,
        // and a new entity's id (if the second end gives the same one) is not trusted over the
        // second end's own name.
        let from = self.settle(&r.ends[0], from, r.recorded_at).ok_or(())?;
        let to = self.settle(&r.ends[1], to, r.recorded_at).ok_or(())?;
        let at = [from, to];
        let (spelling, folded_type) = self.rel_type(r.rel_type.trim());
        let triple = (index_u32(at[0]), index_u32(at[1]), folded_type);
        let have = match r.ended_at {
            None => self.triples.get(&triple),
            Some(end) => self.ended.get(&(triple, r.recorded_at, end)),
        };
        if let Some(&have) = have {
            self.fact_map.insert(r.source, have as usize);
            self.out.unchanged.facts += 1;
            return Ok(());
        }
        let agent = self.agent(r.agent.as_deref().unwrap_or(agent));
        self.facts.push(NewFact {
            from: at[0],
            to: at[1],
            spelling,
            folded_type,
            recorded_at: r.recorded_at,
            ended_at: r.ended_at,
            label: r.label.clone(),
            agent,
            extra: r.extra.clone(),
        });
        let local = self.facts.len() - 1;
        match r.ended_at {
            None => self.triples.insert(triple, index_u32(local)),
            Some(end) => self.ended.insert((triple, r.recorded_at, end), index_u32(local)),
        };
        self.fact_map.insert(r.source, local);
        self.out.imported.facts += 1;
        self.written.push(Written::Fact(local));
        Ok(())
    }
}

/// Whether `part` holds no entity, fact or document (what `load` requires).
pub(crate) fn is_empty(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<bool> {
    for tree in [ENT, REL, DOC] {
        if tx.first_with_prefix(tree, part.prefix())?.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}
