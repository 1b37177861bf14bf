//! A process-wide cache of each partition's name index, linker and type classes, so recall and
//! context do not rebuild them from every entity on every call (about half a second at 100k
//! names). An entry is valid for one name generation (`trees::NAMES_GEN`), which the transaction
//! that creates an entity or changes its types bumps. Forgetting does not bump it: readers check
//! every id they take from the cache against the snapshot, so a forgotten entity is never served.

use super::graph::{self, Entity};
use super::part::Partition;
use super::trees::{names_gen, names_gen_in};
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::text::{Linker, NameIndex, fold};
use crate::write::WriteTxn;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Partitions kept at once; past this an arbitrary entry is dropped (rebuilt on its next use).
const MAX_ENTRIES: usize = 64;

/// What a partition's names answer.
pub(crate) struct Names {
    pub index: NameIndex,
    pub linker: Linker,
    /// `type_key(type)` → the ids of entities of that type, ascending.
    pub types: HashMap<String, Vec<u64>>,
}

type Key = (PathBuf, Vec<u8>);
type Cache = Mutex<HashMap<Key, (u64, Arc<Names>)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The matching key of an entity type or of a question word naming one: folded, and a plural
/// ending dropped (`Companies` → `company`, `boxes` → `box`, `people` stays), so "which companies"
/// meets type `Company`.
pub(crate) fn type_key(t: &str) -> String {
    let f = fold(t);
    let chars = f.chars().count();
    if chars > 4 && f.ends_with("ies") {
        format!("{}y", &f[..f.len() - 3])
    } else if chars > 4 && ["ses", "xes", "ches", "shes", "zes"].iter().any(|s| f.ends_with(s)) {
        f[..f.len() - 2].to_owned()
    } else if chars > 3 && f.ends_with('s') && !f.ends_with("ss") && !f.ends_with("us") {
        f[..f.len() - 1].to_owned()
    } else {
        f
    }
}

pub(crate) fn build(entities: &[Entity]) -> Names {
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
    Names {
        index: NameIndex::new(entities.iter().map(|e| (e.id, e.name.as_str()))),
        linker: Linker::new(entities.iter().map(|e| (e.id, e.name.as_str()))),
        types,
    }
}

fn cached(dir: &Path, part: &Partition, generation: u64) -> Option<Arc<Names>> {
    let map = cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    map.get(&(dir.to_path_buf(), part.raw().to_vec())).filter(|(g, _)| *g == generation).map(|(_, n)| n.clone())
}

fn keep(dir: &Path, part: &Partition, generation: u64, names: &Arc<Names>) {
    let mut map = cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if map.len() >= MAX_ENTRIES
        && let Some(victim) = map.keys().next().cloned()
    {
        map.remove(&victim);
    }
    map.insert((dir.to_path_buf(), part.raw().to_vec()), (generation, names.clone()));
}

/// The names of `part` as `snap` sees them (store directory `dir` keys the cache).
pub(crate) fn names(dir: &Path, snap: &Snapshot, part: &Partition) -> Result<Arc<Names>> {
    let generation = names_gen(snap, part)?;
    if let Some(hit) = cached(dir, part, generation) {
        return Ok(hit);
    }
    let names = Arc::new(build(&graph::entities(snap, part)?));
    keep(dir, part, generation, &names);
    Ok(names)
}

/// The names of `part` as `tx` sees them before it creates any entity. A write that goes on to
/// create entities bumps the generation, so what is cached here is never served for a state it
/// does not describe.
pub(crate) fn names_in(dir: &Path, tx: &mut WriteTxn<'_>, part: &Partition) -> Result<Arc<Names>> {
    let generation = names_gen_in(tx, part)?;
    if let Some(hit) = cached(dir, part, generation) {
        return Ok(hit);
    }
    let names = Arc::new(build(&graph::entities_in(tx, part)?));
    keep(dir, part, generation, &names);
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::testing::fresh;
    use crate::knowledge::upsert_entity;
    use serde_json::Map;

    #[test]
    fn plurals_fold_to_the_type() {
        for (word, key) in [
            ("Companies", "company"),
            ("company", "company"),
            ("people", "people"),
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
    fn a_new_name_or_type_invalidates_the_cached_names() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        store.write(move |tx| upsert_entity(tx, &p, "Acme", &["company".into()], &Map::new(), 1)).unwrap();
        let first = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        let again = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "an unchanged partition reuses its names");
        let p = part.clone();
        store.write(move |tx| upsert_entity(tx, &p, "Globex", &[], &Map::new(), 2)).unwrap();
        let after = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        assert!(!Arc::ptr_eq(&first, &after));
        assert_eq!(after.index.lookup("Globex", crate::text::LookupOptions { prefix: false, limit: 1 }).len(), 1);
        let p = part.clone();
        store.write(move |tx| upsert_entity(tx, &p, "Globex", &["Company".into()], &Map::new(), 3)).unwrap();
        let typed = names(store.dir(), &store.snapshot().unwrap(), &part).unwrap();
        assert_eq!(typed.types["company"].len(), 2, "a type added to a known entity is seen");
    }
}
