//! The write half of a bulk load: each tree's entries built in key order from the plan, one
//! sorted run a tree (`WriteTxn::sorted_run`). The writer first packs the trees written in plan
//! order while three helper threads sort the orders of the others (name index, adjacency, id map;
//! the history runs' targets; their names), so the writer thread only ever packs pages. Into a
//! store with no history yet, `h.agent`, `h.event` and `h.target` are packed on a helper of their
//! own meanwhile (`WriteTxn::with_side`).

use crate::error::Result;
use crate::history::{AGENT, EVENT, NAME, TARGET, TREES as HISTORY, agent_prefix, name_prefix, push_target_prefix};
use crate::key_text;
use crate::knowledge::ImportPairs;
use crate::knowledge::attr_index::Bulk;
use crate::knowledge::export::MAX_LIMIT;
use crate::knowledge::graph::Entity;
use crate::knowledge::ids::{read_next_id, write_next_id};
use crate::knowledge::import::{ENTITY, FACT, IMPORT_MAP, Imported, Skipped, import_among};
use crate::knowledge::part::Partition;
use crate::knowledge::source_index::asserted_key;
use crate::knowledge::tally::Tally;
use crate::knowledge::trees::{
    ADJ, ENT, ENT_NAME, IN, NAMES_GEN, NAMES_LOG, OUT, REL, SOURCES, keyed_name, keyed_type, names_gen_in,
};
use crate::side::SidePages;
use crate::text::FastMap;
use crate::write::{Run, Runs, WriteTxn};
use serde_json::Value;

use super::relation_record::RelationRecords;
use super::{Plan, Src, Written, index_u32, joined};

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
    let name = longest(&mut plan.entities.iter().map(|e| e.name.as_str()).chain(plan.known.folded.iter()));
    let ty = longest(&mut plan.spellings.iter().chain(&plan.folded_types).map(String::as_str));
    // The longest key a load writes is a fact's history target: `fact \0 from \0 type \0 to \0 | seq`.
    plan.entities.iter().any(|e| nul(&e.name))
        || plan.known.folded.iter().any(nul)
        || plan.spellings.iter().any(|t| nul(t))
        || plan.folded_types.iter().any(|t| nul(t))
        || !key_text::fits(2 * name + ty, part.prefix().len() + 4 + 4 + 8)
}

