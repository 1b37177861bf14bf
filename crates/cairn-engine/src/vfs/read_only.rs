//! A file system that reads a store's real files and never changes them: the layer under a
//! read-only open (`Store::open_read_only`), as LMDB's `MDB_RDONLY` and redb's read-only
//! `Database` open a store an operator may only read (a backup, a copy, a read-only mount, a
//! service's data dir seen by someone else).
//!
//! Existing files are opened read-only; every write the store makes while opening (replaying log
//! records past the last checkpoint, writing the checkpoint that follows, resetting the log) and
//! while checking lands in memory, over the file's real bytes, and is gone when the store closes.
//! No file or directory is created, renamed or removed on disk.
//!
//! The store lock is honoured without creating a `LOCK` file: a store whose `LOCK` exists is
//! locked shared (`flock` needs only a descriptor open for reading), which fails while a
//! read-write open holds it exclusively and keeps one from opening meanwhile. No `LOCK` means no
//! process has ever opened the store read-write here, so none holds it. A `LOCK` this user may
//! not read is looked up in the kernel's lock table instead.

use super::{DirLock, LockError, Vfs, VfsFile};
use std::collections::HashMap;
use std::fs::{File, TryLockError};
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The unit in which writes are kept in memory.
const BLOCK: u64 = 4096;

/// Reads real files, keeps every change in memory. Clones share the same changes.
#[derive(Default, Clone)]
pub struct ReadOnlyFs {
    /// Files opened or made so far, by path; `None` for a path removed in memory.
    files: Arc<Mutex<HashMap<PathBuf, Option<Arc<LayeredFile>>>>>,
}

/// A real file (or none, for one made in memory) with the writes made to it since it was opened.
struct LayeredFile {
    base: Option<File>,
    layer: Mutex<Layer>,
}

struct Layer {
    /// The file's length as the store sees it.
    len: u64,
    /// Bytes of the real file still visible: a shrink hides the rest, which then reads as zeros.
    base_len: u64,
    /// Blocks written, by index, each whole (`BLOCK` bytes).
    blocks: HashMap<u64, Vec<u8>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LayeredFile {
    fn new(base: Option<File>) -> io::Result<LayeredFile> {
        let len = match &base {
            Some(f) => f.metadata()?.len(),
            None => 0,
        };
        Ok(LayeredFile { base, layer: Mutex::new(Layer { len, base_len: len, blocks: HashMap::new() }) })
    }

    /// Fills `buf` with the real file's bytes at `offset`, zeros past what is visible of it.
    fn read_base(&self, layer: &Layer, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let visible = usize::try_from(layer.base_len.saturating_sub(offset)).unwrap_or(usize::MAX).min(buf.len());
        if let (Some(base), true) = (&self.base, visible > 0) {
            base.read_exact_at(&mut buf[..visible], offset)?;
        }
        buf[visible..].fill(0);
        Ok(())
    }
}

/// The pieces of `len` bytes at `offset`, one per block: (block index, offset in it, bytes).
fn pieces(offset: u64, len: usize) -> impl Iterator<Item = (u64, usize, usize)> {
    let end = offset + len as u64;
    let mut at = offset;
    std::iter::from_fn(move || {
        (at < end).then(|| {
            let index = at / BLOCK;
            let within = (at % BLOCK) as usize;
            let n = (BLOCK as usize - within).min((end - at) as usize);
            at += n as u64;
            (index, within, n)
        })
    })
}

impl VfsFile for LayeredFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let layer = lock(&self.layer);
        if offset + buf.len() as u64 > layer.len {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file"));
        }
        if layer.blocks.is_empty() {
            return self.read_base(&layer, buf, offset);
        }
        let mut done = 0;
        for (index, within, n) in pieces(offset, buf.len()) {
            let out = &mut buf[done..done + n];
            match layer.blocks.get(&index) {
                Some(block) => out.copy_from_slice(&block[within..within + n]),
                None => self.read_base(&layer, out, index * BLOCK + within as u64)?,
            }
            done += n;
        }
        Ok(())
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut layer = lock(&self.layer);
        let mut done = 0;
        for (index, within, n) in pieces(offset, buf.len()) {
            if !layer.blocks.contains_key(&index) {
                let mut block = vec![0; BLOCK as usize];
                self.read_base(&layer, &mut block, index * BLOCK)?;
                layer.blocks.insert(index, block);
            }
            let block = layer.blocks.get_mut(&index).expect("just made");
            block[within..within + n].copy_from_slice(&buf[done..done + n]);
            done += n;
        }
        layer.len = layer.len.max(offset + buf.len() as u64);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(lock(&self.layer).len)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut layer = lock(&self.layer);
        if len < layer.len {
            // What lies past the new end reads as zeros if the file grows again, as on disk.
            layer.base_len = layer.base_len.min(len);
            layer.blocks.retain(|&index, _| index * BLOCK < len);
            if let Some(block) = layer.blocks.get_mut(&(len / BLOCK)) {
                block[(len % BLOCK) as usize..].fill(0);
            }
        }
        layer.len = len;
        Ok(())
    }
}

