//! Read snapshots. A snapshot pins one committed version: its tree roots and the data-file
//! generation they live in. While it is alive the writer reuses no page that version can reach.

use crate::batch::{validate_key, validate_tree_name};
use crate::btree::{self, Cursor, NodeView, PageSource};
use crate::error::{Error, Result};
use crate::page::{HEADER_LEN, NO_PAGE, Page, PageId};
use crate::pager::PageFile;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A tree's root page and entry count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TreeRoot {
    pub(crate) root: PageId,
    pub(crate) len: u64,
}

/// A tree's name and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeInfo {
    pub name: String,
    pub entries: u64,
}

/// One committed state of the store.
pub(crate) struct Version {
    pub(crate) txn: u64,
    pub(crate) trees: Arc<BTreeMap<String, TreeRoot>>,
    pub(crate) file: Arc<PageFile>,
}

impl PageSource for PageFile {
    fn page(&self, id: PageId) -> Result<Page> {
        self.read(id)
    }
}

/// A point read in one version; `f` sees the value in place.
fn get_in<R>(version: &Version, tree: &str, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
    validate_tree_name(tree)?;
    validate_key(key)?;
    let root = version.trees.get(tree).map_or(NO_PAGE, |t| t.root);
    btree::lookup(&version.file, root, key, f)
}

/// The key and inline value of the leaf cell at `off` (`key_len u16 | value_len u32 | key |
/// value`, as `btree::NodeView` reads it), in one pass; `None` for an overflowed value or a cell
/// that does not fit, which the caller then reads through `NodeView`'s checked accessors.
fn inline_cell(page: &[u8], off: usize, count: usize) -> Option<(&[u8], Option<&[u8]>)> {
    if off < HEADER_LEN + 2 * count {
        return None;
    }
    let klen = usize::from(u16::from_le_bytes(page.get(off..off + 2)?.try_into().ok()?));
    let vlen = u32::from_le_bytes(page.get(off + 2..off + 6)?.try_into().ok()?);
    if vlen & (1 << 31) != 0 {
        return None;
    }
    let key = page.get(off + 6..off + 6 + klen)?;
    let value = page.get(off + 6 + klen..off + 6 + klen + vlen as usize)?;
    Some((key, Some(value)))
}

/// The current version and the versions live snapshots hold.
pub(crate) struct Registry {
    state: Mutex<RegistryState>,
    /// Set by `close`. A snapshot that outlives its store answers `Closed`: once the directory is
    /// released another opener may reuse the pages the snapshot's version reaches.
    closed: AtomicBool,
}

struct RegistryState {
    current: Arc<Version>,
    /// Pinned versions and their pin counts; a handful at a time, so a vector (which keeps its
    /// capacity: pinning allocates nothing) beats a map.
    live: Vec<(u64, usize)>,
    closed: bool,
}

impl Registry {
    pub(crate) fn new(current: Arc<Version>) -> Arc<Self> {
        Arc::new(Registry {
            state: Mutex::new(RegistryState { current, live: Vec::new(), closed: false }),
            closed: AtomicBool::new(false),
        })
    }

    /// Makes `v` the version new snapshots see.
    pub(crate) fn publish(&self, v: Arc<Version>) {
        self.state.lock().expect("registry lock").current = v;
    }

    pub(crate) fn current(&self) -> Arc<Version> {
        self.state.lock().expect("registry lock").current.clone()
    }

    /// The oldest version any snapshot, present or future, can see.
    pub(crate) fn oldest(&self) -> u64 {
        let s = self.state.lock().expect("registry lock");
        s.live.iter().map(|(txn, _)| *txn).min().unwrap_or(s.current.txn).min(s.current.txn)
    }

    pub(crate) fn close(&self) {
        self.state.lock().expect("registry lock").closed = true;
        self.closed.store(true, Ordering::SeqCst);
    }

    /// A point read at the current version, pinned only for the read's duration (no snapshot
    /// object is built: this is the hot path of `Store::get`).
    pub(crate) fn get<R>(&self, tree: &str, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
        let version = self.pin()?;
        let result = get_in(&version, tree, key, f);
        self.unpin(version.txn);
        result
    }

    fn pin(&self) -> Result<Arc<Version>> {
        let mut s = self.state.lock().expect("registry lock");
        if s.closed {
            return Err(Error::Closed);
        }
        let v = s.current.clone();
        match s.live.iter_mut().find(|(txn, _)| *txn == v.txn) {
            Some((_, n)) => *n += 1,
            None => s.live.push((v.txn, 1)),
        }
        Ok(v)
    }