/// `k.ent` and `k.names_log` (one name generation per entity after `generation`).
fn entity_runs(tx: &mut WriteTxn<'_>, part: &Partition, plan: &Plan, ids: Ids, generation: u64) -> Result<()> {
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

/// `k.ent_name`, from the entities in folded-name order.
fn name_index_run(tx: &mut WriteTxn<'_>, part: &Partition, by_name: &[(&str, u64)], ordered: bool) -> Result<()> {
    let mut b = Buf::default();
    let mut run = tx.sorted_run(ENT_NAME, ordered)?;
    for &(folded, id) in by_name {
        b.start(part);
        b.key.extend_from_slice(&keyed_name(part, folded));
        b.key.push(0);
        b.key.extend_from_slice(&id.to_be_bytes());
        run.push(&b.key, &[])?;
    }
    run.finish()
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
    tally.entities(part, crate::knowledge::tally::delta(plan.entities.len()));
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
    let records = RelationRecords::of(plan);
    let mut b = Buf::default();
    let mut run = tx.sorted_run(REL, true)?;
    for (i, f) in plan.facts.iter().enumerate() {
        b.start(part);
        b.key.extend_from_slice(&ids.fact(i).to_be_bytes());
        records.write(f, (ids.fact(i), ids.entity(f.from), ids.entity(f.to)), &mut b.value);
        run.push(&b.key, &b.value)?;
    }
    run.finish()
}

/// `k.source`: the facts asserted under a label (`source_index.rs`), sorted by the run (a label
/// is rarely the only one of a load; other partitions may hold entries already).
fn source_run(tx: &mut WriteTxn<'_>, part: &Partition, plan: &Plan, ids: Ids) -> Result<()> {
    let mut run = tx.sorted_run(SOURCES, false)?;
    for (i, f) in plan.facts.iter().enumerate() {
        if let Some(label) = &f.label {
            run.push(&asserted_key(part, label, ids.fact(i)), &[])?;
        }
    }
    run.finish()
}

/// One `k.adj` entry: (entity, direction, folded type's rank, relation id). The type as a rank
/// among the folded types in byte order, so the entries sort as integers: comparing the strings
/// themselves (a pointer each, then their bytes) measured most of sorting 600k of them.
type Adjacency = (u64, u8, u32, u64);

/// `k.adj`'s entries in order (both ends of every fact), and the folded types by rank.
fn adjacency_order(plan: &Plan, ids: Ids) -> (Vec<Adjacency>, Vec<&str>) {
    let (rank, types) = ranked(plan.folded_types.iter().map(String::as_str));
    let mut adj: Vec<Adjacency> = Vec::with_capacity(plan.facts.len() * 2);
    for (i, f) in plan.facts.iter().enumerate() {
        let ty = rank[f.folded_type as usize];
        adj.push((ids.entity(f.from), OUT, ty, ids.fact(i)));
        adj.push((ids.entity(f.to), IN, ty, ids.fact(i)));
    }
    adj.sort_unstable();
    (adj, types)
}

/// `k.adj`, from its entries in order (`types`: the folded types by rank).
fn adjacency_run(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (adj, types): (&[Adjacency], &[&str]),
    ordered: bool,
) -> Result<()> {
    let keyed: Vec<_> = types.iter().map(|t| keyed_type(part, t)).collect();
    let mut b = Buf::default();
    let mut run = tx.sorted_run(ADJ, ordered)?;
    for &(e, dir, ty, id) in adj {
        b.start(part);
        b.key.extend_from_slice(&e.to_be_bytes());
        b.key.push(dir);
        b.key.extend_from_slice(&keyed[ty as usize]);
        b.key.push(0);
        b.key.extend_from_slice(&id.to_be_bytes());
        run.push(&b.key, &[])?;
    }
    run.finish()
}

/// The longest `k.import_map` key after the partition: kind byte, origin, source id.
const MAP_KEY: usize = 1 + crate::knowledge::origin::ORIGIN_LEN + 8;

/// One `k.import_map` entry: the key after the partition (and its length), and the local id.
type MapEntry = (([u8; MAP_KEY], usize), u64);

/// `k.import_map`'s entries in order: every source id read, to its local id.
fn map_order(plan: &Plan, ids: Ids) -> Vec<MapEntry> {
    // Keys `kind | origin | source id`, sorted as bytes: an entry naming no origin is shorter.
    let key = |kind: u8, (o, s): Src| {
        let mut k = [0u8; MAP_KEY];
        k[0] = kind;
        let o = o.key_bytes();
        k[1..=o.len()].copy_from_slice(o);
        k[1 + o.len()..9 + o.len()].copy_from_slice(&s.to_be_bytes());
        (k, 9 + o.len())
    };
    let mut map: Vec<MapEntry> = Vec::with_capacity(plan.known.map.len() + plan.fact_map.len());
    map.extend(plan.known.map.iter().map(|(&s, &at)| (key(ENTITY, s), ids.entity(at))));
    map.extend(plan.fact_map.iter().map(|(&s, &at)| (key(FACT, s), ids.fact(at))));
    let mut origins = plan.known.map.keys().chain(plan.fact_map.keys()).map(|&(o, _)| o);
    let first = origins.next();
    if origins.all(|o| Some(o) == first) {
        // One origin (an export's): the keys order as (kind, source id), compared as integers
        // (comparing the keys as slices measured most of working out this order).
        let at = 1 + first.map_or(0, |o| o.key_bytes().len());
        let source = |k: &[u8; MAP_KEY]| u64::from_be_bytes(k[at..at + 8].try_into().expect("8 bytes"));
        map.sort_unstable_by_key(|((k, _), _)| (k[0], source(k)));
    } else {
        map.sort_unstable_by(|((a, la), _), ((b, lb), _)| a[..*la].cmp(&b[..*lb]));
    }
    map
}

/// `k.import_map`, from its entries in order.
fn map_run(tx: &mut WriteTxn<'_>, part: &Partition, map: &[MapEntry]) -> Result<()> {
    let mut b = Buf::default();
    let mut run = tx.sorted_run(IMPORT_MAP, true)?;
    for ((k, len), local) in map {
        b.start(part);
        b.key.extend_from_slice(&k[..*len]);
        run.push(&b.key, &local.to_be_bytes())?;
    }
    run.finish()
}

/// The orders of the record trees that need sorting, worked out on a thread of their own while
/// the writer packs the trees that are written in plan order (sorting them on the writer thread
/// held up every page it had to write after them).
struct RecordOrders<'p> {
    /// (folded name, entity id), sorted.
    by_name: Vec<(&'p str, u64)>,
    adjacency: Vec<Adjacency>,
    /// The folded types by rank (what `adjacency` holds of them).
    types: Vec<&'p str>,
    map: Vec<MapEntry>,
}

impl<'p> RecordOrders<'p> {
    fn of(plan: &'p Plan, ids: Ids) -> RecordOrders<'p> {
        let mut by_name: Vec<(&str, u64)> =
            plan.known.folded.iter().enumerate().map(|(i, folded)| (folded, ids.entity(i))).collect();
        by_name.sort_unstable();
        let (adjacency, types) = adjacency_order(plan, ids);
        RecordOrders { by_name, adjacency, types, map: map_order(plan, ids) }
    }
}

/// The history events of a load: one `import` event per record stored, in the order `import`
/// records them, as `history::record` would write it (`after: {id}`).
struct Events<'p> {
    part: &'p Partition,
    plan: &'p Plan,
    ids: Ids,
    agent_json: String,
    at: String,
    targets: &'p Targets<'p>,
}

/// An event's target by ranks: an entity's name, or a fact's (from, type, to). Ranks order as
/// the names and types do, and the variants as their families ("entity" < "fact"), so targets
/// sort as their `h.target` keys do.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Entity(u32),
    Fact(u32, u32, u32),
}