/// Refuses what a read-only open cannot do without changing the disk.
fn refused(what: &str, path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{what} {} (opened read-only)", path.display()))
}

/// Holds a shared lock on the store's `LOCK` for as long as the store is open.
/// A read-only open's shared locks: of the directory (what a read-write open locks), when this
/// user may open it, and of `LOCK`, when it is there.
struct SharedLock(#[allow(dead_code)] Option<File>, #[allow(dead_code)] Option<File>);
impl DirLock for SharedLock {}

impl ReadOnlyFs {
    /// A file system with no changes made yet.
    #[must_use]
    pub fn new() -> ReadOnlyFs {
        ReadOnlyFs::default()
    }

    fn files(&self) -> MutexGuard<'_, HashMap<PathBuf, Option<Arc<LayeredFile>>>> {
        lock(&self.files)
    }
}

impl Vfs for ReadOnlyFs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn VfsFile>> {
        let mut files = self.files();
        if let Some(entry) = files.get(path) {
            match entry {
                Some(file) => return Ok(file.clone()),
                None if !create => return Err(refused("no file", path)),
                None => {}
            }
        }
        let base = if files.contains_key(path) {
            None
        } else {
            match File::open(path) {
                Ok(f) => Some(f),
                Err(e) if e.kind() == io::ErrorKind::NotFound && create => None,
                Err(e) => return Err(e),
            }
        };
        let file = Arc::new(LayeredFile::new(base)?);
        files.insert(path.to_path_buf(), Some(file.clone()));
        Ok(file)
    }

    fn exists(&self, path: &Path) -> bool {
        match self.files().get(path) {
            Some(entry) => entry.is_some(),
            None => path.exists(),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut files = self.files();
        let Some(Some(file)) = files.get(from).cloned() else {
            return Err(refused("cannot rename a file not opened", from));
        };
        files.insert(from.to_path_buf(), None);
        files.insert(to.to_path_buf(), Some(file));
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.files().insert(path.to_path_buf(), None);
        Ok(())
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        if path.is_dir() { Ok(()) } else { Err(refused("no directory", path)) }
    }

    fn lock_dir(&self, dir: &Path) -> Result<Box<dyn DirLock>, LockError> {
        let path = dir.join("LOCK");
        let dir_lock = shared_dir_lock(dir, &path)?;
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Box::new(SharedLock(dir_lock, None))),
            // A `LOCK` this user may not read (the store's files are 0600, its data file may have
            // been shared with this user, its `LOCK` not): the kernel's lock table still tells
            // whether a read-write open holds it, though nothing keeps one out meanwhile.
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                return match held_exclusively(&path) {
                    Ok(false) => Ok(Box::new(SharedLock(dir_lock, None))),
                    Ok(true) => Err(LockError::Held(None)),
                    Err(_) => Err(LockError::Io(e)),
                };
            }
            Err(e) => return Err(LockError::Io(e)),
        };
        match file.try_lock_shared() {
            Ok(()) => Ok(Box::new(SharedLock(dir_lock, Some(file)))),
            Err(TryLockError::WouldBlock) => {
                // The holder wrote its pid into the file on taking the lock.
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                Err(LockError::Held(text.trim().parse().ok()))
            }
            Err(TryLockError::Error(e)) => Err(LockError::Io(e)),
        }
    }
}

