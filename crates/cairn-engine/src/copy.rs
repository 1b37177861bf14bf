//! Writing a snapshot's trees into a new data file, densely and in key order: the common core of
//! online backup and compaction. Only live entries are copied, so freed pages (and whatever
//! forgotten data they held) never reach the new file.

use crate::btree::{Bytes, CAPACITY, Cursor, Node, Value, fits_inline, read_value};
use crate::error::{Error, Result};
use crate::limits::PAGE_SIZE;
use crate::meta::Meta;
use crate::page::{HEADER_LEN, Kind, NO_PAGE, Page, PageBuilder, PageId};
use crate::snapshot::{Snapshot, Version};
use crate::store::{BackupReport, DATA_FILE};
use crate::vfs::{Vfs, VfsFile};
use crate::write::catalog_value;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

/// Pages buffered before a write to the new file.
const FLUSH_PAGES: usize = 256;

pub(crate) struct Built {
    pub(crate) page_count: u64,
    pub(crate) catalog_root: PageId,
}

struct Builder {
    file: Arc<dyn VfsFile>,
    next: PageId,
    txn: u64,
    buffered: Vec<u8>,
    buffered_from: PageId,
}

impl Builder {
    fn new(file: Arc<dyn VfsFile>, txn: u64) -> Self {
        Builder { file, next: 2, txn, buffered: Vec::new(), buffered_from: 2 }
    }

    fn add(&mut self, page: PageBuilder) -> Result<PageId> {
        let id = self.next;
        self.next += 1;
        self.push(&page.seal(id, self.txn))?;
        Ok(id)
    }

    fn push(&mut self, page: &Page) -> Result<()> {
        self.buffered.extend_from_slice(page);
        if self.buffered.len() >= FLUSH_PAGES * PAGE_SIZE {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.file
            .write_all_at(&self.buffered, self.buffered_from * PAGE_SIZE as u64)
            .map_err(|e| Error::io("writing the new data file", e))?;
        self.buffered.clear();
        self.buffered_from = self.next;
        Ok(())
    }

    fn node(&mut self, node: &Node) -> Result<PageId> {
        let id = self.next;
        self.next += 1;
        self.push(&node.encode(id, self.txn))?;
        Ok(id)
    }

    fn value(&mut self, key: &[u8], bytes: Vec<u8>) -> Result<Value> {
        if fits_inline(key, bytes.len()) {
            return Ok(Value::Inline(bytes.into()));
        }
        let first = self.next;
        let chunks: Vec<&[u8]> = bytes.chunks(CAPACITY).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            let mut b = PageBuilder::new(Kind::Overflow);
            b.set_count(chunk.len() as u16);
            let last = i + 1 == chunks.len();
            b.set_link(if last { NO_PAGE } else { self.next + 1 });
            b.bytes_mut()[HEADER_LEN..HEADER_LEN + chunk.len()].copy_from_slice(chunk);
            self.add(b)?;
        }
        Ok(Value::Overflow { first, len: bytes.len() as u32 })
    }

    /// Builds a tree bottom-up from entries in key order; returns its root.
    fn tree(&mut self, entries: impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>>) -> Result<PageId> {
        let mut level: Vec<(Bytes, PageId)> = Vec::new();
        let mut leaf: Vec<(Bytes, Value)> = Vec::new();
        let mut size = 0;
        for entry in entries {
            let (key, bytes) = entry?;
            let value = self.value(&key, bytes)?;
            let s = crate::btree::leaf_entry_size(&key, &value);
            if size + s > CAPACITY && !leaf.is_empty() {
                let first = leaf[0].0.clone();
                let id = self.node(&Node::Leaf(std::mem::take(&mut leaf)))?;
                level.push((first, id));
                size = 0;
            }
            size += s;
            leaf.push((key.into(), value));
        }
        if !leaf.is_empty() {
            let first = leaf[0].0.clone();
            let id = self.node(&Node::Leaf(leaf))?;
            level.push((first, id));
        }
        while level.len() > 1 {
            let mut upper = Vec::new();
            let mut children: Vec<(Bytes, PageId)> = Vec::new();
            let mut size = 0;
            for (sep, id) in level {
                let s = crate::btree::branch_entry_size(&sep);
                if !children.is_empty() && size + s > CAPACITY {
                    let first_sep = std::mem::take(&mut children[0].0);
                    let page = self.node(&Node::Branch(std::mem::take(&mut children)))?;
                    upper.push((first_sep, page));
                    size = 0;
                }
                if !children.is_empty() {
                    size += s;
                }
                children.push((sep, id));
            }
            let first_sep = std::mem::take(&mut children[0].0);
            let page = self.node(&Node::Branch(children))?;
            upper.push((first_sep, page));
            level = upper;
        }
        Ok(level.first().map_or(NO_PAGE, |l| l.1))
    }
}