/// What event targets are spelled from, laid out compactly: every entity's name in one buffer in
/// byte order, each fact's ends and type as ranks. Spelling a target from the plan itself read a
/// scattered entity record and its name's separate allocation per end (two cache misses each),
/// which measured a fifth of the writer's time in a load's history runs; and `h.target`, written
/// in target order, then reads the names front to back.
struct Targets<'p> {
    /// The names in byte order, one after another; rank `r`'s is `names[at[r]..at[r + 1]]`.
    names: String,
    at: Vec<usize>,
    /// Whether rank `r`'s name, as a JSON string, needs an escape: the rest are written as they
    /// are (escaping every target measured a tenth of the events' time).
    escaped: Vec<bool>,
    /// Each entity's rank.
    rank: Vec<u32>,
    /// The relation types in byte order, and whether each needs an escape in JSON.
    types: Vec<&'p str>,
    types_escaped: Vec<bool>,
    /// Each fact's (from, type, to) as ranks.
    facts: Vec<(u32, u32, u32)>,
}

/// Each item's rank in byte order, and the items in that order.
fn ranked<'a>(items: impl ExactSizeIterator<Item = &'a str>) -> (Vec<u32>, Vec<&'a str>) {
    let mut sorted: Vec<(&str, u32)> = items.enumerate().map(|(i, x)| (x, index_u32(i))).collect();
    sorted.sort_unstable();
    let mut rank = vec![0u32; sorted.len()];
    for (r, &(_, i)) in sorted.iter().enumerate() {
        rank[i as usize] = index_u32(r);
    }
    (rank, sorted.into_iter().map(|(x, _)| x).collect())
}

