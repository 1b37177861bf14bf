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

use super::attr_index::Bulk;
use super::graph::{Entity, MAX_NAME_LEN, Relation, Source, has_control};
use super::ids::{read_next_id, write_next_id};
use super::import::{ENTITY, FACT, IMPORT_MAP, Imported, Skipped, check_header, import};
use super::import_checks::{fact_times, label_ok};
use super::import_rules::not_future;
use super::origin::Origin;
use super::part::Partition;
use super::tally::Tally;
use super::trees::{ADJ, DOC, ENT, ENT_NAME, IN, NAMES_GEN, NAMES_LOG, OUT, REL, keyed_name, keyed_type, names_gen_in};
use crate::error::Result;
use crate::history::{AGENT, EVENT, NAME, TARGET, agent_prefix, name_prefix, target_prefix};
use crate::key_text;
use crate::knowledge::export::MAX_LIMIT;
use crate::text::{FastMap, fold};
use crate::time::parse_iso_ms;
use crate::write::WriteTxn;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// One line as the fast path reads it: every field optional, strings borrowed where they can be.
/// A line that does not fit this shape goes to `import`, which names the field at fault: a field
/// neither an entity nor a fact record holds among them (`import_checks::known_fields`).
#[derive(Deserialize)]
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

#[derive(Deserialize)]
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
    /// `fold` of the trimmed name.
    folded: String,
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
    attributes: Map<String, Value>,
    valid_from: Option<String>,
    valid_to: Option<String>,
    source_date: Option<String>,
    recorded_at: i64,
    ended_at: Option<i64>,
    source: Source,
    /// Index into `Plan::agents`.
    agent: u32,
}

/// A fact's identity for deduplication: from, to (entity indexes), folded type index, and for an
/// ended fact its (recorded, ended) times.
type Triple = (usize, usize, u32, Option<(i64, i64)>);

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
    facts: Vec<NewFact>,
    /// Source ids (with their origin) → local entity / fact index (the `k.import_map` entries).
    entity_map: FastMap<Src, usize>,
    fact_map: FastMap<Src, usize>,
    /// Folded name → local entity index.
    names: FastMap<String, usize>,
    /// `(from, to, folded type, version)` → local fact index: one fact per live triple, and per
    /// ended version (`(recorded_at, ended_at)`), as `import` matches stored ones.
    triples: FastMap<Triple, usize>,
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
    pub(crate) out: Imported,
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

/// An index into one of the plan's small tables (types, agents): far below `u32::MAX`.
fn index_u32(at: usize) -> u32 {
    u32::try_from(at).expect("fewer than 2^32 relation types and agents")
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

/// One end of a fact line: the entity id and name it gives, and the name folded (on the parse
/// threads: folding is most of what resolving an end costs, and the rest of a plan is built on
/// one thread).
struct End<'a> {
    id: Option<Src>,
    name: Option<Cow<'a, str>>,
    folded: Option<String>,
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

/// The lines of part of the body, by kind, each with its index and bytes. The vectors are sized
/// once: growing one of a few hundred MB moves it and has the kernel zero fresh memory at every
/// doubling, which measured as much as the parsing.
struct Parsed<'a> {
    entities: Vec<(usize, &'a [u8], EntityRec<'a>)>,
    /// `None`: a fact line without a valid id.
    facts: Vec<(usize, &'a [u8], Option<FactRec<'a>>)>,
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
            folded: name.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(fold),
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
    !contains(raw, b"null") || serde_json::from_slice::<EntityFields>(raw).is_ok()
}

