//! The real file system.

use super::{DirLock, LockError, Vfs, VfsFile};
use std::fs::{self, DirBuilder, File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

/// Mode of every file the store creates: the store holds memory in plaintext, so only its owner
/// may read it, whatever the process umask allows.
pub const FILE_MODE: u32 = 0o600;
/// Mode of every directory the store creates.
pub const DIR_MODE: u32 = 0o700;

/// The operating system's file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct StdFs;

struct StdFile(File);

impl VfsFile for StdFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.0.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
    #[cfg(target_os = "linux")]
    fn start_writeback(&self) {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain system call on a descriptor this file owns; offset 0 and length 0 ask
        // for the whole file, and the result is a hint's, ignored (`sync_data` reports errors).
        unsafe { libc::sync_file_range(self.0.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
}

/// The lock file stays open (and flocked) for as long as the store is open.
/// The held lock: the directory's own `flock`, and `LOCK`'s (which names the holder's pid and is
/// what `ts/server/store-lock.ts` looks up in `/proc/locks`). Both go when it is dropped.
struct StdLock {
    _dir: File,
    _file: File,
}
impl DirLock for StdLock {}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

impl Vfs for StdFs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn VfsFile>> {
        let file =
            OpenOptions::new().read(true).write(true).create(create).truncate(false).mode(FILE_MODE).open(path)?;
        if create && let Some(parent) = path.parent() {
            // A newly created file must survive a crash together with its directory entry.
            sync_dir(parent)?;
        }
        Ok(Arc::new(StdFile(file)))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)?;
        if let Some(parent) = to.parent() {
            sync_dir(parent)?;
        }
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        match fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        DirBuilder::new().recursive(true).mode(DIR_MODE).create(path)
    }

    fn lock_dir(&self, dir: &Path) -> Result<Box<dyn DirLock>, LockError> {
        let path = dir.join("LOCK");
        // The directory itself is what is locked: `LOCK` can be deleted (by hand, by a cleanup
        // script) while a node holds it, and a second opener would then lock a new file of that
        // name and open the store twice (found by a failure audit: the writes of one node were
        // lost). A directory cannot be replaced while it holds the store's files.
        let dir_file = File::open(dir).map_err(LockError::Io)?;
        match dir_file.try_lock() {
            Ok(()) => {}
            // Held only shared, by read-only opens, which write no pid (see below).
            Err(TryLockError::WouldBlock) if dir_file.try_lock_shared().is_ok() => return Err(LockError::Held(None)),
            Err(TryLockError::WouldBlock) => return Err(LockError::Held(holder_pid(&path))),
            Err(TryLockError::Error(e)) => return Err(LockError::Io(e)),
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(FILE_MODE)
            .open(&path)
            .map_err(LockError::Io)?;
        match file.try_lock() {
            Ok(()) => {
                // The pid is informational: it lets a second opener name the holder.
                let pid = std::process::id().to_string();
                file.set_len(0).map_err(LockError::Io)?;
                file.seek(SeekFrom::Start(0)).map_err(LockError::Io)?;
                file.write_all(pid.as_bytes()).map_err(LockError::Io)?;
                Ok(Box::new(StdLock { _dir: dir_file, _file: file }))
            }
            Err(TryLockError::WouldBlock) => {
                // Held only shared, by read-only opens (`vfs::ReadOnlyFs`), which write no pid:
                // the one in the file is an earlier holder's, perhaps long gone.
                if file.try_lock_shared().is_ok() {
                    return Err(LockError::Held(None));
                }
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                Err(LockError::Held(text.trim().parse().ok()))
            }
            Err(TryLockError::Error(e)) => Err(LockError::Io(e)),
        }
    }
}

/// The pid the holder of the store wrote into `LOCK`, when the file is there and says one.
fn holder_pid(lock: &Path) -> Option<u32> {
    fs::read_to_string(lock).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Store, StoreOptions};
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_deleted_lock_file_does_not_let_a_second_open_in() {
        // Found by a failure audit: `rm LOCK` beside a running node let a second node open the
        // same store, and the writes of one of them were lost.
        let dir = tempfile::tempdir().unwrap();
        let first = Store::open(dir.path(), StoreOptions::default()).unwrap();
        fs::remove_file(dir.path().join("LOCK")).unwrap();
        let Err(second) = Store::open(dir.path(), StoreOptions::default()) else {
            panic!("a second open of a held store")
        };
        assert_eq!(second.code(), "STORE_LOCKED", "{second}");
        first.close().unwrap();
        drop(first);
        Store::open(dir.path(), StoreOptions::default()).unwrap();
    }

    /// Under the usual umask (022) a plain create would make these 0644/0755.
    #[test]
    fn a_new_store_is_private_to_its_owner() {
        let root = std::env::temp_dir().join(format!("cairn-vfs-mode-{}", std::process::id()));
        let dir = root.join("a/b");
        let store = Store::open(&dir, StoreOptions::default()).unwrap();
        StdFs.open(&dir.join("extra"), true).unwrap();
        assert_eq!(mode(&root.join("a")), DIR_MODE);
        assert_eq!(mode(&dir), DIR_MODE);
        let mut files = 0;
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(mode(&path), FILE_MODE, "{}", path.display());
            files += 1;
        }
        assert!(files >= 3, "data, wal, lock, extra: {files}");
        drop(store);
        fs::remove_dir_all(&root).unwrap();
    }
}