impl<'p> Targets<'p> {
    fn of(plan: &'p Plan) -> Targets<'p> {
        let (rank, by_rank) = ranked(plan.entities.iter().map(|e| e.name.as_str()));
        let (type_rank, types) = ranked(plan.spellings.iter().map(String::as_str));
        let mut names = String::with_capacity(by_rank.iter().map(|n| n.len()).sum());
        let mut at = Vec::with_capacity(by_rank.len() + 1);
        at.push(0);
        for name in &by_rank {
            names.push_str(name);
            at.push(names.len());
        }
        let escaped = by_rank.iter().map(|n| needs_escape(n)).collect();
        let types_escaped = types.iter().map(|t| needs_escape(t)).collect();
        let facts = plan.facts.iter().map(|f| (rank[f.from], type_rank[f.spelling as usize], rank[f.to])).collect();
        Targets { names, at, escaped, rank, types, types_escaped, facts }
    }

    /// Reads the first byte of each name `targets` spell, all before any is spelled: events
    /// come in sequence order, their targets' names at random among them, and a name read
    /// only as it is spelled waited on memory once per end (about half of writing the events,
    /// in a profile). Read together, the waits overlap.
    fn touch(&self, targets: impl Iterator<Item = Target>) {
        let first = |r: u32| self.names.as_bytes().get(self.at[r as usize]).copied().unwrap_or(0);
        let mut sum = 0u8;
        for t in targets {
            sum = sum.wrapping_add(match t {
                Target::Entity(r) => first(r),
                Target::Fact(from, _, to) => first(from).wrapping_add(first(to)),
            });
        }
        std::hint::black_box(sum);
    }

    fn name(&self, r: u32) -> &str {
        let r = r as usize;
        &self.names[self.at[r]..self.at[r + 1]]
    }

    fn of_written(&self, w: Written) -> Target {
        match w {
            Written::Entity(i) => Target::Entity(self.rank[i]),
            Written::Fact(i) => {
                let (from, ty, to) = self.facts[i];
                Target::Fact(from, ty, to)
            }
        }
    }

    /// Appends `t` as history spells it: an entity's name, or a fact's `from \0 type \0 to`.
    fn spell(&self, t: Target, out: &mut String) {
        match t {
            Target::Entity(r) => out.push_str(self.name(r)),
            Target::Fact(from, ty, to) => {
                out.push_str(self.name(from));
                out.push('\0');
                out.push_str(self.types[ty as usize]);
                out.push('\0');
                out.push_str(self.name(to));
            }
        }
    }

    /// Appends `t` spelled as a JSON string, as `serde_json` writes it (`scratch` holds the
    /// spelling on the way when it needs escapes).
    fn spell_json(&self, t: Target, out: &mut Vec<u8>, scratch: &mut String) {
        let plain = match t {
            Target::Entity(r) => !self.escaped[r as usize],
            Target::Fact(from, ty, to) => {
                !(self.escaped[from as usize] || self.types_escaped[ty as usize] || self.escaped[to as usize])
            }
        };
        if !plain {
            scratch.clear();
            self.spell(t, scratch);
            serde_json::to_writer(out, scratch.as_str()).expect("strings serialise");
            return;
        }
        out.push(b'"');
        match t {
            Target::Entity(r) => out.extend_from_slice(self.name(r).as_bytes()),
            Target::Fact(from, ty, to) => {
                // NUL, a control character, is the one escape a fact's spelling then holds.
                out.extend_from_slice(self.name(from).as_bytes());
                out.extend_from_slice(b"\\u0000");
                out.extend_from_slice(self.types[ty as usize].as_bytes());
                out.extend_from_slice(b"\\u0000");
                out.extend_from_slice(self.name(to).as_bytes());
            }
        }
        out.push(b'"');
    }
}

/// Whether `s`, written as a JSON string, holds an escape (a quote, a backslash or a control
/// character, as `serde_json` escapes them).
fn needs_escape(s: &str) -> bool {
    s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\')
}

impl Events<'_> {
    /// Event `k`'s family and record id.
    fn what(&self, k: usize) -> (&'static str, u64) {
        match self.plan.written[k] {
            Written::Entity(i) => ("entity", self.ids.entity(i)),
            Written::Fact(i) => ("fact", self.ids.fact(i)),
        }
    }

    /// The `h.target` key of event `k`, whose target is `t`: `part | family \0 target \0 | seq`,
    /// the target as `history::target_prefix` keeps it (`scratch` holds it on the way).
    fn target_key(&self, t: Target, k: usize, b: &mut Buf, scratch: &mut String) {
        scratch.clear();
        self.targets.spell(t, scratch);
        let target = scratch.as_str();
        let family = if matches!(t, Target::Entity(_)) { "entity" } else { "fact" };
        b.key.clear();
        push_target_prefix(&mut b.key, self.part, family, target);
        b.key.extend_from_slice(&self.ids.event(k).to_be_bytes());
    }

