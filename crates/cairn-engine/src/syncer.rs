//! The log syncer: the thread that makes logged groups durable, publishes them and acknowledges
//! their callers, so the writer thread applies the next group while the last one's `fdatasync`
//! runs (a pipelined group commit).
//!
//! The writer appends a group's records to the log, then hands the group here. The syncer takes
//! every group handed to it so far, syncs the log once (one `fdatasync` covers every record
//! appended before it started), then in order publishes the newest of their versions to readers
//! and acknowledges their callers. So a reader never sees a group before it is durable, and a
//! caller is never answered before its write, and every write its result may depend on, is
//! durable. A failed sync stops the store: that batch and every later one fail, none of them
//! acknowledged as durable.
//!
//! A lone write with much to merge is handed over before its merge (`Group::merging`): its
//! record is logged first, the syncer syncs it while the writer merges its changes into their
//! trees, and the syncer publishes the version the writer leaves once both are done.

use crate::error::{Error, Result};
use crate::snapshot::{Registry, Version};
use crate::vfs::VfsFile;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A caller's acknowledgement.
pub(crate) type Done = Box<dyn FnOnce(Result<u64>) + Send>;

/// The counters the syncer keeps current (the store's `Stats`).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) commits: AtomicU64,
    pub(crate) groups: AtomicU64,
    pub(crate) checkpoints: AtomicU64,
    pub(crate) wal_bytes: AtomicU64,
    pub(crate) page_count: AtomicU64,
    pub(crate) free_pages: AtomicU64,
}

/// Gauges as of a group's end, published with its version.
#[derive(Clone, Copy)]
pub(crate) struct Gauges {
    pub(crate) page_count: u64,
    pub(crate) free_pages: u64,
    pub(crate) wal_bytes: u64,
}

impl Counters {
    pub(crate) fn set(&self, g: Gauges) {
        self.page_count.store(g.page_count, Ordering::Relaxed);
        self.free_pages.store(g.free_pages, Ordering::Relaxed);
        self.wal_bytes.store(g.wal_bytes, Ordering::Relaxed);
    }
}

/// A group handed to the syncer.
pub(crate) struct Group {
    /// The state after the group, to publish once it is durable; `None` when the group logged
    /// nothing (its callers still wait for the groups before it, whose state they saw).
    pub(crate) version: Option<(Arc<Version>, Gauges)>,
    /// Transactions the group logged.
    pub(crate) commits: u64,
    /// Each caller with what to answer once the group is durable.
    pub(crate) acks: Vec<(Done, Result<u64>)>,
    /// Set when the group is handed over before its changes are merged (`version` is `None`):
    /// the writer leaves the version here once merged, and the syncer publishes it after the sync.
    pub(crate) merging: Option<Arc<Merging>>,
}

/// A merged group's version, or why its merge failed.
pub(crate) type Merged = std::result::Result<(Arc<Version>, Gauges), String>;

/// The state after a group whose merge runs while its log record syncs: what the writer leaves
/// for the syncer (the version, or why the merge failed).
#[derive(Default)]
pub(crate) struct Merging {
    merged: Mutex<Option<Merged>>,
    done: Condvar,
}

impl Merging {
    /// The writer's part: the merge's outcome.
    pub(crate) fn leave(&self, merged: Merged) {
        *self.merged.lock().expect("merging lock") = Some(merged);
        self.done.notify_one();
    }

    /// The syncer's part: waits for the writer to finish the merge.
    fn take(&self) -> Merged {
        let mut merged = self.merged.lock().expect("merging lock");
        loop {
            if let Some(m) = merged.take() {
                return m;
            }
            merged = self.done.wait(merged).expect("merging lock");
        }
    }
}

#[derive(Default)]
struct Progress {
    /// Groups finished (acknowledged or failed).
    finished: u64,
    /// Groups synced and published (or failed), their callers perhaps not all answered yet.
    synced: u64,
    /// Why the store stopped, once a sync failed.
    failed: Option<String>,
    /// The writer waits to hand over its open group: call `wake` when this batch is synced.
    wake_wanted: bool,
}

/// The writer's handle on the syncer thread.
pub(crate) struct Syncer {
    queue: Option<Sender<Group>>,
    thread: Option<JoinHandle<()>>,
    progress: Arc<(Mutex<Progress>, Condvar)>,
    /// Groups handed over.
    sent: u64,
    /// What the thread works with, for `finish_here`.
    log: Arc<dyn VfsFile>,
    registry: Arc<Registry>,
    counters: Arc<Counters>,
}

impl Syncer {
    /// Starts the thread that syncs `log`.
    /// Starts the thread that syncs `log`; it calls `wake` when it is free again after the writer
    /// asked (`idle_or_wake`).
    pub(crate) fn start(
        log: Arc<dyn VfsFile>,
        registry: Arc<Registry>,
        counters: Arc<Counters>,
        wake: Box<dyn Fn() + Send>,
    ) -> Result<Syncer> {
        let (tx, rx) = mpsc::channel();
        let progress = Arc::new((Mutex::new(Progress::default()), Condvar::new()));
        let p = progress.clone();
        let (l, r, c) = (log.clone(), registry.clone(), counters.clone());
        let thread = std::thread::Builder::new()
            .name("cairn-syncer".into())
            .spawn(move || run(&rx, &*l, &r, &c, &p, &*wake))
            .map_err(|e| Error::io("starting the log syncer thread", e))?;
        Ok(Syncer { queue: Some(tx), thread: Some(thread), progress, sent: 0, log, registry, counters })
    }

