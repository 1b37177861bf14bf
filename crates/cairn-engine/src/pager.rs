//! The data file seen as numbered, checksummed pages behind the bounded cache.

use crate::budget;
use crate::cache::PageCache;
use crate::error::{Error, Result};
use crate::limits::PAGE_SIZE;
use crate::page::{self, Page, PageId, ZERO_PAGE};
use crate::vfs::VfsFile;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

/// Committed pages held in memory before they are written to the data file (8 MiB). Commits are
/// durable through the log, so a page needs to reach the data file only by the next checkpoint;
/// writing pages in bulk keeps a `pwrite` per commit off the commit path, and writing them on a
/// thread of their own keeps the `pwrite`s off the writer thread.
const WRITE_BACK_PAGES: usize = 2048;

/// Pages staged for the file: gathering (`unwritten`), then handed to one background write at a
/// time (`writing`). Batches are written one after the other, so a page staged again later
/// always reaches the file after its earlier image.
type PageMap = HashMap<PageId, Page>;

/// One generation of the data file. Compaction swaps in a new generation; snapshots taken before
/// keep reading the old one until they are dropped.
pub(crate) struct PageFile {
    pub(crate) file: Arc<dyn VfsFile>,
    cache: PageCache,
    /// Committed pages not yet in the file nor handed to a background write; readers look here
    /// after the cache.
    unwritten: RwLock<PageMap>,
    /// The batch a background write is putting in the file; readers look here after `unwritten`
    /// (which holds any newer image of the same page).
    writing: Arc<RwLock<PageMap>>,
    /// That background write, joined before the next one starts and before any write of the
    /// caller's own (checkpoint, backup), which must land after it.
    in_flight: Mutex<Option<JoinHandle<Result<()>>>>,
    /// Held through `stage`: the writer and a helper packing beside it (`side.rs`) stage pages,
    /// and a batch must be handed to the background write by one of them at a time.
    staging: Mutex<()>,
    zero_on_drop: std::sync::atomic::AtomicBool,
    /// Pages handed to readers (cached or not) since this generation was opened: what a test
    /// counts to show a read's work does not grow with the store (never a clock).
    #[cfg(test)]
    pages_read: std::sync::atomic::AtomicU64,
}