/// Whether fact line `raw` may hold an entity's field (`name`, `types`) set to `null`, which
/// `Line` reads as absent: it spells one of those keys, or an escape that could spell one. Such a
/// line goes to `import`, which names the field (a false alarm only costs the slower path).
fn may_name_entity_fields(raw: &[u8]) -> bool {
    contains(raw, b"\"name\"") || contains(raw, b"\"types\"") || contains(raw, b"\\u")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

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
        let Ok(line) = serde_json::from_slice::<Line<'_>>(raw) else {
            out.others.push((index, raw, Other::HandOver));
            continue;
        };
        match line.kind.as_deref() {
            Some("entity") => match EntityRec::read(line).filter(|_| entity_fields_only(raw)) {
                Some(rec) => out.entities.push((index, raw, rec)),
                None => out.others.push((index, raw, Other::HandOver)),
            },
            Some("fact") => {
                let rec = FactRec::read(line, &mut last).filter(|_| !may_name_entity_fields(raw));
                out.facts.push((index, raw, rec));
            }
            Some("header") => out.others.push((index, raw, Other::Header)),
            _ => out.others.push((index, raw, Other::HandOver)),
        }
    }
    out
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
        vec![first, later.join().unwrap_or_else(|p| std::panic::resume_unwind(p))]
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
        plan.names.reserve(entities);
        plan.entity_map.reserve(entities);
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
        for (index, raw, rec) in fact_lines.into_iter().flatten() {
            if rec.is_none_or(|rec| plan.fact(rec, agent, now).is_err()) {
                plan.hand_over(index, raw);
            }
        }
        plan
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
        if let Some(at) = self.mapped(source, Some(&folded)) {
            return (at, false);
        }
        let (at, created) = if let Some(&at) = self.names.get(&folded) {
            (at, false)
        } else {
            self.entities.push(NewEntity {
                name: name.trim().to_owned(),
                folded: folded.clone(),
                types: Vec::new(),
                attributes: Map::new(),
                recorded_at,
            });
            self.names.insert(folded, self.entities.len() - 1);
            (self.entities.len() - 1, true)
        };
        if let Some(s) = source {
            self.entity_map.insert(s, at);
        }
        (at, created)
    }

    /// The entity `source` maps to, unless `folded` (the record's name) names another: an id of
    /// another origin, or of a hand-made record, is not trusted over a name (as `import`).
    fn mapped(&self, source: Option<Src>, folded: Option<&str>) -> Option<usize> {
        let at = *self.entity_map.get(&source?)?;
        folded.is_none_or(|f| self.entities[at].folded == f).then_some(at)
    }

    /// Where a fact's end resolves, without creating it: an entity of the plan, or the folded
    /// name of one to be created.
    fn peek<'e>(&self, end: &'e End<'_>) -> Option<Found<'e>> {
        let folded = end.folded.as_deref();
        if let Some(at) = self.mapped(end.id, folded) {
            return Some(Found::Mapped(at));
        }
        let folded = folded?;
        Some(self.names.get(folded).map_or(Found::New(folded), |&at| Found::Named(at)))
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
                    folded: folded.to_owned(),
                    types: Vec::new(),
                    attributes: Map::new(),
                    recorded_at,
                });
                let at = self.entities.len() - 1;
                self.names.insert(folded.to_owned(), at);
                // Recorded but not counted, as `import` does for an end it creates.
                self.written.push(Written::Entity(at));
                at
            }
        };
        if let Some(s) = end.id {
            self.entity_map.insert(s, at);
        }
        Some(at)
    }

    /// Whether fact `at` of the plan is the one `r` describes: the same type and the ends its
    /// names name (as `import` checks a mapped fact).
    fn same_fact(&self, at: usize, r: &FactRec<'_>) -> bool {
        let f = &self.facts[at];
        let named = |e: usize, end: &End<'_>| end.folded.as_ref().is_none_or(|f| self.entities[e].folded == *f);
        self.folded_types[f.folded_type as usize] == fold(r.rel_type.trim())
            && named(f.from, &r.ends[0])
            && named(f.to, &r.ends[1])
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
    fn fact(&mut self, r: FactRec<'_>, agent: &str, now: i64) -> std::result::Result<(), ()> {
        if let Some(&at) = self.fact_map.get(&r.source)
            && self.same_fact(at, &r)
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
        for end in &r.ends {
            let known = end.id.is_some_and(|s| self.entity_map.contains_key(&s));
            if !known && !end.name.as_deref().is_some_and(fits) {
                return Err(());
            }
        }
        // Both ends at one entity: `import` skips it, saying so.
        let (Some(from), Some(to)) = (self.peek(&r.ends[0]), self.peek(&r.ends[1])) else { return Err(()) };
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
        let version = r.ended_at.map(|end| (r.recorded_at, end));
        let triple = (at[0], at[1], folded_type, version);
        if let Some(&have) = self.triples.get(&triple) {
            self.fact_map.insert(r.source, have);
            self.out.unchanged.facts += 1;
            return Ok(());
        }
        let agent = self.agent(r.agent.as_deref().unwrap_or(agent));
        let (attributes, valid_from, valid_to, source_date) = match r.extra {
            Some(x) => (x.attributes, x.valid_from, x.valid_to, x.source_date),
            None => (Map::new(), None, None, None),
        };
        self.facts.push(NewFact {
            from: at[0],
            to: at[1],
            spelling,
            folded_type,
            attributes,
            valid_from,
            valid_to,
            source_date,
            recorded_at: r.recorded_at,
            ended_at: r.ended_at,
            source: Source::Asserted { label: r.label },
            agent,
        });
        let local = self.facts.len() - 1;
        self.triples.insert(triple, local);
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

/// Appends `n` to `out` in decimal.
fn push_u64(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// How the plan's local indexes become ids: entities from `base`, then facts, then events.
#[derive(Clone, Copy)]
struct Ids {
    base: u64,
    entities: u64,
    facts: u64,
}

impl Ids {
    fn entity(self, i: usize) -> u64 {
        self.base + i as u64
    }
    fn fact(self, i: usize) -> u64 {
        self.base + self.entities + i as u64
    }
    fn event(self, k: usize) -> u64 {
        self.base + self.entities + self.facts + k as u64
    }
}

/// Reusable key and value buffers: one entry is built at a time and handed to its run.
#[derive(Default)]
struct Buf {
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Buf {
    /// Starts the key with `part`'s prefix and clears the value.
    fn start(&mut self, part: &Partition) {
        self.key.clear();
        self.key.extend_from_slice(part.prefix());
        self.value.clear();
    }
}

/// Whether a name or relation type holds a NUL byte, or may be too long for a key to hold whole
/// (`key_text::fit`): keys then may not order as the tuples they are built from are sorted, and
/// those runs are sorted by their encoded keys instead.
fn out_of_order(part: &Partition, plan: &Plan) -> bool {
    let nul = |s: &str| s.as_bytes().contains(&0);
    let longest = |it: &mut dyn Iterator<Item = &str>| it.map(str::len).max().unwrap_or(0);
    let name = longest(&mut plan.entities.iter().flat_map(|e| [e.name.as_str(), e.folded.as_str()]));
    let ty = longest(&mut plan.spellings.iter().chain(&plan.folded_types).map(String::as_str));
    // The longest key a load writes is a fact's history target: `fact \0 from \0 type \0 to \0 | seq`.
    plan.entities.iter().any(|e| nul(&e.name) || nul(&e.folded))
        || plan.spellings.iter().any(|t| nul(t))
        || plan.folded_types.iter().any(|t| nul(t))
        || !key_text::fits(2 * name + ty, part.prefix().len() + 4 + 4 + 8)
}

/// `k.ent`, `k.ent_name` and `k.names_log` (one name generation per entity after `generation`).
fn entity_runs(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    plan: &Plan,
    ids: Ids,
    (generation, ordered): (u64, bool),
) -> Result<()> {
    let mut b = Buf::default();
    let mut run = tx.sorted_run(ENT, true)?;
    for (i, e) in plan.entities.iter().enumerate() {
        let record = Entity {
            id: ids.entity(i),
            name: e.name.clone(),
            types: e.types.clone(),
            attributes: e.attributes.clone(),
            recorded_at: e.recorded_at,
        };
        b.start(part);
        b.key.extend_from_slice(&record.id.to_be_bytes());
        serde_json::to_writer(&mut b.value, &record).expect("records serialise");
        run.push(&b.key, &b.value)?;
    }
    run.finish()?;
    let mut by_name: Vec<(&str, u64)> =
        plan.entities.iter().enumerate().map(|(i, e)| (e.folded.as_str(), ids.entity(i))).collect();
    by_name.sort_unstable();
    let mut run = tx.sorted_run(ENT_NAME, ordered)?;
    for (folded, id) in by_name {
        b.start(part);
        b.key.extend_from_slice(&keyed_name(part, folded));
        b.key.push(0);
        b.key.extend_from_slice(&id.to_be_bytes());
        run.push(&b.key, &[])?;
    }
    run.finish()?;
    if ids.entities > 0 {
        // One name generation per entity, as creating them one by one would leave.
        tx.put(NAMES_GEN, part.prefix(), &(generation + ids.entities).to_be_bytes())?;
        let mut run = tx.sorted_run(NAMES_LOG, true)?;
        for i in 0..plan.entities.len() {
            b.start(part);
            b.key.extend_from_slice(&(generation + 1 + i as u64).to_be_bytes());
            run.push(&b.key, &ids.entity(i).to_be_bytes())?;
        }
        run.finish()?;
    }
    Ok(())
}

/// `k.attr` and `k.attr_of`: every entity under each attribute its record holds (a record's dated
/// writes make it go through `import`, which files them).
fn attribute_runs(tx: &mut WriteTxn<'_>, part: &Partition, plan: &Plan, ids: Ids) -> Result<()> {
    let mut bulk = Bulk::default();
    for (i, e) in plan.entities.iter().enumerate() {
        bulk.add(part, ids.entity(i), &e.attributes);
    }
    bulk.put(tx)
}

/// The plan's counts (`tally.rs`), summed per spelling before they reach the tally: adding each
/// record to it (a key built per record) measured 5% of a load. Spellings are added in the order
/// first seen, so a type keeps the spelling a record-by-record count would give it.
fn counts(plan: &Plan, part: &Partition) -> Tally {
    let mut tally = Tally::default();
    let mut types: Vec<(&str, i64)> = Vec::new();
    let mut at: FastMap<&str, usize> = FastMap::default();
    for e in &plan.entities {
        for t in &e.types {
            let i = *at.entry(t.as_str()).or_insert_with(|| {
                types.push((t.as_str(), 0));
                types.len() - 1
            });
            types[i].1 += 1;
        }
    }
    tally.entities(part, super::tally::delta(plan.entities.len()));
    for (t, n) in types {
        tally.entity_type(part, t, n);
    }
    let mut live = vec![0i64; plan.spellings.len()];
    for f in plan.facts.iter().filter(|f| f.ended_at.is_none()) {
        live[f.spelling as usize] += 1;
    }
    for (t, n) in plan.spellings.iter().zip(live) {
        tally.relation_type(part, t, n);
    }
    tally
}

/// `k.rel`: the relation records.
fn relation_run(tx: &mut WriteTxn<'_>, part: &Partition, plan: &Plan, ids: Ids) -> Result<()> {
    let mut b = Buf::default();
    let mut run = tx.sorted_run(REL, true)?;
    for (i, f) in plan.facts.iter().enumerate() {
        let record = Relation {
            shortened: None,
            version_of: None,
            id: ids.fact(i),
            from: ids.entity(f.from),
            to: ids.entity(f.to),
            rel_type: plan.spellings[f.spelling as usize].clone(),
            attributes: f.attributes.clone(),
            valid_from: f.valid_from.clone(),
            valid_to: f.valid_to.clone(),
            recorded_at: f.recorded_at,
            ended_at: f.ended_at,
            source: f.source.clone(),
            agent: plan.agents[f.agent as usize].clone(),
            source_date: f.source_date.clone(),
        };
        b.start(part);
        b.key.extend_from_slice(&record.id.to_be_bytes());
        serde_json::to_writer(&mut b.value, &record).expect("records serialise");
        run.push(&b.key, &b.value)?;
    }
    run.finish()
}

/// `k.adj`: both ends of every fact, sorted by (entity, direction, folded type, relation id).
fn adjacency_run(tx: &mut WriteTxn<'_>, part: &Partition, plan: &Plan, ids: Ids, ordered: bool) -> Result<()> {
    let mut adj: Vec<(u64, u8, &str, u64)> = Vec::with_capacity(plan.facts.len() * 2);
    for (i, f) in plan.facts.iter().enumerate() {
        let ty = plan.folded_types[f.folded_type as usize].as_str();
        adj.push((ids.entity(f.from), OUT, ty, ids.fact(i)));
        adj.push((ids.entity(f.to), IN, ty, ids.fact(i)));
    }
    adj.sort_unstable();
    let mut b = Buf::default();
    let mut run = tx.sorted_run(ADJ, ordered)?;
    for (e, dir, ty, id) in adj {
        b.start(part);
        b.key.extend_from_slice(&e.to_be_bytes());
        b.key.push(dir);
        b.key.extend_from_slice(&keyed_type(part, ty));
        b.key.push(0);
        b.key.extend_from_slice(&id.to_be_bytes());
        run.push(&b.key, &[])?;
    }
    run.finish()
}

/// The longest `k.import_map` key after the partition: kind byte, origin, source id.
const MAP_KEY: usize = 1 + super::origin::ORIGIN_LEN + 8;

/// `k.import_map`: every source id read, to its local id.
fn map_run(tx: &mut WriteTxn<'_>, part: &Partition, plan: &Plan, ids: Ids) -> Result<()> {
    // Keys `kind | origin | source id`, sorted as bytes: an entry naming no origin is shorter.
    let key = |kind: u8, (o, s): Src| {
        let mut k = [0u8; MAP_KEY];
        k[0] = kind;
        let o = o.key_bytes();
        k[1..=o.len()].copy_from_slice(o);
        k[1 + o.len()..9 + o.len()].copy_from_slice(&s.to_be_bytes());
        (k, 9 + o.len())
    };
    let mut map: Vec<(([u8; MAP_KEY], usize), u64)> = Vec::with_capacity(plan.entity_map.len() + plan.fact_map.len());
    map.extend(plan.entity_map.iter().map(|(&s, &at)| (key(ENTITY, s), ids.entity(at))));
    map.extend(plan.fact_map.iter().map(|(&s, &at)| (key(FACT, s), ids.fact(at))));
    map.sort_unstable_by(|((a, la), _), ((b, lb), _)| a[..*la].cmp(&b[..*lb]));
    let mut b = Buf::default();
    let mut run = tx.sorted_run(IMPORT_MAP, true)?;
    for ((k, len), local) in map {
        b.start(part);
        b.key.extend_from_slice(&k[..len]);
        run.push(&b.key, &local.to_be_bytes())?;
    }
    run.finish()
}

/// The history events of a load: one `import` event per record stored, in the order `import`
/// records them, as `history::record` would write it (`after: {id}`).
struct Events<'p> {
    part: &'p Partition,
    plan: &'p Plan,
    ids: Ids,
    agent_json: String,
    at: String,
}

impl Events<'_> {
    /// Event `k`'s family and record id.
    fn what(&self, k: usize) -> (&'static str, u64) {
        match self.plan.written[k] {
            Written::Entity(i) => ("entity", self.ids.entity(i)),
            Written::Fact(i) => ("fact", self.ids.fact(i)),
        }
    }

    /// Appends event `k`'s target: an entity's name, or a fact's `from \0 type \0 to`.
    fn target(&self, k: usize, out: &mut Vec<u8>) {
        let entities = &self.plan.entities;
        match self.plan.written[k] {
            Written::Entity(i) => out.extend_from_slice(entities[i].name.as_bytes()),
            Written::Fact(i) => {
                let f = &self.plan.facts[i];
                out.extend_from_slice(entities[f.from].name.as_bytes());
                out.push(0);
                out.extend_from_slice(self.plan.spellings[f.spelling as usize].as_bytes());
                out.push(0);
                out.extend_from_slice(entities[f.to].name.as_bytes());
            }
        }
    }

    /// The `h.target` key of event `k`: `part | family \0 target \0 | seq`, the target as
    /// `history::target_prefix` keeps it (`scratch` holds it on the way).
    fn target_key(&self, k: usize, b: &mut Buf, scratch: &mut Vec<u8>) {
        scratch.clear();
        self.target(k, scratch);
        let target = std::str::from_utf8(scratch).expect("names and types are text");
        b.key.clear();
        b.key.extend_from_slice(&target_prefix(self.part, self.what(k).0, target));
        b.key.extend_from_slice(&self.ids.event(k).to_be_bytes());
    }

    /// The `h.event` entry of event k:
    /// `{"seq":…,"family":…,"target":…,"op":"import","agent":…,"at":…,"after":{"id":"…"}}`,
    /// `Event`'s fields in its order, as `serde_json` writes them.
    fn event(&self, k: usize, b: &mut Buf, scratch: &mut Vec<u8>) {
        let (family, id) = self.what(k);
        let seq = self.ids.event(k);
        b.start(self.part);
        b.key.extend_from_slice(&seq.to_be_bytes());
        scratch.clear();
        self.target(k, scratch);
        let target = std::str::from_utf8(scratch).expect("names and types are text");
        let event = &mut b.value;
        event.extend_from_slice(b"{\"seq\":");
        push_u64(event, seq);
        event.extend_from_slice(b",\"family\":\"");
        event.extend_from_slice(family.as_bytes());
        event.extend_from_slice(b"\",\"target\":");
        serde_json::to_writer(&mut *event, target).expect("strings serialise");
        event.extend_from_slice(b",\"op\":\"import\",\"agent\":");
        event.extend_from_slice(self.agent_json.as_bytes());
        event.extend_from_slice(b",\"at\":");
        event.extend_from_slice(self.at.as_bytes());
        event.extend_from_slice(b",\"after\":{\"id\":\"");
        push_u64(event, id);
        event.extend_from_slice(b"\"}}");
    }
}

/// `h.event`, `h.target`, `h.agent` and `h.name` for every event of the load.
fn event_runs(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    plan: &Plan,
    ids: Ids,
    (agent, now): (&str, i64),
    (ordered, orders): (bool, &EventOrders),
) -> Result<()> {
    let ev = Events {
        part,
        plan,
        ids,
        agent_json: serde_json::to_string(agent).expect("strings serialise"),
        at: now.to_string(),
    };
    let n = plan.written.len();
    let (mut b, mut scratch) = (Buf::default(), Vec::new());
    let mut run = tx.sorted_run(EVENT, true)?;
    for k in 0..n {
        ev.event(k, &mut b, &mut scratch);
        run.push(&b.key, &b.value)?;
    }
    run.finish()?;
    let by_agent = agent_prefix(part, agent);
    let mut run = tx.sorted_run(AGENT, true)?;
    for k in 0..n {
        b.key.clear();
        b.key.extend_from_slice(&by_agent);
        b.key.extend_from_slice(&ids.event(k).to_be_bytes());
        run.push(&b.key, &[])?;
    }
    run.finish()?;
    let mut run = tx.sorted_run(TARGET, ordered)?;
    for &k in &orders.targets {
        ev.target_key(k, &mut b, &mut scratch);
        run.push(&b.key, &[])?;
    }
    run.finish()?;
    name_run(tx, &orders.names)
}

/// `h.name` for every event of the load: an entity's event under its name, a fact's under both
/// ends (`history::names`). Sorted as (the entity's place among the name prefixes, event seq)
/// pairs, each key spelled only as it goes into the run: a key built and sorted per event (700k
/// at 100k entities and 300k facts) was most of what `h.name` added to a load.
struct NameOrder {
    /// Each entity's `h.name` prefix.
    prefixes: Vec<Vec<u8>>,
    /// Entity indexes in prefix order.
    order: Vec<usize>,
    /// (place in `order`, event seq), sorted and distinct.
    pairs: Vec<(usize, u64)>,
    /// Whether one prefix begins another (the run must then sort what it is given).
    nested: bool,
}

impl NameOrder {
    fn of(part: &Partition, plan: &Plan, ids: Ids) -> NameOrder {
        let prefixes: Vec<Vec<u8>> = plan.entities.iter().map(|e| name_prefix(part, &e.folded)).collect();
        let mut order: Vec<usize> = (0..prefixes.len()).collect();
        order.sort_unstable_by(|&a, &b| prefixes[a].cmp(&prefixes[b]));
        let mut place = vec![0usize; prefixes.len()];
        for (p, &i) in order.iter().enumerate() {
            place[i] = p;
        }
        let mut pairs: Vec<(usize, u64)> = Vec::with_capacity(plan.written.len() * 2);
        for (k, written) in plan.written.iter().enumerate() {
            let seq = ids.event(k);
            match *written {
                Written::Entity(i) => pairs.push((place[i], seq)),
                Written::Fact(i) => {
                    pairs.push((place[plan.facts[i].from], seq));
                    pairs.push((place[plan.facts[i].to], seq));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        // The pairs order the keys as their bytes do when no prefix begins another (each ends in
        // a NUL no name holds); a long name's digest could in principle hold one, so that is
        // checked.
        let nested = order.windows(2).any(|w| prefixes[w[1]].starts_with(&prefixes[w[0]]));
        NameOrder { prefixes, order, pairs, nested }
    }
}

/// `h.name`, in `names`' order.
fn name_run(tx: &mut WriteTxn<'_>, names: &NameOrder) -> Result<()> {
    let mut run = tx.sorted_run(NAME, !names.nested)?;
    let mut key = Vec::new();
    for &(p, seq) in &names.pairs {
        key.clear();
        key.extend_from_slice(&names.prefixes[names.order[p]]);
        key.extend_from_slice(&seq.to_be_bytes());
        run.push(&key, &[])?;
    }
    run.finish()
}

/// The orders the history runs are written in, worked out from the plan alone: on a thread of
/// their own while the writer packs the record trees (sorting them was a tenth of a load).
struct EventOrders {
    /// Events in `h.target` key order.
    targets: Vec<usize>,
    names: NameOrder,
}

impl EventOrders {
    fn of(part: &Partition, plan: &Plan, ids: Ids) -> EventOrders {
        EventOrders { targets: target_order(plan), names: NameOrder::of(part, plan, ids) }
    }
}

/// Events in `h.target` key order.
fn target_order(plan: &Plan) -> Vec<usize> {
    // Key order without comparing the keys themselves (scattered in memory, so each comparison
    // would miss the cache twice): entity events by name, then fact events by (from, type, to),
    // each name and type by its rank in byte order, ties by sequence. Where a name holds a NUL
    // byte (`ordered` false) the run sorts the encoded keys instead.
    let rank = |names: Vec<&str>| -> Vec<u32> {
        let mut order: Vec<u32> = (0..index_u32(names.len())).collect();
        order.sort_unstable_by_key(|&i| names[i as usize]);
        let mut rank = vec![0u32; names.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i as usize] = index_u32(r);
        }
        rank
    };
    let name_rank = rank(plan.entities.iter().map(|e| e.name.as_str()).collect());
    let type_rank = rank(plan.spellings.iter().map(String::as_str).collect());
    let order_key = |k: usize| -> (u8, u32, u32, u32, usize) {
        match plan.written[k] {
            Written::Entity(i) => (0, name_rank[i], 0, 0, k),
            Written::Fact(i) => {
                let f = &plan.facts[i];
                (1, name_rank[f.from], type_rank[f.spelling as usize], name_rank[f.to], k)
            }
        }
    };
    let mut order: Vec<(u8, u32, u32, u32, usize)> = (0..plan.written.len()).map(order_key).collect();
    order.sort_unstable();
    order.into_iter().map(|o| o.4).collect()
}

/// The record trees of a load (entities, names, attributes, adjacency, id map, relations, tally).
fn records(tx: &mut WriteTxn<'_>, part: &Partition, plan: &Plan, ids: Ids, names: (u64, bool)) -> Result<()> {
    let ordered = names.1;
    entity_runs(tx, part, plan, ids, names)?;
    attribute_runs(tx, part, plan, ids)?;
    adjacency_run(tx, part, plan, ids, ordered)?;
    map_run(tx, part, plan, ids)?;
    relation_run(tx, part, plan, ids)?;
    counts(plan, part).flush(tx)
}

/// Stores `plan` in `part` (which `is_empty`) for `agent` at `now`; returns what was done. Each
/// tree's entries are built one at a time, in key order, into its run (`WriteTxn::sorted_run`:
/// into an empty tree, pages are packed as the entries come), so no run is held in memory.
pub(crate) fn store(tx: &mut WriteTxn<'_>, part: &Partition, plan: Plan, agent: &str, now: i64) -> Result<Imported> {
    let base = read_next_id(tx, part)?;
    let ids = Ids { base, entities: plan.entities.len() as u64, facts: plan.facts.len() as u64 };
    write_next_id(tx, part, ids.event(plan.written.len()))?;
    let generation = names_gen_in(tx, part)?;
    let ordered = !out_of_order(part, &plan);
    std::thread::scope(|s| -> Result<()> {
        let orders = s.spawn(|| EventOrders::of(part, &plan, ids));
        records(tx, part, &plan, ids, (generation, ordered))?;
        let orders = orders.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        event_runs(tx, part, &plan, ids, (agent, now), (ordered, &orders))
    })?;
    let Plan { rest, mut out, .. } = plan;
    // The records the fast path left: through `import`, a page at a time.
    for chunk in rest.chunks(MAX_LIMIT) {
        let records: Vec<Value> = chunk.iter().map(|(_, v)| v.clone()).collect();
        // A load is an operator's restore (admin route or the store's owner): every agent's notes.
        let done = import(tx, part, &records, (agent, true), now)?;
        let line = |i: usize| chunk[i].0;
        out.imported.add(&done.imported);
        out.unchanged.add(&done.unchanged);
        out.skipped.extend(done.skipped.into_iter().map(|s| Skipped { index: line(s.index), reason: s.reason }));
        for mut n in done.not_reproduced {
            if let Some(i) = n.get("index").and_then(Value::as_u64).and_then(|i| usize::try_from(i).ok()) {
                n["index"] = Value::from(line(i));
            }
            out.not_reproduced.push(n);
        }
        out.written.extend(done.written);
        out.attribute_writes.extend(done.attribute_writes);
    }
    out.skipped.sort_by_key(|s| s.index);
    Ok(out)
}
