//! A process-wide cache of each partition's name index, linker and type classes, so recall and
//! context do not rebuild them from every entity on every call (about half a second at 100k
//! names). An entry is valid for one name generation (`trees::NAMES_GEN`), which the transaction
//! that creates an entity or changes its types bumps. Forgetting does not bump it: readers check
//! every id they take from the cache against the snapshot, so a forgotten entity is never served.

use super::cache_budget::{cached, keep};
use super::graph::Entity;
use super::part::Partition;
use super::records::decode;
use super::trees::{ENT, ent_key, names_gen, names_gen_in, names_log, names_log_in};
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::text::{Effort, Linker, LookupOptions, Mention, NameIndex, NameMatch, fold};
use crate::write::WriteTxn;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// Entities changed since the base was built that are kept as a delta; past this the base is
/// rebuilt. A new generation reads only the entities changed since the cached one (the delta's
/// entities are kept in memory) and rebuilds only the delta's small layer from them.
const MAX_DELTA: u64 = 4096;
/// Entities the delta's small layer holds before they move into its large one. Rebuilding one
/// delta of up to 4,096 names each generation was 9 ms a create near the bound (profiled: a
/// relate making one entity spent a fifth of its CPU there); two layers cost a create at most 64
/// names, and the large layer's rebuild once every 64 changes.
const SMALL: usize = 64;

/// An index over a set of entities' names and types.
pub(crate) struct Part {
    index: NameIndex,
    /// Built on the first `find` from `index`'s names: only linking text needs the automaton, and
    /// at 100k names it was 40% of building a partition's names, which a relate's duplicate check
    /// or a recall's suggestions paid on a node's first call without using it.
    linker: OnceLock<Linker>,
    /// `type_key(type)` → the ids of entities of that type, ascending.
    types: HashMap<String, Vec<u64>>,
}

/// A layer of the delta: the entities it indexes (each at its latest), kept so the next
/// generation's layer is built from these and the few changed since, not read again from the log
/// (found by an audit: a relate creating one entity read every entity created since the base,
/// 4,090 pages at 2,000).
struct Layer {
    part: Part,
    entities: Vec<Named>,
    /// Heap bytes `entities` hold, counted once: the budget reads every entry's size at each store.
    kept_bytes: usize,
}

impl Layer {
    fn new(entities: Vec<Named>) -> Option<Arc<Layer>> {
        let kept_bytes = entities
            .iter()
            .map(|e| {
                std::mem::size_of::<Named>() + e.name.capacity() + e.types.iter().map(String::capacity).sum::<usize>()
            })
            .sum();
        (!entities.is_empty()).then(|| Arc::new(Layer { part: part_of(&entities), entities, kept_bytes }))
    }

    fn bytes(&self) -> usize {
        self.part.bytes() + self.kept_bytes
    }
}

/// What a partition's names answer: a base built from every entity at one generation, and a
/// delta over the entities added or retyped since (from `trees::NAMES_LOG`), in two layers: a
/// large one shared by the generations until the small one overflows into it.
pub(crate) struct Names {
    base: Arc<Part>,
    base_gen: u64,
    large: Option<Arc<Layer>>,
    small: Option<Arc<Layer>>,
}

impl Part {
    fn linker(&self) -> &Linker {
        self.linker.get_or_init(|| Linker::new(self.index.names()))
    }

    /// Heap bytes, about: the index, the linker once built, and the type classes.
    fn bytes(&self) -> usize {
        let types: usize = self.types.iter().map(|(k, ids)| k.capacity() + ids.capacity() * 8 + 56).sum();
        self.index.bytes() + self.linker.get().map_or(0, Linker::bytes) + types
    }
}

impl Names {
    /// The base and the delta's layers. An entity changed since the base is in more than one
    /// (types only grow, so the latest holds what the others do); each answer merges them.
    fn parts(&self) -> impl Iterator<Item = &Part> {
        std::iter::once(&*self.base).chain(self.large.iter().chain(&self.small).map(|l| &l.part))
    }