    /// The `h.event` entry of event k:
    /// `{"seq":…,"family":…,"target":…,"op":"import","agent":…,"at":…,"after":{"id":"…"}}`,
    /// `Event`'s fields in its order, as `serde_json` writes them.
    fn event(&self, k: usize, b: &mut Buf, scratch: &mut String) {
        let (family, id) = self.what(k);
        let seq = self.ids.event(k);
        b.start(self.part);
        b.key.extend_from_slice(&seq.to_be_bytes());
        let event = &mut b.value;
        event.extend_from_slice(b"{\"seq\":");
        push_u64(event, seq);
        event.extend_from_slice(b",\"family\":\"");
        event.extend_from_slice(family.as_bytes());
        event.extend_from_slice(b"\",\"target\":");
        self.targets.spell_json(self.targets.of_written(self.plan.written[k]), event, scratch);
        event.extend_from_slice(b",\"op\":\"import\",\"agent\":");
        event.extend_from_slice(self.agent_json.as_bytes());
        event.extend_from_slice(b",\"at\":");
        event.extend_from_slice(self.at.as_bytes());
        event.extend_from_slice(b",\"after\":{\"id\":\"");
        push_u64(event, id);
        event.extend_from_slice(b"\"}}");
    }
}

/// How many events' target names are read together before they are spelled (`Targets::touch`):
/// about as many misses as a core keeps waiting on at once.
const TOUCH_AHEAD: usize = 16;

/// `h.agent` for every event of the load (all `agent`'s).
fn agent_run(tx: &mut impl Runs, part: &Partition, agent: &str, ids: Ids, n: usize) -> Result<()> {
    let by_agent = agent_prefix(part, agent);
    let mut key = Vec::new();
    let mut run = tx.run(AGENT, true)?;
    for k in 0..n {
        key.clear();
        key.extend_from_slice(&by_agent);
        key.extend_from_slice(&ids.event(k).to_be_bytes());
        run.push(&key, &[])?;
    }
    run.finish()
}

/// `h.event` and `h.target` for every event of the load.
fn event_and_target_runs(
    tx: &mut impl Runs,
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
        targets: &orders.targets_of,
    };
    let (mut b, mut scratch) = (Buf::default(), String::new());
    let mut run = tx.run(EVENT, true)?;
    let n = plan.written.len();
    for block in (0..n).step_by(TOUCH_AHEAD) {
        let block = block..(block + TOUCH_AHEAD).min(n);
        ev.targets.touch(block.clone().map(|k| ev.targets.of_written(plan.written[k])));
        for k in block {
            ev.event(k, &mut b, &mut scratch);
            run.push(&b.key, &b.value)?;
        }
    }
    run.finish()?;
    let mut run = tx.run(TARGET, ordered)?;
    for &(t, k) in &orders.targets {
        ev.target_key(t, k, &mut b, &mut scratch);
        run.push(&b.key, &[])?;
    }
    run.finish()
}

/// `h.name` for every event of the load: an entity's event under its name, a fact's under both
/// ends (`history::names`). Sorted as (the entity's place among the name prefixes, event seq)
/// pairs, each key spelled only as it goes into the run: a key built and sorted per event (700k
/// at 100k entities and 300k facts) was most of what `h.name` added to a load.
struct NameOrder {
    /// The entities' `h.name` prefixes in order, one after another (place `p`'s is
    /// `prefixes[at[p]..at[p + 1]]`): the run reads them front to back, where each entity's own
    /// allocation was a cache miss at random.
    prefixes: Vec<u8>,
    at: Vec<usize>,
    /// (place in `prefixes`, event seq), sorted and distinct.
    pairs: Vec<(usize, u64)>,
    /// Whether one prefix begins another (the run must then sort what it is given).
    nested: bool,
}

impl NameOrder {
    fn of(part: &Partition, plan: &Plan, ids: Ids) -> NameOrder {
        let prefixes: Vec<Vec<u8>> = plan.known.folded.iter().map(|folded| name_prefix(part, folded)).collect();
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
        let mut at = Vec::with_capacity(order.len() + 1);
        let mut flat = Vec::with_capacity(prefixes.iter().map(Vec::len).sum());
        at.push(0);
        for &i in &order {
            flat.extend_from_slice(&prefixes[i]);
            at.push(flat.len());
        }
        NameOrder { prefixes: flat, at, pairs, nested }
    }
}