impl PageFile {
    pub(crate) fn new(file: Arc<dyn VfsFile>, cache_bytes: usize) -> Self {
        PageFile {
            file,
            cache: PageCache::new(cache_bytes),
            unwritten: RwLock::new(HashMap::new()),
            writing: Arc::new(RwLock::new(HashMap::new())),
            in_flight: Mutex::new(None),
            staging: Mutex::new(()),
            zero_on_drop: std::sync::atomic::AtomicBool::new(false),
            #[cfg(test)]
            pages_read: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// A page, from the cache or else from disk with its checksum verified.
    pub(crate) fn read(&self, id: PageId) -> Result<Page> {
        budget::check()?;
        #[cfg(test)]
        self.pages_read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(p) = self.cache.get(id) {
            return Ok(p);
        }
        if let Some(p) = self.unwritten.read().expect("unwritten lock").get(&id) {
            return Ok(p.clone());
        }
        if let Some(p) = self.writing.read().expect("writing lock").get(&id) {
            return Ok(p.clone());
        }
        let page = self.read_uncached(id)?;
        self.cache.insert(id, page.clone());
        Ok(page)
    }

    /// Runs `f` on a page (cached, or read and verified); the hot path of point reads, which
    /// need no reference to the page beyond `f`.
    pub(crate) fn with_page<R>(&self, id: PageId, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        budget::check()?;
        let mut f = Some(f);
        if let Some(r) = self.cache.with(id, |p| (f.take().expect("called once"))(p)) {
            #[cfg(test)]
            self.pages_read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Ok(r);
        }
        let page = self.read(id)?;
        Ok((f.take().expect("not called on a miss"))(&page))
    }

    /// The pages handed to readers so far (`pages_read`).
    #[cfg(test)]
    pub(crate) fn pages_read(&self) -> u64 {
        self.pages_read.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A page straight from disk, checksum verified; the cache is neither read nor filled.
    pub(crate) fn read_uncached(&self, id: PageId) -> Result<Page> {
        // Read straight into the shared allocation: no intermediate buffer to copy and free.
        let mut page: Page = Arc::from(ZERO_PAGE);
        let buf = Arc::get_mut(&mut page).expect("a new page has one owner");
        self.file.read_exact_at(buf, id * PAGE_SIZE as u64).map_err(|e| Error::io(format!("reading page {id}"), e))?;
        page::verify(id, &page)?;
        Ok(page)
    }

    /// Makes committed pages readable at once and writes them out later, in bulk once enough
    /// have gathered, on a background thread.
    pub(crate) fn stage(&self, pages: Vec<(PageId, Page)>) -> Result<()> {
        let _one_at_a_time = self.staging.lock().expect("staging lock");
        let pending = {
            let mut unwritten = self.unwritten.write().expect("unwritten lock");
            for (id, p) in pages {
                self.cache.insert(id, p.clone());
                unwritten.insert(id, p);
            }
            unwritten.len()
        };
        if pending >= WRITE_BACK_PAGES { self.write_back_later() } else { Ok(()) }
    }

    /// Waits for the background write, if one runs; its failure is this call's.
    fn join(&self) -> Result<()> {
        let Some(handle) = self.in_flight.lock().expect("write-back lock").take() else { return Ok(()) };
        handle.join().unwrap_or_else(|_| {
            Err(Error::io("writing pages back", std::io::Error::other("the write-back thread panicked")))
        })
    }

    /// Hands the gathered pages to a background write (after the previous one has finished).
    fn write_back_later(&self) -> Result<()> {
        self.join()?;
        // The caller holds `staging` (or is the writer with no helper beside it): nothing is
        // staged meanwhile, and the previous batch, written, has left `writing` empty.
        let mut unwritten = self.unwritten.write().expect("unwritten lock");
        let batch = std::mem::take(&mut *unwritten);
        let mut pages: Vec<(PageId, Page)> = batch.iter().map(|(id, p)| (*id, p.clone())).collect();
        // The batch moves to `writing` before `unwritten`'s lock is let go: a reader that finds
        // a page in neither (and reads the file, not yet written) would read a stale image.
        *self.writing.write().expect("writing lock") = batch;
        drop(unwritten);
        let (file, writing) = (self.file.clone(), self.writing.clone());
        let handle = std::thread::Builder::new()
            .name("cairn-write-back".into())
            .spawn(move || {
                write_pages(&*file, &mut pages)?;
                // On to the device now, not all at the checkpoint's sync: a bulk load's hundreds
                // of MB otherwise waited there (~100 ms for 310 MB).
                file.start_writeback();
                // Every page of the batch is now in the file: readers find them there.
                writing.write().expect("writing lock").clear();
                Ok(())
            })
            .map_err(|e| Error::io("starting a write-back thread", e))?;
        *self.in_flight.lock().expect("write-back lock") = Some(handle);
        Ok(())
    }

    /// Drops staged pages that no longer need writing (freed, and past every reader).
    pub(crate) fn discard(&self, ids: &[PageId]) {
        if ids.is_empty() {
            return;
        }
        let mut unwritten = self.unwritten.write().expect("unwritten lock");
        if unwritten.is_empty() {
            return;
        }
        for id in ids {
            unwritten.remove(id);
        }
    }

    /// Writes every staged page to the file (not synced), the background write's included.
    pub(crate) fn write_back(&self) -> Result<()> {
        self.join()?;
        let mut pages: Vec<(PageId, Page)> =
            self.unwritten.read().expect("unwritten lock").iter().map(|(id, p)| (*id, p.clone())).collect();
        if pages.is_empty() {
            return Ok(());
        }
        self.write(&mut pages)?;
        // Only the writer stages pages, and it is the caller, so nothing was staged meanwhile.
        self.unwritten.write().expect("unwritten lock").clear();
        Ok(())
    }

    /// Writes pages (not synced) and makes them the cached image. Waits for a background write
    /// first, so these land after it.
    pub(crate) fn write(&self, pages: &mut [(PageId, Page)]) -> Result<()> {
        self.join()?;
        write_pages(&*self.file, pages)?;
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

/// Pages gathered into one write at most: a run of consecutive pages goes out in writes of this
/// many, so the buffer stays small and is reused (a buffer grown to a whole batch, hundreds of
/// MB after a bulk load, is fresh memory the kernel must zero first, which cost more than the
/// write itself).
const PAGES_PER_WRITE: usize = 64;

/// Writes pages to `file` at their places (not synced), runs of consecutive pages in one write.
fn write_pages(file: &dyn VfsFile, pages: &mut [(PageId, Page)]) -> Result<()> {
    pages.sort_unstable_by_key(|(id, _)| *id);
    let mut i = 0;
    let mut buf = Vec::with_capacity(pages.len().min(PAGES_PER_WRITE) * PAGE_SIZE);
    while i < pages.len() {
        let start = pages[i].0;
        let mut j = i;
        buf.clear();
        while j < pages.len() && j - i < PAGES_PER_WRITE && pages[j].0 == start + (j - i) as u64 {
            buf.extend_from_slice(&pages[j].1);
            j += 1;
        }
        file.write_all_at(&buf, start * PAGE_SIZE as u64)
            .map_err(|e| Error::io(format!("writing pages {start}..{}", start + (j - i) as u64), e))?;
        i = j;
    }
    Ok(())
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
        // A background write still running must finish before the file is zeroed or closed; its
        // failure no longer matters (nothing will read this generation again).
        let _ = self.join();
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