    /// Heap bytes, about, as `cache_budget.rs` counts them.
    pub(crate) fn bytes(&self) -> usize {
        self.base.bytes() + self.large.iter().chain(&self.small).map(|l| l.bytes()).sum::<usize>()
    }

    fn layered(&self) -> bool {
        self.large.is_some() || self.small.is_some()
    }

    /// Every name occurring in `text` (see `Linker::find`), from base and delta.
    pub(crate) fn find(&self, text: &str) -> Vec<Mention> {
        let mut out: Vec<Mention> = self.parts().flat_map(|p| p.linker().find(text)).collect();
        if self.layered() {
            out.sort_unstable_by_key(|m| (m.start, m.entity, m.end));
            out.dedup();
        }
        out
    }

    /// The names holding `query` as whole words (see `NameIndex::names_with_word`), from base and
    /// delta, shorter first.
    pub(crate) fn names_with_word(&self, query: &str, limit: usize) -> Vec<NameMatch> {
        let mut out: Vec<NameMatch> = self.parts().flat_map(|p| p.index.names_with_word(query, limit)).collect();
        if self.layered() {
            out.sort_by(|a, b| (a.name.chars().count(), &a.name, a.id).cmp(&(b.name.chars().count(), &b.name, b.id)));
            let mut seen = HashSet::new();
            out.retain(|m| seen.insert(m.id));
            out.truncate(limit);
        }
        out
    }

    /// The names `query` holds or abbreviates (see `NameIndex::held_or_abbreviated`), from base
    /// and delta, longer first.
    pub(crate) fn held_or_abbreviated(&self, query: &str, limit: usize) -> Vec<(u64, String)> {
        self.held_or_abbreviated_with(query, limit, Effort::Whole)
    }

    /// `held_or_abbreviated` reading each part as `effort` allows.
    pub(crate) fn held_or_abbreviated_with(&self, query: &str, limit: usize, effort: Effort) -> Vec<(u64, String)> {
        let mut out: Vec<(u64, String)> =
            self.parts().flat_map(|p| p.index.held_or_abbreviated_with(query, limit, effort)).collect();
        if self.layered() {
            out.sort_by(|a, b| (b.1.chars().count(), &a.1, a.0).cmp(&(a.1.chars().count(), &b.1, b.0)));
            let mut seen = HashSet::new();
            out.retain(|(id, _)| seen.insert(*id));
            out.truncate(limit);
        }
        out
    }

    /// The names matching `query` (see `NameIndex::lookup`), merged in the same order; an entity
    /// in several parts (retyped since the base) appears once, at its best.
    pub(crate) fn lookup(&self, query: &str, opts: LookupOptions) -> Vec<NameMatch> {
        self.lookup_with(query, opts, Effort::Whole)
    }

    /// `lookup` reading each part as `effort` allows.
    pub(crate) fn lookup_with(&self, query: &str, opts: LookupOptions, effort: Effort) -> Vec<NameMatch> {
        let mut out: Vec<NameMatch> = self.parts().flat_map(|p| p.index.lookup_with(query, opts, effort)).collect();
        if self.layered() {
            out.sort_by(|a, b| {
                (a.how.rank(), a.name.chars().count(), &a.name, a.id).cmp(&(
                    b.how.rank(),
                    b.name.chars().count(),
                    &b.name,
                    b.id,
                ))
            });
            let mut seen = HashSet::new();
            out.retain(|m| seen.insert(m.id));
            out.truncate(opts.limit);
        }
        out
    }

    /// The entities of the type a word names (plural folded), ascending.
    pub(crate) fn of_type(&self, word: &str) -> Vec<u64> {
        let keys = type_keys(word);
        let mut out: Vec<u64> =
            keys.iter().flat_map(|key| self.parts().filter_map(move |p| p.types.get(key))).flatten().copied().collect();
        if self.layered() || keys.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
        out
    }
}

