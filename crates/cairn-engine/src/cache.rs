//! A bounded page cache: sharded CLOCK. A hit takes a shard's read lock and sets the page's
//! reference bit, so concurrent readers do not serialise on list updates as they would with LRU;
//! an insert into a full shard sweeps the clock hand, sparing pages referenced since the last
//! sweep. Memory is set by configuration (`StoreOptions::cache_bytes`), never by data size.

use crate::limits::PAGE_SIZE;
use crate::page::{Page, PageId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

const SHARDS: usize = 16;

/// Page ids are already well spread; a multiplicative hash is all a table of them needs.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

struct Slot {
    id: PageId,
    page: Page,
    referenced: AtomicBool,
}

struct Shard {
    index: HashMap<PageId, usize, BuildHasherDefault<IdHasher>>,
    slots: Vec<Slot>,
    hand: usize,
}

pub(crate) struct PageCache {
    shards: Vec<RwLock<Shard>>,
    per_shard: usize,
}

impl PageCache {
    pub(crate) fn new(cache_bytes: usize) -> Self {
        let per_shard = (cache_bytes / PAGE_SIZE / SHARDS).max(4);
        PageCache {
            shards: (0..SHARDS)
                .map(|_| RwLock::new(Shard { index: HashMap::default(), slots: Vec::new(), hand: 0 }))
                .collect(),
            per_shard,
        }
    }

    fn shard(&self, id: PageId) -> &RwLock<Shard> {
        // Consecutive pages land in different shards.
        &self.shards[(id as usize) % SHARDS]
    }

    pub(crate) fn get(&self, id: PageId) -> Option<Page> {
        let shard = self.shard(id).read().expect("cache lock");
        let slot = &shard.slots[*shard.index.get(&id)?];
        slot.referenced.store(true, Ordering::Relaxed);
        Some(slot.page.clone())
    }

    /// Runs `f` on a cached page under the shard's read lock, without taking a reference to it.
    pub(crate) fn with<R>(&self, id: PageId, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let shard = self.shard(id).read().expect("cache lock");
        let slot = &shard.slots[*shard.index.get(&id)?];
        slot.referenced.store(true, Ordering::Relaxed);
        Some(f(&slot.page))
    }

    pub(crate) fn insert(&self, id: PageId, page: Page) {
        let mut shard = self.shard(id).write().expect("cache lock");
        if let Some(&i) = shard.index.get(&id) {
            shard.slots[i].page = page;
            return;
        }
        let slot = Slot { id, page, referenced: AtomicBool::new(false) };
        if shard.slots.len() < self.per_shard {
            let i = shard.slots.len();
            shard.slots.push(slot);
            shard.index.insert(id, i);
            return;
        }
        loop {
            let i = shard.hand;
            shard.hand = (shard.hand + 1) % shard.slots.len();
            if !shard.slots[i].referenced.swap(false, Ordering::Relaxed) {
                let old = std::mem::replace(&mut shard.slots[i], slot);
                shard.index.remove(&old.id);
                shard.index.insert(id, i);
                return;
            }
        }
    }

    pub(crate) fn remove(&self, id: PageId) {
        let mut shard = self.shard(id).write().expect("cache lock");
        if let Some(i) = shard.index.remove(&id) {
            let last = shard.slots.len() - 1;
            shard.slots.swap(i, last);
            shard.slots.pop();
            if i < last {
                let moved = shard.slots[i].id;
                shard.index.insert(moved, i);
            }
            if shard.hand >= shard.slots.len() {
                shard.hand = 0;
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().expect("cache lock").slots.len()).sum()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.per_shard * SHARDS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn page(b: u8) -> Page {
        Arc::from(vec![b; 8].into_boxed_slice())
    }

    #[test]
    fn stays_within_capacity_and_keeps_referenced_pages() {
        let cache = PageCache::new(4 * SHARDS * PAGE_SIZE);
        for id in 0..(4 * SHARDS as u64) {
            cache.insert(id, page(id as u8));
        }
        // Touch page 0, then overflow its shard: 0 survives the first sweep.
        assert!(cache.get(0).is_some());
        cache.insert(SHARDS as u64 * 100, page(1));
        assert!(cache.get(0).is_some());
        assert_eq!(cache.len(), cache.capacity());
        for id in 1000..2000 {
            cache.insert(id, page(2));
        }
        assert_eq!(cache.len(), cache.capacity());
        cache.remove(1999);
        assert!(cache.get(1999).is_none());
        assert_eq!(cache.len(), cache.capacity() - 1);
    }
}
