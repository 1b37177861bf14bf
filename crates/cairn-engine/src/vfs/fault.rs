//! An in-memory file system that simulates power loss, for crash-consistency tests.
//!
//! Every file keeps two states: the bytes a disk would still hold after power loss (`durable`)
//! and the writes and resizes made since its last `sync_data` (`pending`, in order). Directory
//! operations (create, rename, remove) are durable at once, as `StdFs` syncs the directory.
//!
//! Each mutating call is an *I/O point*: `write_all_at`, `sync_data`, `set_len`, `rename`,
//! `remove`, and `open` when it creates a file. Points are numbered from 0 in the order they
//! happen. `crash_after(n)` lets points `0..n` succeed; point `n` and every point after it fail
//! with an `io::Error`, as if the process had lost power there. `crash_image` then builds the
//! file system a disk would hold after that power loss. Running a scenario once without a crash
//! and reading `points()` gives the number of points, so a test can crash at every one of them.

use super::{DirLock, LockError, Vfs, VfsFile};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The unit a disk writes atomically: a torn write is cut at a multiple of this offset.
pub const SECTOR_SIZE: u64 = 512;

/// What survives of the unsynced writes when `crash_image` simulates power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrashMode {
    /// Only synced bytes survive; every unsynced write and resize is lost.
    SyncedOnly,
    /// Each unsynced write or resize independently survives or is lost.
    RandomSubset,
    /// As `RandomSubset`, and in each file one unsynced write that spans a sector boundary
    /// survives only up to a sector boundary inside it (a torn write).
    TornWrite,
    /// As `RandomSubset`, but a lost write that extended its file may still leave the file
    /// extended, with zeros where its bytes would be (the size reached the disk, the data not).
    ZeroExtend,
}

impl CrashMode {
    /// Every mode, for tests that try each.
    pub const ALL: [CrashMode; 4] =
        [CrashMode::SyncedOnly, CrashMode::RandomSubset, CrashMode::TornWrite, CrashMode::ZeroExtend];
}

/// The kind of an I/O point, as recorded in `trace()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// `write_all_at` of `len` bytes at `offset`.
    Write { offset: u64, len: u64 },
    /// `sync_data`.
    Sync,
    /// `set_len` to `len`.
    SetLen { len: u64 },
    /// `rename` of the traced path to another.
    Rename,
    /// `remove`.
    Remove,
    /// `open` creating a new file.
    Create,
}

/// One I/O point: what it did and to which file (its path when it was opened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// The point's number, from 0.
    pub index: u64,
    /// The path of the file (the source path for a rename).
    pub path: PathBuf,
    /// What the point did.
    pub kind: PointKind,
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {:?} {}", self.index, self.kind, self.path.display())
    }
}

/// An in-memory, fault-injecting file system. Clones share the same state.
#[derive(Clone, Default)]
pub struct FaultFs {
    shared: Arc<Mutex<State>>,
}

impl fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state();
        f.debug_struct("FaultFs")
            .field("files", &st.files.keys().collect::<Vec<_>>())
            .field("points", &st.points)
            .field("crash_at", &st.crash_at)
            .field("crashed", &st.crashed)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    /// Directory entries: path to node id.
    files: BTreeMap<PathBuf, usize>,
    /// Every node ever created; a removed file lives on for the handles still open on it.
    nodes: Vec<FileData>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
    points: u64,
    crash_at: Option<u64>,
    /// When set, a write at the crash point first leaves a torn prefix of itself (unsynced).
    torn_seed: Option<u64>,
    crashed: bool,
    /// The point that failed first, when the crash has come.
    crash_point: Option<Point>,
    trace: Vec<Point>,
    record_trace: bool,
}

#[derive(Default, Clone)]
struct FileData {
    durable: Vec<u8>,
    current: Vec<u8>,
    pending: Vec<Pending>,
}