/// English plurals no ending rule finds, as the singular a type is stored under: "which people"
/// meets type `person` (found by an audit: "which persons" seeded every person, "which people"
/// none).
const IRREGULAR_PLURALS: [(&str, &str); 8] = [
    ("people", "person"),
    ("men", "man"),
    ("women", "woman"),
    ("children", "child"),
    ("mice", "mouse"),
    ("geese", "goose"),
    ("feet", "foot"),
    ("teeth", "tooth"),
];

/// The matching key of an entity type or of a question word naming one: folded, and a plural
/// ending dropped (`Companies` → `company`, `boxes` → `box`, `people` → `person`), so "which
/// companies" meets type `Company`.
pub(crate) fn type_key(t: &str) -> String {
    let f = fold(t);
    let chars = f.chars().count();
    if let Some((_, singular)) = IRREGULAR_PLURALS.iter().find(|(plural, _)| *plural == f) {
        (*singular).to_owned()
    } else if chars > 4 && f.ends_with("ies") {
        format!("{}y", &f[..f.len() - 3])
    } else if chars > 4 && ["ses", "xes", "ches", "shes", "zes"].iter().any(|s| f.ends_with(s)) {
        f[..f.len() - 2].to_owned()
    } else if chars > 3 && f.ends_with('s') && !f.ends_with("ss") && !f.ends_with("us") {
        f[..f.len() - 1].to_owned()
    } else {
        f
    }
}

/// The keys a question word may name a type under: `type_key`, and where that dropped `-es`, the
/// word with its `-s` alone dropped, as English spells both (`boxes` → `box`, `databases` →
/// `database`): found in QA, "Which databases are there?" met no type `database` (key
/// `databas`) and answered `nothing_stored`.
fn type_keys(word: &str) -> Vec<String> {
    let key = type_key(word);
    let f = fold(word);
    if f.ends_with("es") && key.len() + 2 == f.len() { vec![key, f[..f.len() - 1].to_owned()] } else { vec![key] }
}

/// What the index reads of a stored entity. Decoded from its record without its attributes, which
/// no index reads and which grow with an entity's writes: building a partition's names parses
/// every entity, and the delta keeps up to `MAX_DELTA` of these in memory.
#[derive(Clone, serde::Deserialize)]
pub(crate) struct Named {
    id: u64,
    name: String,
    types: Vec<String>,
}

impl From<&Entity> for Named {
    fn from(e: &Entity) -> Named {
        Named { id: e.id, name: e.name.clone(), types: e.types.clone() }
    }
}

fn part_of(entities: &[Named]) -> Part {
    let mut types: HashMap<String, Vec<u64>> = HashMap::new();
    for e in entities {
        for t in &e.types {
            types.entry(type_key(t)).or_default().push(e.id);
        }
    }
    for ids in types.values_mut() {
        ids.sort_unstable();
        ids.dedup();
    }
    Part { index: NameIndex::new(entities.iter().map(|e| (e.id, e.name.as_str()))), linker: OnceLock::new(), types }
}

/// Names over `entities` with no delta.
pub(crate) fn build(entities: &[Entity]) -> Names {
    let named: Vec<Named> = entities.iter().map(Named::from).collect();
    Names { base: Arc::new(part_of(&named)), base_gen: 0, large: None, small: None }
}

/// Where the names of one generation come from: the store as a snapshot or a write sees it.
trait Source {
    fn generation(&mut self, part: &Partition) -> Result<u64>;
    fn all(&mut self, part: &Partition) -> Result<Vec<Named>>;
    fn changed(&mut self, part: &Partition, after: u64, upto: u64) -> Result<Vec<Named>>;
}

impl Source for &Snapshot {
    fn generation(&mut self, part: &Partition) -> Result<u64> {
        names_gen(self, part)
    }
    fn all(&mut self, part: &Partition) -> Result<Vec<Named>> {
        self.prefix(ENT, part.prefix())?.map(|item| decode(&item?.1, "entity")).collect()
    }
    fn changed(&mut self, part: &Partition, after: u64, upto: u64) -> Result<Vec<Named>> {
        let mut ids = names_log(self, part, after, upto)?;
        ids.sort_unstable();
        ids.dedup();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.extend(self.get(ENT, &ent_key(part, id))?.map(|b| decode(&b, "entity")).transpose()?);
        }
        Ok(out)
    }
}