struct VersionEntries<'a> {
    file: &'a crate::pager::PageFile,
    cursor: Cursor,
}

impl Iterator for VersionEntries<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        match self.cursor.next(self.file) {
            Ok(Some((k, v))) => Some(read_value(self.file, v).map(|v| (k, v))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Writes `version` as a complete, synced data file at `path`.
/// `log_salt` is what its metas name as the log generation after them (`meta.rs`).
pub(crate) fn build(version: &Version, vfs: &dyn Vfs, path: &Path, store_id: u64, log_salt: u64) -> Result<Built> {
    let file = vfs.open(path, true).map_err(|e| Error::io("creating the new data file", e))?;
    file.set_len(0).map_err(|e| Error::io("truncating the new data file", e))?;
    let mut b = Builder::new(file.clone(), version.txn);
    let mut catalog = Vec::new();
    for (name, t) in version.trees.iter() {
        let cursor = Cursor::seek(&*version.file, t.root, Bound::Unbounded)?;
        let root = b.tree(VersionEntries { file: &version.file, cursor })?;
        let mut t = *t;
        t.root = root;
        catalog.push(Ok((name.as_bytes().to_vec(), catalog_value(t))));
    }
    let catalog_root = b.tree(catalog.into_iter())?;
    b.flush()?;
    let page_count = b.next;
    let mut metas = Vec::with_capacity(2 * PAGE_SIZE);
    for (slot, sequence) in [(0u64, 1u64), (1, 0)] {
        let meta = Meta {
            txn: version.txn,
            catalog_root,
            freelist_head: NO_PAGE,
            freelist_len: 0,
            page_count,
            sequence,
            store_id,
            log_salt,
        };
        metas.extend_from_slice(&meta.encode(slot));
    }
    file.write_all_at(&metas, 0).map_err(|e| Error::io("writing the new data file", e))?;
    file.sync_data().map_err(|e| Error::io("syncing the new data file", e))?;
    Ok(Built { page_count, catalog_root })
}

/// Writes a snapshot as a new store in `dest_dir`. It is written under a temporary name and
/// renamed into place; a failure (a damaged page met on the way, a full disk) removes the
/// temporary file, so a failed backup leaves no half-written store behind.
pub(crate) fn backup(snap: &Snapshot, vfs: &dyn Vfs, dest_dir: &Path) -> Result<BackupReport> {
    let dest = dest_dir.join(DATA_FILE);
    if vfs.exists(&dest) {
        return Err(Error::InvalidArgument(format!("{} already holds a store", dest_dir.display())));
    }
    vfs.create_dir_all(dest_dir).map_err(|e| Error::io("creating the backup directory", e))?;
    let tmp = dest_dir.join(format!("{DATA_FILE}.backup"));
    // A backup has no log: its metas name none.
    let installed = build(snap.version_arc(), vfs, &tmp, crate::wal::random_u64(), 0).and_then(|built| {
        vfs.rename(&tmp, &dest).map_err(|e| Error::io("installing the backup", e))?;
        Ok(built)
    });
    let built = installed.inspect_err(|_| {
        // The failure is what the caller needs; a temporary file that will not go is left to it.
        let _ = vfs.remove(&tmp);
    })?;
    Ok(BackupReport { txn: snap.txn(), pages: built.page_count, bytes: built.page_count * PAGE_SIZE as u64 })
}
