//! The process-wide map behind `cache.rs`: each partition's names at their latest generation, kept
//! within a byte budget and at most `MAX_ENTRIES` partitions, the least recently used dropped
//! first (rebuilt on its next use). The budget is the node's setting (`StoreOptions::
//! name_cache_bytes`, `CAIRN_NAME_CACHE_MB`): before it, a node serving many users kept the
//! names of 64 partitions whatever their size (a 100k-entity partition's took ~260 MB), so its
//! memory grew with the data, not with its configuration. The entry just used is always kept,
//! even alone over the budget: dropping it would rebuild it on every call.

use super::cache::Names;
use super::part::Partition;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Partitions kept at once, whatever their size.
const MAX_ENTRIES: usize = 64;

/// The default budget: 512 MiB, the names of about two partitions of 100k entities with their
/// linkers, or hundreds of small ones.
pub const DEFAULT_BYTES: usize = 512 << 20;

static BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_BYTES);

/// Sets the budget of every store this process opens (one process owns a store; a node opens one).
pub fn set_budget(bytes: usize) {
    BUDGET.store(bytes, Ordering::Relaxed);
    let mut map = map().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    map.shrink(None, bytes);
}

type Key = (PathBuf, Vec<u8>);

struct Entry {
    generation: u64,
    names: Arc<Names>,
    /// `Map::clock` when last served or stored.
    used: u64,
}

#[derive(Default)]
struct Map {
    entries: HashMap<Key, Entry>,
    clock: u64,
}

impl Map {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Drops the least recently used entries, never `keep`, until the rest fit the budget and
    /// the entry bound. Sizes are read now: a part's linker is built on its first use, after the
    /// entry was stored.
    fn shrink(&mut self, keep: Option<&Key>, budget: usize) {
        let mut by_age: Vec<(u64, usize, Key)> =
            self.entries.iter().map(|(k, e)| (e.used, e.names.bytes(), k.clone())).collect();
        let mut total: usize = by_age.iter().map(|(_, bytes, _)| bytes).sum();
        by_age.sort_unstable_by_key(|(used, _, _)| *used);
        let mut count = by_age.len();
        for (_, bytes, key) in by_age {
            if total <= budget && count <= MAX_ENTRIES {
                break;
            }
            if Some(&key) == keep {
                continue;
            }
            self.entries.remove(&key);
            total -= bytes;
            count -= 1;
        }
    }
}

fn map() -> &'static Mutex<Map> {
    static MAP: OnceLock<Mutex<Map>> = OnceLock::new();
    MAP.get_or_init(|| Mutex::new(Map::default()))
}

fn key(dir: &Path, part: &Partition) -> Key {
    (dir.to_path_buf(), part.raw().to_vec())
}

/// The names kept for `part` of the store at `dir`, with their generation.
pub(crate) fn cached(dir: &Path, part: &Partition) -> Option<(u64, Arc<Names>)> {
    let mut map = map().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = map.tick();
    let entry = map.entries.get_mut(&key(dir, part))?;
    entry.used = now;
    Some((entry.generation, entry.names.clone()))
}

/// Keeps `names` as `part`'s at `generation` (replacing its older ones), then drops others as
/// the budget needs.
pub(crate) fn keep(dir: &Path, part: &Partition, generation: u64, names: &Arc<Names>) {
    let mut map = map().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let used = map.tick();
    let k = key(dir, part);
    map.entries.insert(k.clone(), Entry { generation, names: names.clone(), used });
    map.shrink(Some(&k), BUDGET.load(Ordering::Relaxed));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::cache::build;
    use crate::knowledge::graph::Entity;

    fn names(count: u64) -> Arc<Names> {
        let entities: Vec<Entity> = (0..count)
            .map(|id| Entity {
                id,
                name: format!("Entity number {id}"),
                types: vec!["thing".into()],
                attributes: serde_json::Map::new(),
                recorded_at: 0,
            })
            .collect();
        Arc::new(build(&entities))
    }

    fn key(n: u8) -> Key {
        (PathBuf::from("/store"), vec![n])
    }

    fn put(map: &mut Map, n: u8, names: &Arc<Names>, budget: usize) {
        let used = map.tick();
        map.entries.insert(key(n), Entry { generation: 1, names: names.clone(), used });
        map.shrink(Some(&key(n)), budget);
    }

    /// Over the budget, the least recently served or stored partitions go first; the one just
    /// stored stays even alone over it; an empty budget keeps only that one.
    #[test]
    fn the_least_recently_used_names_go_first_and_the_one_in_use_stays() {
        let (small, large) = (names(100), names(2_000));
        assert!(large.bytes() > 10 * small.bytes(), "sizes are counted: {} vs {}", large.bytes(), small.bytes());
        let budget = 3 * small.bytes() + small.bytes() / 2;
        let mut map = Map::default();
        for n in 0..3 {
            put(&mut map, n, &small, budget);
        }
        assert_eq!(map.entries.len(), 3, "three fit");
        // Serving 0 makes 1 the least recently used.
        let now = map.tick();
        map.entries.get_mut(&key(0)).unwrap().used = now;
        put(&mut map, 3, &small, budget);
        let mut kept: Vec<u8> = map.entries.keys().map(|k| k.1[0]).collect();
        kept.sort_unstable();
        assert_eq!(kept, [0, 2, 3]);
        put(&mut map, 4, &large, budget);
        assert_eq!(map.entries.keys().map(|k| k.1[0]).collect::<Vec<_>>(), [4], "the one in use stays alone over");
        put(&mut map, 5, &small, 0);
        assert_eq!(map.entries.keys().map(|k| k.1[0]).collect::<Vec<_>>(), [5]);
    }

    /// Whatever their size, at most `MAX_ENTRIES` partitions are kept.
    #[test]
    fn at_most_max_entries_partitions_are_kept() {
        let tiny = names(1);
        let mut map = Map::default();
        for n in 0..=u8::try_from(MAX_ENTRIES).unwrap() {
            put(&mut map, n, &tiny, usize::MAX);
        }
        assert_eq!(map.entries.len(), MAX_ENTRIES);
        assert!(!map.entries.contains_key(&key(0)), "the oldest went");
    }
}