    fn unpin(&self, txn: u64) {
        let mut s = self.state.lock().expect("registry lock");
        if let Some(i) = s.live.iter().position(|(t, _)| *t == txn) {
            s.live[i].1 -= 1;
            if s.live[i].1 == 0 {
                s.live.swap_remove(i);
            }
        }
    }

    pub(crate) fn snapshot(self: &Arc<Self>) -> Result<Snapshot> {
        let version = self.pin()?;
        Ok(Snapshot { inner: Arc::new(Pin { version, registry: self.clone() }) })
    }
}

struct Pin {
    version: Arc<Version>,
    registry: Arc<Registry>,
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.registry.unpin(self.version.txn);
    }
}

/// A consistent, read-only view of the store as of one commit. Cheap to clone; never blocks the
/// writer. Drop it promptly: pages it can see are not reused while it lives.
#[derive(Clone)]
pub struct Snapshot {
    inner: Arc<Pin>,
}

impl Snapshot {
    fn version(&self) -> &Version {
        &self.inner.version
    }

    fn open_version(&self) -> Result<&Version> {
        if self.inner.registry.closed.load(Ordering::SeqCst) {
            return Err(Error::Closed);
        }
        Ok(&self.inner.version)
    }

    fn root(&self, tree: &str) -> Result<PageId> {
        validate_tree_name(tree)?;
        Ok(self.open_version()?.trees.get(tree).map_or(NO_PAGE, |t| t.root))
    }

    /// The transaction this snapshot sees (the last one committed when it was taken).
    #[must_use]
    pub fn txn(&self) -> u64 {
        self.version().txn
    }

    /// The value under `key` in `tree`.
    pub fn get(&self, tree: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_in(self.open_version()?, tree, key, |v| v.map(<[u8]>::to_vec))
    }