impl Source for &mut WriteTxn<'_> {
    fn generation(&mut self, part: &Partition) -> Result<u64> {
        names_gen_in(self, part)
    }
    fn all(&mut self, part: &Partition) -> Result<Vec<Named>> {
        self.prefix(ENT, part.prefix())?.iter().map(|(_, bytes)| decode(bytes, "entity")).collect()
    }
    fn changed(&mut self, part: &Partition, after: u64, upto: u64) -> Result<Vec<Named>> {
        let mut ids = names_log_in(self, part, after, upto)?;
        ids.sort_unstable();
        ids.dedup();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.extend(self.get(ENT, &ent_key(part, id))?.map(|b| decode(&b, "entity")).transpose()?);
        }
        Ok(out)
    }
}

fn names_from(dir: &Path, mut src: impl Source, part: &Partition) -> Result<Arc<Names>> {
    let generation = src.generation(part)?;
    let hit = cached(dir, part);
    if let Some((g, names)) = &hit
        && *g == generation
    {
        return Ok(names.clone());
    }
    // Bring a cached base up to date from the entities changed since it was built: those of the
    // cached delta and, read from the log, those changed since the cached generation (or, for a
    // snapshot older than it, all since the base).
    let names = match hit {
        Some((cached_gen, old)) if old.base_gen <= generation && generation - old.base_gen <= MAX_DELTA => {
            let (after, mut large, mut small) = if cached_gen < generation {
                (cached_gen, old.large.clone(), old.small.as_ref().map_or_else(Vec::new, |l| l.entities.clone()))
            } else {
                (old.base_gen, None, Vec::new())
            };
            let changed = src.changed(part, after, generation)?;
            let ids: HashSet<u64> = changed.iter().map(|e| e.id).collect();
            small.retain(|e| !ids.contains(&e.id));
            small.extend(changed);
            if small.len() > SMALL {
                let moved: HashSet<u64> = small.iter().map(|e| e.id).collect();
                let mut entities = large.as_ref().map_or_else(Vec::new, |l| l.entities.clone());
                entities.retain(|e| !moved.contains(&e.id));
                entities.append(&mut small);
                large = Layer::new(entities);
            }
            Arc::new(Names { base: old.base.clone(), base_gen: old.base_gen, large, small: Layer::new(small) })
        }
        _ => {
            Arc::new(Names { base: Arc::new(part_of(&src.all(part)?)), base_gen: generation, large: None, small: None })
        }
    };
    keep(dir, part, generation, &names);
    Ok(names)
}

/// The names of `part` as `snap` sees them (store directory `dir` keys the cache).
pub(crate) fn names(dir: &Path, snap: &Snapshot, part: &Partition) -> Result<Arc<Names>> {
    names_from(dir, snap, part)
}