#[derive(Clone)]
enum Pending {
    Write { offset: u64, bytes: Vec<u8> },
    SetLen(u64),
}

fn crashed_error() -> io::Error {
    io::Error::other("simulated power loss (FaultFs)")
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{}: no such file (FaultFs)", path.display()))
}

fn write_at(buf: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let start = usize::try_from(offset).expect("offset fits in memory");
    let end = start + bytes.len();
    if buf.len() < end {
        buf.resize(end, 0);
    }
    buf[start..end].copy_from_slice(bytes);
}

fn resize(buf: &mut Vec<u8>, len: u64) {
    buf.resize(usize::try_from(len).expect("length fits in memory"), 0);
}

/// The sector-aligned cut points strictly inside a write at `offset` of `len` bytes, as
/// lengths of the prefix that survives.
fn sector_cuts(offset: u64, len: u64) -> impl Iterator<Item = u64> {
    let first = (offset / SECTOR_SIZE + 1) * SECTOR_SIZE;
    (first..offset + len).step_by(SECTOR_SIZE as usize).map(move |at| at - offset)
}

/// A small deterministic generator (splitmix64), so the engine needs no `rand` dependency.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

impl State {
    /// Counts a point; fails it when the crash has come.
    fn point(&mut self, path: &Path, kind: PointKind) -> io::Result<u64> {
        if self.crashed {
            return Err(crashed_error());
        }
        let index = self.points;
        if self.crash_at == Some(index) {
            self.crashed = true;
            self.crash_point = Some(Point { index, path: path.to_path_buf(), kind });
            return Err(crashed_error());
        }
        self.points += 1;
        if self.record_trace {
            self.trace.push(Point { index, path: path.to_path_buf(), kind });
        }
        Ok(index)
    }

    fn parent_exists(&self, path: &Path) -> bool {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => self.dirs.contains(p),
            _ => true,
        }
    }

    fn add_dirs(&mut self, path: &Path) {
        for p in path.ancestors() {
            if !p.as_os_str().is_empty() {
                self.dirs.insert(p.to_path_buf());
            }
        }
    }
}