/// A shared `flock` of the directory, which a read-write open holds exclusively (`StdFs`); `None`
/// when this user may not open the directory (the `LOCK` rules then decide alone).
fn shared_dir_lock(dir: &Path, lock: &Path) -> Result<Option<File>, LockError> {
    let file = match File::open(dir) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => return Ok(None),
        Err(e) => return Err(LockError::Io(e)),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => {
            let pid = std::fs::read_to_string(lock).ok().and_then(|t| t.trim().parse().ok());
            Err(LockError::Held(pid))
        }
        Err(TryLockError::Error(e)) => Err(LockError::Io(e)),
    }
}

/// Whether `/proc/locks` lists an exclusive `flock` on the file at `path`, matched by inode (a
/// device number there is not the one `stat` gives on btrfs; a stray match only refuses).
fn held_exclusively(path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(path)?.ino();
    let table = std::fs::read_to_string("/proc/locks")?;
    Ok(table.lines().any(|line| exclusive_flock_inode(line) == Some(inode)))
}

/// The inode of a line of `/proc/locks` that is a granted exclusive `flock`:
/// `1: FLOCK  ADVISORY  WRITE <pid> <maj>:<min>:<inode> 0 EOF` (a waiter's line has `->` after the
/// number, so it does not parse).
fn exclusive_flock_inode(line: &str) -> Option<u64> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    match fields.as_slice() {
        [_, "FLOCK", _, "WRITE", _, file, ..] => file.rsplit(':').next()?.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes across blocks read back over the real bytes; a shrink then a growth reads zeros
    /// where the real file still has bytes; the real file never changes.
    #[test]
    fn writes_stay_in_memory_over_the_real_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let real: Vec<u8> = (0..3 * BLOCK).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &real).unwrap();
        let fs = ReadOnlyFs::new();
        let f = fs.open(&path, false).unwrap();
        f.write_all_at(&[9; 10], BLOCK - 5).unwrap();
        let mut got = vec![0; 2 * BLOCK as usize];
        f.read_exact_at(&mut got, 0).unwrap();
        let mut want = real[..2 * BLOCK as usize].to_vec();
        want[BLOCK as usize - 5..BLOCK as usize + 5].fill(9);
        assert_eq!(got, want);
        f.set_len(BLOCK + 2).unwrap();
        f.set_len(3 * BLOCK).unwrap();
        let mut tail = vec![1; (2 * BLOCK - 2) as usize];
        f.read_exact_at(&mut tail, BLOCK + 2).unwrap();
        assert!(tail.iter().all(|&b| b == 0));
        assert!(f.read_exact_at(&mut [0; 2], 3 * BLOCK - 1).is_err());
        // Made, renamed and removed in memory only.
        let made = dir.path().join("new");
        fs.open(&made, true).unwrap().write_all_at(b"x", 0).unwrap();
        fs.rename(&made, &dir.path().join("moved")).unwrap();
        fs.remove(&path).unwrap();
        assert!(!fs.exists(&path) && fs.exists(&dir.path().join("moved")));
        assert_eq!(std::fs::read(&path).unwrap(), real);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_exclusive_flock_is_read_from_the_lock_table() {
        assert_eq!(exclusive_flock_inode("1: FLOCK  ADVISORY  WRITE 4242 00:2a:123456 0 EOF"), Some(123_456));
        assert_eq!(exclusive_flock_inode("2: FLOCK  ADVISORY  READ 4242 00:2a:123456 0 EOF"), None);
        assert_eq!(exclusive_flock_inode("3: -> FLOCK  ADVISORY  WRITE 77 00:2a:123456 0 EOF"), None);
        assert_eq!(exclusive_flock_inode("4: POSIX  ADVISORY  WRITE 77 00:2a:123456 0 EOF"), None);
        // And a store held read-write is seen in the real table, until it closes.
        let dir = tempfile::tempdir().unwrap();
        let store = crate::Store::open(dir.path(), crate::StoreOptions::default()).unwrap();
        let lock = dir.path().join("LOCK");
        assert!(held_exclusively(&lock).unwrap());
        store.close().unwrap();
        assert!(!held_exclusively(&lock).unwrap());
    }
}