/// `h.name`, in `names`' order.
fn name_run(tx: &mut impl Runs, names: &NameOrder) -> Result<()> {
    let mut run = tx.run(NAME, !names.nested)?;
    let mut key = Vec::new();
    for &(p, seq) in &names.pairs {
        key.clear();
        key.extend_from_slice(&names.prefixes[names.at[p]..names.at[p + 1]]);
        key.extend_from_slice(&seq.to_be_bytes());
        run.push(&key, &[])?;
    }
    run.finish()
}

/// The orders `h.event` and `h.target` are written in, worked out from the plan alone: on a
/// thread of their own while the writer packs the record trees.
struct EventOrders<'p> {
    /// Events in `h.target` key order, with their targets.
    targets: Vec<(Target, usize)>,
    /// What the events' targets are spelled from.
    targets_of: Targets<'p>,
}

impl<'p> EventOrders<'p> {
    fn of(plan: &'p Plan) -> EventOrders<'p> {
        let targets_of = Targets::of(plan);
        // Sorted by target and sequence, the order of their keys, without comparing the keys
        // themselves (scattered in memory, each comparison would miss the cache twice). Where a
        // name holds a NUL byte (`ordered` false) the run sorts the encoded keys instead.
        let mut targets: Vec<(Target, usize)> =
            plan.written.iter().enumerate().map(|(k, &w)| (targets_of.of_written(w), k)).collect();
        targets.sort_unstable();
        EventOrders { targets, targets_of }
    }
}

/// The record trees written in plan order (entities, name generations, attributes, relations and
/// their source labels).
fn records(tx: &mut WriteTxn<'_>, part: &Partition, plan: &Plan, ids: Ids, generation: u64) -> Result<()> {
    entity_runs(tx, part, plan, ids, generation)?;
    attribute_runs(tx, part, plan, ids)?;
    relation_run(tx, part, plan, ids)?;
    source_run(tx, part, plan, ids)
}

/// The record trees written in the orders `RecordOrders` sorted (names, adjacency, id map), and
/// the tally.
fn sorted_records(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    plan: &Plan,
    orders: &RecordOrders<'_>,
    ordered: bool,
) -> Result<()> {
    name_index_run(tx, part, &orders.by_name, ordered)?;
    adjacency_run(tx, part, (&orders.adjacency, &orders.types), ordered)?;
    map_run(tx, part, &orders.map)?;
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
    // Into a store with no history yet, a helper packs `h.agent`, `h.event` and `h.target` while
    // this thread packs the record trees and `h.name`: the history trees were half of the
    // writer's time.
    let beside = tx.trees_empty(&HISTORY)?;
    let n = plan.written.len();
    std::thread::scope(|s| -> Result<()> {
        let record_orders = s.spawn(|| RecordOrders::of(&plan, ids));
        let event_orders = s.spawn(|| EventOrders::of(&plan));
        let name_order = s.spawn(|| NameOrder::of(part, &plan, ids));
        let here = |tx: &mut WriteTxn<'_>| {
            records(tx, part, &plan, ids, generation)?;
            sorted_records(tx, part, &plan, &joined(record_orders), ordered)?;
            name_run(tx, &joined(name_order))
        };
        if beside {
            let side = |pages: &mut SidePages<'_>| {
                agent_run(pages, part, agent, ids, n)?;
                event_and_target_runs(pages, part, &plan, ids, (agent, now), (ordered, &joined(event_orders)))
            };
            tx.with_side(&[AGENT, EVENT, TARGET], side, here).map(|_| ())
        } else {
            here(tx)?;
            agent_run(tx, part, agent, ids, n)?;
            event_and_target_runs(tx, part, &plan, ids, (agent, now), (ordered, &joined(event_orders)))
        }
    })?;
    let Plan { rest, mut out, .. } = plan;
    // The records the fast path left: through `import`, a page at a time, the facts between two
    // ends read once for all the pages (`import_pairs.rs`).
    let mut pairs = ImportPairs::default();
    for chunk in rest.chunks(MAX_LIMIT) {
        let records: Vec<Value> = chunk.iter().map(|(_, v)| v.clone()).collect();
        // A load is an operator's restore (admin route or the store's owner): every agent's notes.
        let done = import_among(tx, part, &records, (agent, true), now, (&mut pairs, None))?;
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