impl FaultFs {
    /// An empty file system.
    #[must_use]
    pub fn new() -> FaultFs {
        FaultFs::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A test that panicked while holding the lock must not hide the state from the next.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of I/O points that have succeeded so far.
    #[must_use]
    pub fn points(&self) -> u64 {
        self.state().points
    }

    /// Lets the points numbered below `n` succeed; point `n` and all later ones fail.
    pub fn crash_after(&self, n: u64) {
        let mut st = self.state();
        st.crash_at = Some(n);
        st.torn_seed = None;
    }

    /// As `crash_after`, and when point `n` is a write, a prefix of it (cut at a sector boundary
    /// inside it when there is one, otherwise at a byte chosen by `seed`) reaches the file as an
    /// unsynced write before the failure.
    pub fn crash_after_torn(&self, n: u64, seed: u64) {
        let mut st = self.state();
        st.crash_at = Some(n);
        st.torn_seed = Some(seed);
    }

    /// Fails every point from now on.
    pub fn crash_now(&self) {
        let mut st = self.state();
        st.crashed = true;
    }

    /// Whether the simulated power loss has happened.
    #[must_use]
    pub fn crashed(&self) -> bool {
        self.state().crashed
    }

    /// The point at which the planned crash came, once it has.
    #[must_use]
    pub fn crash_point(&self) -> Option<Point> {
        self.state().crash_point.clone()
    }

    /// Starts recording every point (see `trace`).
    pub fn record_trace(&self, on: bool) {
        self.state().record_trace = on;
    }

    /// The points recorded since `record_trace(true)`.
    #[must_use]
    pub fn trace(&self) -> Vec<Point> {
        self.state().trace.clone()
    }

    /// The paths of every file, in order.
    #[must_use]
    pub fn files(&self) -> Vec<PathBuf> {
        self.state().files.keys().cloned().collect()
    }

    /// The current contents of a file (what a reader of the running system sees).
    #[must_use]
    pub fn read(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.state();
        st.files.get(path).map(|&id| st.nodes[id].current.clone())
    }

    /// The synced contents of a file (what survives a power loss for certain).
    #[must_use]
    pub fn read_durable(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.state();
        st.files.get(path).map(|&id| st.nodes[id].durable.clone())
    }

    /// Replaces a file's contents durably, creating it (and its directories) if needed. Not an
    /// I/O point: this is the test tampering with the disk, not the store writing it.
    pub fn write_durable(&self, path: &Path, bytes: &[u8]) {
        let mut st = self.state();
        if let Some(parent) = path.parent() {
            st.add_dirs(parent);
        }
        let data = FileData { durable: bytes.to_vec(), current: bytes.to_vec(), pending: Vec::new() };
        if let Some(&id) = st.files.get(path) {
            st.nodes[id] = data;
        } else {
            let id = st.nodes.len();
            st.nodes.push(data);
            st.files.insert(path.to_path_buf(), id);
        }
    }

    /// The number of unsynced writes and resizes of a file.
    #[must_use]
    pub fn pending(&self, path: &Path) -> usize {
        let st = self.state();
        st.files.get(path).map_or(0, |&id| st.nodes[id].pending.len())
    }

    /// A new file system holding what a disk would hold after power loss now: each file's
    /// synced bytes plus, per `mode`, some of its unsynced writes (chosen by `seed`). Directory
    /// entries are as they are now. It has no locks, no crash planned and its point count at 0.
    #[must_use]
    pub fn crash_image(&self, mode: CrashMode, seed: u64) -> FaultFs {
        let st = self.state();
        let mut rng = SplitMix(seed ^ 0x5EED_CA1B_u64);
        let mut image = State { dirs: st.dirs.clone(), ..State::default() };
        for (path, &id) in &st.files {
            let file = &st.nodes[id];
            let bytes = survivors(file, mode, &mut rng);
            let new_id = image.nodes.len();
            image.nodes.push(FileData { durable: bytes.clone(), current: bytes, pending: Vec::new() });
            image.files.insert(path.clone(), new_id);
        }
        FaultFs { shared: Arc::new(Mutex::new(image)) }
    }

    /// A copy of the running state (current bytes, pending writes and all), without locks and
    /// with no crash planned. For forking one scenario prefix into many crash runs.
    #[must_use]
    pub fn fork(&self) -> FaultFs {
        let st = self.state();
        let copy = State {
            files: st.files.clone(),
            nodes: st.nodes.clone(),
            dirs: st.dirs.clone(),
            points: st.points,
            record_trace: st.record_trace,
            trace: st.trace.clone(),
            ..State::default()
        };
        FaultFs { shared: Arc::new(Mutex::new(copy)) }
    }
}

/// The bytes of `file` that survive a power loss under `mode`.
fn survivors(file: &FileData, mode: CrashMode, rng: &mut SplitMix) -> Vec<u8> {
    let mut bytes = file.durable.clone();
    if mode == CrashMode::SyncedOnly {
        return bytes;
    }
    let torn = if mode == CrashMode::TornWrite {
        let candidates: Vec<usize> = file
            .pending
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p {
                Pending::Write { offset, bytes } if sector_cuts(*offset, bytes.len() as u64).next().is_some() => {
                    Some(i)
                }
                _ => None,
            })
            .collect();
        if candidates.is_empty() { None } else { Some(candidates[rng.below(candidates.len() as u64) as usize]) }
    } else {
        None
    };
    for (i, p) in file.pending.iter().enumerate() {
        match p {
            Pending::Write { offset, bytes: data } if torn == Some(i) => {
                let cuts: Vec<u64> = sector_cuts(*offset, data.len() as u64).collect();
                let keep = cuts[rng.below(cuts.len() as u64) as usize] as usize;
                write_at(&mut bytes, *offset, &data[..keep]);
            }
            Pending::Write { offset, bytes: data } => {
                if rng.coin() {
                    write_at(&mut bytes, *offset, data);
                } else if mode == CrashMode::ZeroExtend && rng.coin() {
                    let end = offset + data.len() as u64;
                    if (bytes.len() as u64) < end {
                        resize(&mut bytes, end);
                    }
                }
            }
            Pending::SetLen(len) => {
                if rng.coin() {
                    resize(&mut bytes, *len);
                }
            }
        }
    }
    bytes
}

