//! Bulk load: a whole export (JSON lines, one record a line) into an empty partition, in one
//! transaction. It is `import` for the operator who fills a scope from a file, as a graph
//! database's `COPY FROM` is: entity and fact records are checked, deduplicated and numbered in
//! memory, every tree's keys are built and sorted once, and each tree takes its run in one merge
//! (`WriteTxn::put_sorted`), so the cost is one pass over the data instead of one B+tree walk per
//! key. The result is what `import` of the same records would store: the same records, indexes,
//! id map, name generations and one `import` history event per record stored. Records the fast
//! path does not take (documents, facts citing documents, anything malformed) go through `import`
//! itself afterwards in the same transaction, so they are stored, or skipped with its reasons.

use super::graph::{Entity, MAX_NAME_LEN, Relation, Source};
use super::import::{ENTITY, FACT, IMPORT_MAP, Imported, Skipped, check_header, import, map_key};
use super::part::Partition;
use super::records::encode;
use super::trees::{
    ADJ, DOC, ENT, ENT_NAME, IN, NAMES_GEN, NAMES_LOG, OUT, REL, adj_key, ent_key, name_key, names_gen_in,
    read_next_id, rel_key, write_next_id,
};
use crate::error::Result;
use crate::history::{AGENT, EVENT, TARGET, agent_prefix, target_prefix};
use crate::knowledge::export::MAX_LIMIT;
use crate::text::fold;
use crate::time::parse_iso_ms;
use crate::write::WriteTxn;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;

/// One line as the fast path reads it: every field optional, strings borrowed where they can be.
/// A line that does not fit this shape goes to `import`, which names the field at fault.
#[derive(Deserialize)]
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
    #[serde(borrow)]
    agent: Option<Cow<'a, str>>,
    #[serde(borrow)]
    provenance: Option<ProvenanceLine<'a>>,
}

#[derive(Deserialize)]
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
    recorded_at: i64,
    ended_at: Option<i64>,
    source: Source,
    /// Index into `Plan::agents`.
    agent: u32,
}

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
    /// Source ids → local entity / fact index (the `k.import_map` entries).
    entity_map: HashMap<u64, usize>,
    fact_map: HashMap<u64, usize>,
    /// Folded name → local entity index.
    names: HashMap<String, usize>,
    /// `(from, to, folded type, version)` → local fact index: one fact per live triple, and per
    /// ended version (`(recorded_at, ended_at)`), as `import` matches stored ones.
    triples: HashMap<(usize, usize, u32, Option<(i64, i64)>), usize>,
    /// Relation types as sent (trimmed) → their spelling and folded indexes: a graph has few
    /// types and many facts, so each is folded once.
    types: HashMap<String, (u32, u32)>,
    spellings: Vec<String>,
    folded_types: Vec<String>,
    folded_index: HashMap<String, usize>,
    agents: Vec<String>,
    agent_index: HashMap<String, u32>,
    written: Vec<Written>,
    /// Lines for `import`, by line index.
    rest: Vec<(usize, Value)>,
    pub(crate) out: Imported,
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

/// A name the fast path stores as given: 1..=1 KiB after trimming.
fn fits(name: &str) -> bool {
    let len = name.trim().len();
    len > 0 && len <= MAX_NAME_LEN
}

/// One line of the body: its index, bytes, and its fast-path reading (`None`: not that shape).
type Parsed<'a> = (usize, &'a [u8], Option<Line<'a>>);

/// Parses the lines of `body` in order, blank ones left out; a large body in two halves at once
/// (JSON parsing is most of reading a load, and each line parses alone).
fn parse_lines(body: &[u8]) -> Vec<Parsed<'_>> {
    fn parse(first: usize, part: &[u8]) -> Vec<Parsed<'_>> {
        part.split(|&b| b == b'\n')
            .enumerate()
            .filter(|(_, raw)| !raw.iter().all(u8::is_ascii_whitespace))
            .map(|(i, raw)| (first + i, raw, serde_json::from_slice::<Line<'_>>(raw).ok()))
            .collect()
    }
    const PARALLEL_FROM: usize = 1 << 20;
    let cut = (body.len() >= PARALLEL_FROM)
        .then(|| body[body.len() / 2..].iter().position(|&b| b == b'\n').map(|at| body.len() / 2 + at))
        .flatten();
    let Some(cut) = cut else { return parse(0, body) };
    let (head, tail) = (&body[..cut], &body[cut + 1..]);
    let tail_first = head.iter().filter(|&&b| b == b'\n').count() + 1;
    std::thread::scope(|s| {
        let later = s.spawn(|| parse(tail_first, tail));
        let mut lines = parse(0, head);
        lines.extend(later.join().expect("parsing lines does not panic"));
        lines
    })
}