/// The names of `part` as `tx` sees them before it creates any entity. A write that goes on to
/// create entities bumps the generation, so what is cached here is never served for a state it
/// does not describe.
pub(crate) fn names_in(dir: &Path, tx: &mut WriteTxn<'_>, part: &Partition) -> Result<Arc<Names>> {
    names_from(dir, tx, part)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::testing::fresh;
    use crate::knowledge::{graph, upsert_entity};
    use serde_json::Map;

    #[test]
    fn plurals_fold_to_the_type() {
        for (word, key) in [
            ("Companies", "company"),
            ("company", "company"),
            ("people", "person"),
            ("Children", "child"),
            ("Boxes", "box"),
            ("cities", "city"),
            ("Person", "person"),
            ("status", "status"),
            ("class", "class"),
        ] {
            assert_eq!(type_key(word), key, "{word}");
        }
    }

    #[test]
    fn a_plural_in_es_meets_a_type_ending_in_e() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        store
            .write(move |tx| {
                upsert_entity(tx, &p, "PostgreSQL", &["database".into()], &Map::new(), 1)?;
                upsert_entity(tx, &p, "Crate", &["Box".into()], &Map::new(), 2)
            })
            .unwrap();
        let names = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        for (word, found) in [("databases", 1), ("Databases", 1), ("database", 1), ("boxes", 1), ("caches", 0)] {
            assert_eq!(names.of_type(word).len(), found, "{word}");
        }
    }

    #[test]
    fn a_new_name_or_type_invalidates_the_cached_names() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        store.write(move |tx| upsert_entity(tx, &p, "Acme", &["company".into()], &Map::new(), 1)).unwrap();
        let first = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        let again = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "an unchanged partition reuses its names");
        assert!(!first.layered());
        let p = part.clone();
        store.write(move |tx| upsert_entity(tx, &p, "Globex", &[], &Map::new(), 2)).unwrap();
        let after = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        assert!(!Arc::ptr_eq(&first, &after));
        assert!(Arc::ptr_eq(&after.base, &first.base), "a new name is a delta over the same base");
        assert_eq!(after.lookup("Globex", LookupOptions { prefix: false, limit: 1, as_name: false }).len(), 1);
        assert_eq!(after.lookup("Acme", LookupOptions { prefix: false, limit: 1, as_name: false }).len(), 1);
        assert_eq!(after.find("Globex bought Acme").len(), 2);
        let p = part.clone();
        store.write(move |tx| upsert_entity(tx, &p, "Globex", &["Company".into()], &Map::new(), 3)).unwrap();
        let typed = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        assert_eq!(typed.of_type("companies").len(), 2, "a type added to a known entity is seen");
    }

    /// Entities created and retyped one write at a time, across the small layer's bound twice:
    /// after each write the cached names answer as names built afresh from every entity, and a
    /// generation that does not overflow the small layer shares the large one (checked while the
    /// entry keeps its base: parallel tests may evict it from the process-wide cache).
    #[test]
    fn layered_names_answer_as_a_fresh_build() {
        let (_dir, store, part) = fresh();
        let name = |i: usize| format!("Member {i} Q{}", i * 7919 % 1009);
        let mut previous: Option<Arc<Names>> = None;
        for i in 0..(2 * SMALL + 20) {
            let p = part.clone();
            let (who, types) =
                if i % 7 == 6 { (name(i / 2), vec!["team".into()]) } else { (name(i), vec!["person".into()]) };
            store.write(move |tx| upsert_entity(tx, &p, &who, &types, &Map::new(), i64::try_from(i).unwrap())).unwrap();
            let snap = store.snapshot().unwrap();
            let cached = names(store.dir(), &snap, &part).unwrap();
            let fresh = build(&graph::entities(&snap, &part).unwrap());
            let opts = LookupOptions { prefix: false, limit: 10, as_name: false };
            for probe in [name(i), name(i / 2), name(0), format!("member {}", i / 3)] {
                let ids = |n: &Names| n.lookup(&probe, opts).into_iter().map(|m| (m.id, m.how)).collect::<Vec<_>>();
                assert_eq!(ids(&cached), ids(&fresh), "lookup {probe:?} after write {i}");
            }
            for t in ["people", "teams"] {
                assert_eq!(cached.of_type(t), fresh.of_type(t), "type {t} after write {i}");
            }
            let text = format!("{} met {} and {}.", name(i), name(i / 2), name(1));
            assert_eq!(cached.find(&text), fresh.find(&text), "find after write {i}");
            if let (Some(before), Some(now)) = (&previous, &cached.large)
                && let Some(earlier) = &before.large
                && before.small.as_ref().is_some_and(|l| l.entities.len() < SMALL)
                && Arc::ptr_eq(&before.base, &cached.base)
            {
                assert!(Arc::ptr_eq(earlier, now), "write {i} rebuilt the large layer without an overflow");
            }
            previous = Some(cached);
        }
    }
}