/// An open file: a node of the shared state, which outlives a rename or remove of its path.
struct FaultFile {
    shared: Arc<Mutex<State>>,
    id: usize,
    path: PathBuf,
}

impl FaultFile {
    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl VfsFile for FaultFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let st = self.state();
        let data = &st.nodes[self.id].current;
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let end = start.checked_add(buf.len()).ok_or(io::ErrorKind::UnexpectedEof)?;
        if end > data.len() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file (FaultFs)"));
        }
        buf.copy_from_slice(&data[start..end]);
        Ok(())
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut st = self.state();
        let kind = PointKind::Write { offset, len: buf.len() as u64 };
        let at_crash_point = !st.crashed && st.crash_at == Some(st.points);
        if let Err(e) = st.point(&self.path, kind) {
            // The write at the crash point may leave a torn prefix behind before the power goes.
            if at_crash_point
                && let Some(seed) = st.torn_seed
                && !buf.is_empty()
            {
                let mut rng = SplitMix(seed);
                let cuts: Vec<u64> = sector_cuts(offset, buf.len() as u64).collect();
                let keep = if cuts.is_empty() {
                    rng.below(buf.len() as u64) as usize
                } else {
                    cuts[rng.below(cuts.len() as u64) as usize] as usize
                };
                if keep > 0 {
                    let file = &mut st.nodes[self.id];
                    write_at(&mut file.current, offset, &buf[..keep]);
                    file.pending.push(Pending::Write { offset, bytes: buf[..keep].to_vec() });
                }
            }
            return Err(e);
        }
        let file = &mut st.nodes[self.id];
        write_at(&mut file.current, offset, buf);
        file.pending.push(Pending::Write { offset, bytes: buf.to_vec() });
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut st = self.state();
        st.point(&self.path, PointKind::Sync)?;
        let file = &mut st.nodes[self.id];
        file.durable.clone_from(&file.current);
        file.pending.clear();
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.state().nodes[self.id].current.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.state();
        st.point(&self.path, PointKind::SetLen { len })?;
        let file = &mut st.nodes[self.id];
        resize(&mut file.current, len);
        file.pending.push(Pending::SetLen(len));
        Ok(())
    }
}

/// Held while a directory is locked; dropping it releases the lock.
struct FaultLock {
    shared: Arc<Mutex<State>>,
    dir: PathBuf,
}

impl DirLock for FaultLock {}

impl Drop for FaultLock {
    fn drop(&mut self) {
        let mut st = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        st.locks.remove(&self.dir);
    }
}