    /// Hands the value under `key` in `tree` to `f` without copying it first (`None` when absent).
    pub fn get_with<R>(&self, tree: &str, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> Result<R> {
        get_in(self.open_version()?, tree, key, f)
    }

    /// Entries of `tree` between two bounds, in ascending key order.
    pub fn range(&self, tree: &str, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Result<Entries> {
        let root = self.root(tree)?;
        let cursor = Cursor::seek(&*self.version().file, root, start)?;
        Ok(Entries { snapshot: self.clone(), cursor, end: end.map(<[u8]>::to_vec), prefix: None, done: false })
    }

    /// Entries of `tree` whose keys start with `prefix`, in ascending key order.
    pub fn prefix(&self, tree: &str, prefix: &[u8]) -> Result<Entries> {
        let root = self.root(tree)?;
        let cursor = Cursor::seek(&*self.version().file, root, Bound::Included(prefix))?;
        Ok(Entries {
            snapshot: self.clone(),
            cursor,
            end: Bound::Unbounded,
            prefix: Some(prefix.to_vec()),
            done: false,
        })
    }

    /// Hands every entry of `tree` whose key starts with `prefix` to `f`, in ascending key order,
    /// as slices of its page (no copy or allocation per entry, unlike `prefix`); stops early when
    /// `f` returns `false`. For hot scans of many small entries, such as index postings.
    pub(crate) fn scan_prefix(
        &self,
        tree: &str,
        prefix: &[u8],
        f: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<()> {
        self.scan_from(tree, prefix, prefix, f)
    }

    /// `scan_prefix` from the first key at or past `start` (which must start with `prefix`)
    /// rather than from the first key with `prefix`.
    pub(crate) fn scan_from(
        &self,
        tree: &str,
        start: &[u8],
        prefix: &[u8],
        mut f: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<()> {
        debug_assert!(start.starts_with(prefix), "a scan starts inside its prefix");
        let root = self.root(tree)?;
        if root == NO_PAGE {
            return Ok(());
        }
        let file = &*self.version().file;
        // The branches above the current leaf, each with the child slot taken.
        let mut path: Vec<(PageId, Page, usize)> = Vec::new();
        let (mut id, mut seeking) = (root, true);
        loop {
            let page = file.read(id)?;
            let view = NodeView::new(id, &page)?;
            if !view.is_leaf() {
                let slot = if seeking { view.child_slot(start)? } else { 0 };
                let child = view.child(slot)?;
                path.push((id, page.clone(), slot));
                id = child;
                continue;
            }
            let from = if seeking { view.search(start)?.unwrap_or_else(|i| i) } else { 0 };
            seeking = false;
            // Keys are sorted and the first is at or past `start`, so past `prefix`: when the last
            // one starts with `prefix`, every one between does.
            let whole = view.len() > 0 && view.key(view.len() - 1)?.starts_with(prefix);
            for i in from..view.len() {
                let (key, value) = match inline_cell(&page, view.cell_offset(i), view.len()) {
                    Some(kv) => kv,
                    None => (view.key(i)?, None),
                };
                if !whole && !key.starts_with(prefix) {
                    return Ok(());
                }
                let go = match value {
                    Some(v) => f(key, v)?,
                    None => match view.inline_value(i)? {
                        Some(v) => f(key, v)?,
                        None => f(key, &btree::read_value(file, view.value(i)?)?)?,
                    },
                };
                if !go {
                    return Ok(());
                }
            }
            // The next leaf: the next child of the nearest branch that has one.
            loop {
                let Some((bid, bpage, slot)) = path.last_mut() else { return Ok(()) };
                let branch = NodeView::new(*bid, bpage)?;
                if *slot + 1 < branch.child_count() {
                    *slot += 1;
                    id = branch.child(*slot)?;
                    break;
                }
                path.pop();
            }
        }
    }

    /// Every non-empty tree with its entry count.
    pub fn trees(&self) -> Result<Vec<TreeInfo>> {
        Ok(self.version().trees.iter().map(|(name, t)| TreeInfo { name: name.clone(), entries: t.len }).collect())
    }

    /// Entries in `tree`.
    pub fn tree_len(&self, tree: &str) -> Result<u64> {
        validate_tree_name(tree)?;
        Ok(self.version().trees.get(tree).map_or(0, |t| t.len))
    }

    pub(crate) fn version_arc(&self) -> &Arc<Version> {
        &self.inner.version
    }
}

/// An ascending iterator over a snapshot's entries. It holds its snapshot.
pub struct Entries {
    snapshot: Snapshot,
    cursor: Cursor,
    end: Bound<Vec<u8>>,
    prefix: Option<Vec<u8>>,
    done: bool,
}

impl Iterator for Entries {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let file = &*self.snapshot.inner.version.file;
        let step = (|| {
            self.snapshot.open_version()?;
            let Some((key, value)) = self.cursor.next(file)? else { return Ok(None) };
            let past_end = match &self.end {
                Bound::Included(e) => key > *e,
                Bound::Excluded(e) => key >= *e,
                Bound::Unbounded => false,
            };
            if past_end || self.prefix.as_ref().is_some_and(|p| !key.starts_with(p)) {
                return Ok(None);
            }
            Ok(Some((key, btree::read_value(file, value)?)))
        })();
        match step {
            Ok(Some(kv)) => Some(Ok(kv)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Batch, Store, StoreOptions};

    #[test]
    fn scan_prefix_and_scan_from_lend_what_prefix_yields_across_leaves_and_stop_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
        let mut b = Batch::default();
        for i in 0..6000u32 {
            // Three prefixes of many leaves each, values of assorted sizes (one past the inline limit).
            let key = format!("{}{i:06}", ["a/", "b/", "c/"][(i % 3) as usize]);
            let len = if i == 3001 { 5000 } else { (i % 40) as usize };
            b.put("t", key.as_bytes(), &vec![(i % 251) as u8; len]);
        }
        store.apply(b).unwrap();
        let snap = store.snapshot().unwrap();
        for prefix in [&b""[..], b"a/", b"b/", b"c/", b"b/0030", b"z", b"b/003001"] {
            let want: Vec<(Vec<u8>, Vec<u8>)> = snap.prefix("t", prefix).unwrap().map(Result::unwrap).collect();
            let mut got = Vec::new();
            snap.scan_prefix("t", prefix, |k, v| {
                got.push((k.to_vec(), v.to_vec()));
                Ok(true)
            })
            .unwrap();
            assert_eq!(got, want, "prefix {:?}", String::from_utf8_lossy(prefix));
        }
        for (start, prefix) in [(&b"b/003000"[..], &b"b/"[..]), (b"b/", b"b/"), (b"b/9", b"b/"), (b"a/0059", b"")] {
            let want: Vec<(Vec<u8>, Vec<u8>)> =
                snap.prefix("t", prefix).unwrap().map(Result::unwrap).filter(|(k, _)| k.as_slice() >= start).collect();
            let mut got = Vec::new();
            snap.scan_from("t", start, prefix, |k, v| {
                got.push((k.to_vec(), v.to_vec()));
                Ok(true)
            })
            .unwrap();
            assert_eq!(got, want, "from {:?}", String::from_utf8_lossy(start));
        }
        let mut seen = 0;
        snap.scan_prefix("t", b"b/", |_, _| {
            seen += 1;
            Ok(seen < 700)
        })
        .unwrap();
        assert_eq!(seen, 700, "stops when the visitor says so");
        snap.scan_prefix("missing", b"", |_, _| panic!("an absent tree has no entries")).unwrap();
    }
}
