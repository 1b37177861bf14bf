//! The data file seen as numbered, checksummed pages behind the bounded cache.

use crate::cache::PageCache;
use crate::error::{Error, Result};
use crate::limits::PAGE_SIZE;
use crate::page::{self, Page, PageId};
use crate::vfs::VfsFile;
use std::sync::Arc;

/// One generation of the data file. Compaction swaps in a new generation; snapshots taken before
/// keep reading the old one until they are dropped.
pub(crate) struct PageFile {
    pub(crate) file: Arc<dyn VfsFile>,
    cache: PageCache,
    zero_on_drop: std::sync::atomic::AtomicBool,
}

impl PageFile {
    pub(crate) fn new(file: Arc<dyn VfsFile>, cache_bytes: usize) -> Self {
        PageFile { file, cache: PageCache::new(cache_bytes), zero_on_drop: std::sync::atomic::AtomicBool::new(false) }
    }

    /// A page, from the cache or else from disk with its checksum verified.
    pub(crate) fn read(&self, id: PageId) -> Result<Page> {
        if let Some(p) = self.cache.get(id) {
            return Ok(p);
        }
        let page = self.read_uncached(id)?;
        self.cache.insert(id, page.clone());
        Ok(page)
    }

    /// A page straight from disk, checksum verified; the cache is neither read nor filled.
    pub(crate) fn read_uncached(&self, id: PageId) -> Result<Page> {
        let mut buf = vec![0u8; PAGE_SIZE];
        self.file
            .read_exact_at(&mut buf, id * PAGE_SIZE as u64)
            .map_err(|e| Error::io(format!("reading page {id}"), e))?;
        page::verify(id, &buf)?;
        Ok(Arc::from(buf.into_boxed_slice()))
    }

    /// Writes pages (not synced) and makes them the cached image.
    pub(crate) fn write(&self, pages: &mut [(PageId, Page)]) -> Result<()> {
        pages.sort_unstable_by_key(|(id, _)| *id);
        // Runs of consecutive pages go out in one write.
        let mut i = 0;
        let mut buf = Vec::new();
        while i < pages.len() {
            let start = pages[i].0;
            let mut j = i;
            buf.clear();
            while j < pages.len() && pages[j].0 == start + (j - i) as u64 {
                buf.extend_from_slice(&pages[j].1);
                j += 1;
            }
            self.file
                .write_all_at(&buf, start * PAGE_SIZE as u64)
                .map_err(|e| Error::io(format!("writing pages {start}..{}", start + (j - i) as u64), e))?;
            i = j;
        }
        for (id, p) in pages.iter() {
            self.cache.insert(*id, p.clone());
        }
        Ok(())
    }

    pub(crate) fn forget(&self, id: PageId) {
        self.cache.remove(id);
    }

    pub(crate) fn sync(&self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io("syncing the data file", e))
    }

    pub(crate) fn set_len_pages(&self, pages: u64) -> Result<()> {
        self.file.set_len(pages * PAGE_SIZE as u64).map_err(|e| Error::io("resizing the data file", e))
    }

    pub(crate) fn cache_len(&self) -> usize {
        self.cache.len()
    }

    pub(crate) fn cache_capacity(&self) -> usize {
        self.cache.capacity()
    }
}

impl PageFile {
    /// Zero the whole file when the last reader lets go of it (purging compaction: the file has
    /// already been replaced, but snapshots taken before may still read it).
    pub(crate) fn zero_on_drop(&self) {
        self.zero_on_drop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for PageFile {
    fn drop(&mut self) {
        if !self.zero_on_drop.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let Ok(len) = self.file.len() else { return };
        let chunk = vec![0u8; 1 << 20];
        let mut at = 0;
        while at < len {
            let n = chunk.len().min((len - at) as usize);
            if self.file.write_all_at(&chunk[..n], at).is_err() {
                return;
            }
            at += n as u64;
        }
        let _ = self.file.sync_data();
    }
}