    /// Makes `group` durable, publishes it and answers its callers on this thread, as the syncer
    /// thread would, when nothing is in the syncer's hands (`busy` is false; only the writer hands
    /// groups over, so it stays so). For a lone write with nothing else waiting this spares the
    /// two wake-ups of a hand-over (the syncer's, then the writer's for the next write), tens of
    /// microseconds each on a virtual machine, with no sync to overlap anyway.
    pub(crate) fn finish_here(&self, group: Group) {
        debug_assert!(!self.busy(), "finish_here while the syncer holds groups");
        finish(vec![group], &*self.log, &self.registry, &self.counters, &self.progress, || {});
    }

    /// Whether groups handed over are not finished yet.
    pub(crate) fn busy(&self) -> bool {
        self.progress.0.lock().expect("syncer lock").finished < self.sent
    }

    /// Whether every group handed over is synced, so the syncer takes the next group as soon as
    /// it has answered their callers; if not, the syncer calls its `wake` once it is (checked
    /// and asked under one lock, so the wake-up cannot be missed).
    pub(crate) fn idle_or_wake(&self) -> bool {
        let mut p = self.progress.0.lock().expect("syncer lock");
        if p.synced >= self.sent {
            return true;
        }
        p.wake_wanted = true;
        false
    }

    /// Hands a group over. If the thread is gone (it cannot be while the writer lives), the
    /// callers are answered with an error.
    pub(crate) fn send(&mut self, group: Group) {
        let Some(queue) = &self.queue else { return fail_all(group.acks, "the log syncer stopped") };
        match queue.send(group) {
            Ok(()) => self.sent += 1,
            Err(mpsc::SendError(group)) => fail_all(group.acks, "the log syncer stopped"),
        }
    }

    /// Waits until every group handed over is finished (before anything that needs the durable
    /// state to be the writer's: a checkpoint, maintenance, close).
    pub(crate) fn drain(&self) {
        let (lock, cv) = &*self.progress;
        let mut p = lock.lock().expect("syncer lock");
        while p.finished < self.sent {
            p = cv.wait(p).expect("syncer lock");
        }
    }

    /// Why a sync failed, if one did.
    pub(crate) fn failed(&self) -> Option<String> {
        self.progress.0.lock().expect("syncer lock").failed.clone()
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn fail_all(acks: Vec<(Done, Result<u64>)>, why: &str) {
    for (done, res) in acks {
        answer(done, res.and_then(|_| Err(Error::Failed(why.to_owned()))));
    }
}

/// Calls a caller's `done`; one that panics must not stop the thread every later group needs.
fn answer(done: Done, res: Result<u64>) {
    let _ = catch_unwind(AssertUnwindSafe(|| done(res)));
}

fn run(
    rx: &Receiver<Group>,
    log: &dyn VfsFile,
    registry: &Registry,
    counters: &Counters,
    progress: &(Mutex<Progress>, Condvar),
    wake: &dyn Fn(),
) {
    while let Ok(first) = rx.recv() {
        let mut groups = vec![first];
        groups.extend(rx.try_iter());
        let n = groups.len() as u64;
        // The writer may end its next group once these are synced: it is logged and handed over
        // while their callers are answered, and synced right after.
        let synced = || {
            let mut p = progress.0.lock().expect("syncer lock");
            p.synced += n;
            if std::mem::take(&mut p.wake_wanted) {
                drop(p);
                wake();
            }
        };
        finish(groups, log, registry, counters, progress, synced);
        let (lock, cv) = progress;
        lock.lock().expect("syncer lock").finished += n;
        cv.notify_all();
    }
}

/// Syncs the log once for `groups` (in txn order), then publishes the newest of their versions,
/// calls `on_synced` and answers their callers; a failed sync (or an earlier one) fails them all and
/// stops the store.
fn finish(
    mut groups: Vec<Group>,
    log: &dyn VfsFile,
    registry: &Registry,
    counters: &Counters,
    progress: &(Mutex<Progress>, Condvar),
    on_synced: impl FnOnce(),
) {
    let failed = progress.0.lock().expect("syncer lock").failed.clone();
    let synced = match failed {
        Some(why) => Err(why),
        None if groups.iter().any(|g| g.version.is_some() || g.merging.is_some()) => {
            log.sync_data().map_err(|e| Error::io("syncing the log", e).to_string())
        }
        None => Ok(()),
    };
    // A group merged while it synced is published once merged; a merge that failed fails the
    // batch and stops the store, as a failed sync does.
    let synced = synced.and_then(|()| {
        for g in &mut groups {
            if let Some(merging) = g.merging.take() {
                g.version = Some(merging.take()?);
            }
        }
        Ok(())
    });
    match synced {
        Ok(()) => {
            if let Some((version, gauges)) = groups.iter().rev().find_map(|g| g.version.clone()) {
                counters.set(gauges);
                registry.publish(version);
            }
            on_synced();
            for g in groups {
                if g.version.is_some() {
                    counters.commits.fetch_add(g.commits, Ordering::Relaxed);
                    counters.groups.fetch_add(1, Ordering::Relaxed);
                }
                for (done, res) in g.acks {
                    answer(done, res);
                }
            }
        }
        Err(why) => {
            progress.0.lock().expect("syncer lock").failed.get_or_insert_with(|| why.clone());
            on_synced();
            for g in groups {
                fail_all(g.acks, &why);
            }
        }
    }
}
