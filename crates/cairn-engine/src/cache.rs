//! A bounded page cache: sharded LRU lists, so readers on different threads rarely contend.
//! Memory is set by configuration (`StoreOptions::cache_bytes`), never by data size.

use crate::limits::PAGE_SIZE;
use crate::page::{Page, PageId};
use lru::LruCache;
use std::num::NonZeroUsize;
use std::sync::Mutex;

const SHARDS: usize = 16;

pub(crate) struct PageCache {
    shards: Vec<Mutex<LruCache<PageId, Page>>>,
    capacity_pages: usize,
}

impl PageCache {
    pub(crate) fn new(cache_bytes: usize) -> Self {
        let per_shard = (cache_bytes / PAGE_SIZE / SHARDS).max(4);
        let cap = NonZeroUsize::new(per_shard).expect("at least 4");
        PageCache {
            shards: (0..SHARDS).map(|_| Mutex::new(LruCache::new(cap))).collect(),
            capacity_pages: per_shard * SHARDS,
        }
    }

    fn shard(&self, id: PageId) -> &Mutex<LruCache<PageId, Page>> {
        // Consecutive pages land in different shards.
        &self.shards[(id as usize) % SHARDS]
    }

    pub(crate) fn get(&self, id: PageId) -> Option<Page> {
        self.shard(id).lock().expect("cache lock").get(&id).cloned()
    }

    pub(crate) fn insert(&self, id: PageId, page: Page) {
        self.shard(id).lock().expect("cache lock").put(id, page);
    }

    pub(crate) fn remove(&self, id: PageId) {
        self.shard(id).lock().expect("cache lock").pop(&id);
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().expect("cache lock").len()).sum()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity_pages
    }
}