impl Plan {
    /// Reads `body` (JSON lines; blank lines are ignored but keep their index) for `agent`, the
    /// provenance agent of facts that name none, at `now`, the time of entities whose record
    /// gives none.
    pub(crate) fn read(body: &[u8], agent: &str, now: i64) -> Plan {
        let mut plan = Plan::default();
        let mut facts: Vec<(usize, &[u8], Line<'_>)> = Vec::new();
        for (index, raw, line) in parse_lines(body) {
            let Some(line) = line else {
                plan.hand_over(index, raw);
                continue;
            };
            match line.kind.as_deref() {
                Some("entity") => {
                    if plan.entity(&line, now).is_err() {
                        plan.hand_over(index, raw);
                    }
                }
                Some("fact") => facts.push((index, raw, line)),
                Some("header") => match serde_json::from_slice::<Map<String, Value>>(raw) {
                    Ok(r) => {
                        if let Err(reason) = check_header(&r) {
                            plan.out.skipped.push(Skipped { index, reason });
                        }
                    }
                    Err(_) => plan.hand_over(index, raw),
                },
                _ => plan.hand_over(index, raw),
            }
        }
        // Entities first, then facts, whatever the order of the lines (as `import` does).
        for (index, raw, line) in facts {
            if plan.fact(&line, agent).is_err() {
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

    /// The entity a record names, by source id, then by folded name, else created with no types
    /// at `recorded_at` (the id is mapped either way); and whether it was created. `None` when it
    /// names none.
    fn resolve(&mut self, source: Option<u64>, name: Option<&str>, recorded_at: i64) -> Option<(usize, bool)> {
        if let Some(&at) = source.and_then(|s| self.entity_map.get(&s)) {
            return Some((at, false));
        }
        let name = name.map(str::trim).filter(|n| !n.is_empty())?;
        let folded = fold(name);
        let (at, created) = if let Some(&at) = self.names.get(&folded) {
            (at, false)
        } else {
            self.entities.push(NewEntity {
                name: name.to_owned(),
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
        Some((at, created))
    }

    /// An entity record, as `import` stores it: found or created, then its types added (once
    /// each, up to folding), its attributes set, and the earliest `recorded_at` kept. `Err` leaves
    /// the record to `import` (checked before anything is decided for it).
    fn entity(&mut self, r: &Line<'_>, now: i64) -> std::result::Result<(), ()> {
        let name = r.name.as_deref().filter(|n| fits(n)).ok_or(())?;
        let source = source_id(r.id.as_ref())?;
        let recorded_at = time(r.recorded_at.as_ref())?;
        let types = r.types.as_deref().unwrap_or_default();
        if !types.iter().all(|t| fits(t)) {
            return Err(());
        }
        // An id mapped to another name: `import` resolves it its own way.
        if let Some(&at) = source.and_then(|s| self.entity_map.get(&s))
            && self.entities[at].folded != fold(name.trim())
        {
            return Err(());
        }
        let (at, created) = self.resolve(source, Some(name), recorded_at.unwrap_or(now)).ok_or(())?;
        let e = &mut self.entities[at];
        let mut changed = created;
        for t in types {
            let ft = fold(t);
            if !e.types.iter().any(|have| have.eq_ignore_ascii_case(t) || fold(have) == ft) {
                e.types.push(t.trim().to_owned());
                changed = true;
            }
        }
        if let Some(attributes) = &r.attributes {
            for (k, v) in attributes {
                if e.attributes.get(k) != Some(v) {
                    e.attributes.insert(k.clone(), v.clone());
                    changed = true;
                }
            }
        }
        if let Some(t) = recorded_at
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
    fn fact(&mut self, r: &Line<'_>, agent: &str) -> std::result::Result<(), ()> {
        let source = source_id(r.id.as_ref())?.ok_or(())?;
        if self.fact_map.contains_key(&source) {
            self.out.unchanged.facts += 1;
            return Ok(());
        }
        let rel_type = r.rel_type.as_deref().filter(|t| fits(t)).ok_or(())?;
        let recorded_at = time(r.recorded_at.as_ref())?.ok_or(())?;
        let ended_at = time(r.ended_at.as_ref())?;
        let (label, prov_agent) = match &r.provenance {
            None => (None, None),
            Some(p) if matches!(p.kind.as_deref(), None | Some("asserted")) => (p.label.clone(), p.agent.as_deref()),
            Some(_) => return Err(()),
        };
        // Both ends must be resolvable before either is created.
        let ends = [(&r.from, &r.from_name), (&r.to, &r.to_name)];
        let mut sources = [None, None];
        for (i, (id, name)) in ends.iter().enumerate() {
            sources[i] = source_id(id.as_ref()).ok().flatten();
            let known = sources[i].is_some_and(|s| self.entity_map.contains_key(&s));
            let named = name.as_deref().is_some_and(fits);
            if !known && !named {
                return Err(());
            }
        }
        let mut at = [0usize; 2];
        for (i, (_, name)) in ends.iter().enumerate() {
            let (e, created) = self.resolve(sources[i], name.as_deref(), recorded_at).ok_or(())?;
            if created {
                // Recorded but not counted, as `import` does for an end it creates.
                self.written.push(Written::Entity(e));
            }
            at[i] = e;
        }
        let (spelling, folded_type) = self.rel_type(rel_type.trim());
        let version = ended_at.map(|end| (recorded_at, end));
        let triple = (at[0], at[1], folded_type, version);
        if let Some(&have) = self.triples.get(&triple) {
            self.fact_map.insert(source, have);
            self.out.unchanged.facts += 1;
            return Ok(());
        }
        let agent = self.agent(prov_agent.or(r.agent.as_deref()).unwrap_or(agent));
        self.facts.push(NewFact {
            from: at[0],
            to: at[1],
            spelling,
            folded_type,
            attributes: r.attributes.clone().unwrap_or_default(),
            valid_from: r.valid_from.clone(),
            valid_to: r.valid_to.clone(),
            recorded_at,
            ended_at,
            source: Source::Asserted { label },
            agent,
        });
        let local = self.facts.len() - 1;
        self.triples.insert(triple, local);
        self.fact_map.insert(source, local);
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

/// Hands `run` to `tree` in one merge. Runs are built in key order (ids ascend with the index,
/// other keys are sorted as tuples before they are encoded), so the sort here only checks it in
/// one pass, except where a name holding a NUL byte orders differently once encoded.
fn put_run(tx: &mut WriteTxn<'_>, tree: &str, mut run: Vec<(Vec<u8>, Vec<u8>)>) -> Result<()> {
    run.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    tx.put_sorted(tree, run)
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

/// Stores `plan` in `part` (which `is_empty`) for `agent` at `now`; returns what was done.
pub(crate) fn store(tx: &mut WriteTxn<'_>, part: &Partition, plan: Plan, agent: &str, now: i64) -> Result<Imported> {
    let Plan { entities, facts, entity_map, fact_map, written, rest, spellings, folded_types, agents, mut out, .. } =
        plan;
    let base = read_next_id(tx)?;
    let ne = entities.len() as u64;
    let nf = facts.len() as u64;
    let entity_id = |i: usize| base + i as u64;
    let fact_id = |i: usize| base + ne + i as u64;
    let first_event = base + ne + nf;
    write_next_id(tx, first_event + written.len() as u64)?;

    let generation = names_gen_in(tx, part)?;
    let ent = entities
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let id = entity_id(i);
            let record = Entity {
                id,
                name: e.name.clone(),
                types: e.types.clone(),
                attributes: e.attributes.clone(),
                recorded_at: e.recorded_at,
            };
            (ent_key(part, id), encode(&record))
        })
        .collect();
    put_run(tx, ENT, ent)?;
    let mut by_name: Vec<(&str, u64)> = entities.iter().enumerate().map(|(i, e)| (e.folded.as_str(), entity_id(i))).collect();
    by_name.sort_unstable();
    put_run(tx, ENT_NAME, by_name.into_iter().map(|(folded, id)| (name_key(part, folded, id), Vec::new())).collect())?;
    if !entities.is_empty() {
        // One name generation per entity, as creating them one by one would leave.
        tx.put(NAMES_GEN, part.prefix(), &(generation + ne).to_be_bytes())?;
        let log = (0..entities.len())
            .map(|i| (part.key(&[&(generation + 1 + i as u64).to_be_bytes()]), entity_id(i).to_be_bytes().to_vec()))
            .collect();
        put_run(tx, NAMES_LOG, log)?;
    }

    let rel = facts
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let id = fact_id(i);
            let record = Relation {
                id,
                from: entity_id(f.from),
                to: entity_id(f.to),
                rel_type: spellings[f.spelling as usize].clone(),
                attributes: f.attributes.clone(),
                valid_from: f.valid_from.clone(),
                valid_to: f.valid_to.clone(),
                recorded_at: f.recorded_at,
                ended_at: f.ended_at,
                source: f.source.clone(),
                agent: agents[f.agent as usize].clone(),
            };
            (rel_key(part, id), encode(&record))
        })
        .collect();
    put_run(tx, REL, rel)?;
    // Adjacency sorts by (entity, direction, folded type, relation id).
    let mut adj: Vec<(u64, u8, &str, u64)> = Vec::with_capacity(facts.len() * 2);
    for (i, f) in facts.iter().enumerate() {
        let ty = folded_types[f.folded_type as usize].as_str();
        adj.push((entity_id(f.from), OUT, ty, fact_id(i)));
        adj.push((entity_id(f.to), IN, ty, fact_id(i)));
    }
    adj.sort_unstable();
    put_run(tx, ADJ, adj.into_iter().map(|(e, dir, ty, id)| (adj_key(part, e, dir, ty, id), Vec::new())).collect())?;

    let mut map: Vec<(u8, u64, u64)> = Vec::with_capacity(entity_map.len() + fact_map.len());
    map.extend(entity_map.iter().map(|(&s, &at)| (ENTITY, s, entity_id(at))));
    map.extend(fact_map.iter().map(|(&s, &at)| (FACT, s, fact_id(at))));
    map.sort_unstable();
    put_run(tx, IMPORT_MAP, map.into_iter().map(|(kind, s, local)| (map_key(part, kind, s), local.to_be_bytes().to_vec())).collect())?;

    // One `import` event per record stored, in the order `import` would record them.
    let quoted = |s: &str| serde_json::to_string(s).expect("strings serialise");
    let agent_json = quoted(agent);
    let targets: Vec<(&'static str, String)> = written
        .iter()
        .map(|w| match *w {
            Written::Entity(i) => ("entity", entities[i].name.clone()),
            Written::Fact(i) => {
                let f = &facts[i];
                let ty = &spellings[f.spelling as usize];
                ("fact", format!("{}\0{ty}\0{}", entities[f.from].name, entities[f.to].name))
            }
        })
        .collect();
    let events = written
        .iter()
        .zip(&targets)
        .enumerate()
        .map(|(k, (w, (family, target)))| {
            let seq = first_event + k as u64;
            let id = match *w {
                Written::Entity(i) => entity_id(i),
                Written::Fact(i) => fact_id(i),
            };
            // `{"seq":…,"family":…,"target":…,"op":"import","agent":…,"at":…,"after":{"id":"…"}}`,
            // the fields `history::record` writes, in its order.
            let mut event = Vec::with_capacity(112 + target.len() + agent_json.len());
            event.extend_from_slice(b"{\"seq\":");
            push_u64(&mut event, seq);
            event.extend_from_slice(b",\"family\":\"");
            event.extend_from_slice(family.as_bytes());
            event.extend_from_slice(b"\",\"target\":");
            serde_json::to_writer(&mut event, target).expect("strings serialise");
            event.extend_from_slice(b",\"op\":\"import\",\"agent\":");
            event.extend_from_slice(agent_json.as_bytes());
            event.extend_from_slice(b",\"at\":");
            event.extend_from_slice(now.to_string().as_bytes());
            event.extend_from_slice(b",\"after\":{\"id\":\"");
            push_u64(&mut event, id);
            event.extend_from_slice(b"\"}}");
            (part.key(&[&seq.to_be_bytes()]), event)
        })
        .collect();
    put_run(tx, EVENT, events)?;
    let mut by_target: Vec<(&str, &str, u64)> =
        targets.iter().enumerate().map(|(k, (family, target))| (*family, target.as_str(), first_event + k as u64)).collect();
    by_target.sort_unstable();
    let by_target = by_target
        .into_iter()
        .map(|(family, target, seq)| ([target_prefix(part, family, target), seq.to_be_bytes().to_vec()].concat(), Vec::new()))
        .collect();
    put_run(tx, TARGET, by_target)?;
    let by_agent = agent_prefix(part, agent);
    let agents_run = (0..written.len() as u64)
        .map(|k| ([by_agent.as_slice(), &(first_event + k).to_be_bytes()].concat(), Vec::new()))
        .collect();
    put_run(tx, AGENT, agents_run)?;
    // The records the fast path left: through `import`, a page at a time.
    for chunk in rest.chunks(MAX_LIMIT) {
        let records: Vec<Value> = chunk.iter().map(|(_, v)| v.clone()).collect();
        let done = import(tx, part, &records, agent, now)?;
        let line = |i: usize| chunk[i].0;
        out.imported.entities += done.imported.entities;
        out.imported.facts += done.imported.facts;
        out.imported.documents += done.imported.documents;
        out.unchanged.entities += done.unchanged.entities;
        out.unchanged.facts += done.unchanged.facts;
        out.unchanged.documents += done.unchanged.documents;
        out.skipped.extend(done.skipped.into_iter().map(|s| Skipped { index: line(s.index), reason: s.reason }));
        for mut n in done.not_reproduced {
            if let Some(i) = n.get("index").and_then(Value::as_u64).and_then(|i| usize::try_from(i).ok()) {
                n["index"] = Value::from(line(i));
            }
            out.not_reproduced.push(n);
        }
        out.written.extend(done.written);
    }
    out.skipped.sort_by_key(|s| s.index);
    Ok(out)
}