impl Vfs for FaultFs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn VfsFile>> {
        let mut st = self.state();
        let id = if let Some(&id) = st.files.get(path) {
            id
        } else {
            if !create || !st.parent_exists(path) {
                return Err(not_found(path));
            }
            st.point(path, PointKind::Create)?;
            let id = st.nodes.len();
            st.nodes.push(FileData::default());
            st.files.insert(path.to_path_buf(), id);
            id
        };
        Ok(Arc::new(FaultFile { shared: Arc::clone(&self.shared), id, path: path.to_path_buf() }))
    }

    fn exists(&self, path: &Path) -> bool {
        let st = self.state();
        st.files.contains_key(path) || st.dirs.contains(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.state();
        if !st.files.contains_key(from) || !st.parent_exists(to) {
            return Err(not_found(from));
        }
        st.point(from, PointKind::Rename)?;
        let id = st.files.remove(from).expect("checked above");
        st.files.insert(to.to_path_buf(), id);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut st = self.state();
        if !st.files.contains_key(path) {
            return Ok(());
        }
        st.point(path, PointKind::Remove)?;
        st.files.remove(path);
        Ok(())
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.state().add_dirs(path);
        Ok(())
    }

    fn lock_dir(&self, dir: &Path) -> Result<Box<dyn DirLock>, LockError> {
        let mut st = self.state();
        if !st.dirs.contains(dir) {
            return Err(LockError::Io(not_found(dir)));
        }
        if !st.locks.insert(dir.to_path_buf()) {
            return Err(LockError::Held(Some(std::process::id())));
        }
        Ok(Box::new(FaultLock { shared: Arc::clone(&self.shared), dir: dir.to_path_buf() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn setup() -> (FaultFs, Arc<dyn VfsFile>) {
        let fs = FaultFs::new();
        fs.create_dir_all(&p("/d")).unwrap();
        let f = fs.open(&p("/d/f"), true).unwrap();
        (fs, f)
    }

    #[test]
    fn synced_bytes_survive_and_unsynced_do_not() {
        let (fs, f) = setup();
        f.write_all_at(b"hello", 0).unwrap();
        f.sync_data().unwrap();
        f.write_all_at(b"world", 5).unwrap();
        assert_eq!(fs.read(&p("/d/f")).unwrap(), b"helloworld");
        let image = fs.crash_image(CrashMode::SyncedOnly, 1);
        assert_eq!(image.read(&p("/d/f")).unwrap(), b"hello");
        assert_eq!(fs.points(), 4, "create, write, sync, write");
    }

    #[test]
    fn random_subset_keeps_some_writes() {
        let (fs, f) = setup();
        for i in 0..8u8 {
            f.write_all_at(&[i + 1], u64::from(i)).unwrap();
        }
        let mut seen = BTreeSet::new();
        for seed in 0..64 {
            let bytes = fs.crash_image(CrashMode::RandomSubset, seed).read(&p("/d/f")).unwrap();
            seen.insert(bytes.len());
            for (i, &b) in bytes.iter().enumerate() {
                assert!(b == 0 || b == i as u8 + 1);
            }
        }
        assert!(seen.len() > 2, "different seeds keep different writes: {seen:?}");
    }

    #[test]
    fn torn_write_is_cut_at_a_sector_boundary() {
        let (fs, f) = setup();
        f.write_all_at(&[7u8; 2048], 100).unwrap();
        for seed in 0..32 {
            let bytes = fs.crash_image(CrashMode::TornWrite, seed).read(&p("/d/f")).unwrap();
            assert!([512, 1024, 1536, 2048].contains(&bytes.len()), "cut at {}", bytes.len());
            assert!(bytes[100..].iter().all(|&b| b == 7));
        }
    }

    #[test]
    fn zero_extend_may_leave_zeros() {
        let (fs, f) = setup();
        f.write_all_at(&[7u8; 100], 0).unwrap();
        let lens: BTreeSet<Vec<u8>> =
            (0..64).map(|s| fs.crash_image(CrashMode::ZeroExtend, s).read(&p("/d/f")).unwrap()).collect();
        assert!(lens.contains(&vec![0u8; 100]) && lens.contains(&vec![7u8; 100]) && lens.contains(&vec![]));
    }

    #[test]
    fn crash_after_fails_the_nth_point_and_all_later() {
        let (fs, f) = setup();
        fs.crash_after(2);
        f.write_all_at(b"a", 0).unwrap();
        assert!(f.sync_data().is_err());
        assert!(f.write_all_at(b"b", 1).is_err());
        assert!(fs.crashed());
        assert_eq!(fs.crash_point().unwrap().kind, PointKind::Sync);
        assert_eq!(fs.read(&p("/d/f")).unwrap(), b"a");
        assert!(f.set_len(0).is_err());
        assert!(fs.rename(&p("/d/f"), &p("/d/g")).is_err());
        assert!(fs.open(&p("/d/new"), true).is_err());
        // Reads still work; the image keeps only what was synced.
        let mut buf = [0u8; 1];
        f.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(fs.crash_image(CrashMode::SyncedOnly, 0).read(&p("/d/f")).unwrap(), b"");
    }

    #[test]
    fn torn_crash_write_leaves_a_prefix() {
        let (fs, f) = setup();
        fs.crash_after_torn(1, 3);
        assert!(f.write_all_at(&[9u8; 1500], 0).is_err());
        let now = fs.read(&p("/d/f")).unwrap();
        assert!(now.len() == 512 || now.len() == 1024, "{}", now.len());
        assert_eq!(fs.pending(&p("/d/f")), 1);
    }

    #[test]
    fn rename_and_remove_are_durable_and_handles_follow_the_node() {
        let (fs, f) = setup();
        f.write_all_at(b"x", 0).unwrap();
        fs.rename(&p("/d/f"), &p("/d/g")).unwrap();
        f.write_all_at(b"y", 1).unwrap();
        f.sync_data().unwrap();
        let image = fs.crash_image(CrashMode::SyncedOnly, 0);
        assert!(!image.exists(&p("/d/f")));
        assert_eq!(image.read(&p("/d/g")).unwrap(), b"xy");
        fs.remove(&p("/d/g")).unwrap();
        fs.remove(&p("/d/g")).unwrap();
        assert!(!fs.exists(&p("/d/g")));
        assert!(fs.open(&p("/d/g"), false).is_err());
    }

    #[test]
    fn set_len_is_pending_until_synced() {
        let (fs, f) = setup();
        f.write_all_at(&[1u8; 10], 0).unwrap();
        f.sync_data().unwrap();
        f.set_len(4).unwrap();
        assert_eq!(f.len().unwrap(), 4);
        assert_eq!(fs.crash_image(CrashMode::SyncedOnly, 0).read(&p("/d/f")).unwrap().len(), 10);
        f.sync_data().unwrap();
        assert_eq!(fs.crash_image(CrashMode::SyncedOnly, 0).read(&p("/d/f")).unwrap().len(), 4);
    }

    #[test]
    fn lock_is_exclusive_until_dropped() {
        let (fs, _f) = setup();
        let guard = fs.lock_dir(&p("/d")).unwrap();
        match fs.lock_dir(&p("/d")) {
            Err(LockError::Held(Some(pid))) => assert_eq!(pid, std::process::id()),
            other => panic!("expected Held, got {:?}", other.map(|_| ())),
        }
        drop(guard);
        assert!(fs.lock_dir(&p("/d")).is_ok());
        assert!(matches!(fs.lock_dir(&p("/missing")), Err(LockError::Io(_))));
    }

    #[test]
    fn open_without_create_or_parent_fails() {
        let fs = FaultFs::new();
        assert_eq!(fs.open(&p("/d/f"), false).err().unwrap().kind(), io::ErrorKind::NotFound);
        assert!(fs.open(&p("/d/f"), true).is_err(), "parent directory is missing");
        let mut buf = [0u8; 4];
        fs.create_dir_all(&p("/d")).unwrap();
        let f = fs.open(&p("/d/f"), true).unwrap();
        assert_eq!(f.read_exact_at(&mut buf, 0).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn trace_names_each_point() {
        let (fs, f) = setup();
        fs.record_trace(true);
        f.write_all_at(b"ab", 3).unwrap();
        f.sync_data().unwrap();
        let trace = fs.trace();
        assert_eq!(trace.len(), 2);
        assert_eq!(trace[0].kind, PointKind::Write { offset: 3, len: 2 });
        assert_eq!(trace[1].index, 2);
        assert!(trace[1].to_string().contains("Sync"));
    }
}
