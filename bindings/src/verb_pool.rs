//! Threads that run the JSON verbs. A write verb holds its thread until its group is durable, so
//! the threads that serve verbs cap how many writes can share one fsync: libuv's pool has four,
//! and with eight agents writing at once it made groups of at most four. This pool grows a thread
//! whenever every thread is busy (up to `MAX_THREADS`) and lets one go after `IDLE_EXIT` unused.
//!
//! A job that is about to answer calls `finishing()` first, so its thread counts as free before
//! JavaScript can see the answer and ask again: otherwise a caller making one call after another
//! found the thread still busy and started a new one, and calls rotated over several threads.
//! A thread is only woken (a futex syscall) when one is asleep and not already woken for a job,
//! and the one woken is the last to fall asleep: its stack, allocator pages and memos are the
//! warmest, and threads left unused after a burst (the load that started them) time out.
//!
//! Hand-written rather than a crate: `threadpool` has a fixed size, which is the cap this removes,
//! and a tokio runtime's blocking pool adds a hop through its scheduler to every call, which the
//! one-at-a-time path would pay.

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send>;

/// Enough for every connection of a busy node to have a write in flight; more waits its turn.
const MAX_THREADS: usize = 256;
/// How long an unused thread stays for the next call before it ends.
const IDLE_EXIT: Duration = Duration::from_secs(10);

struct State {
    jobs: VecDeque<Job>,
    /// Threads without a job: asleep, or about to look at `jobs` before sleeping.
    idle: usize,
    /// Threads asleep and not yet woken, the last to fall asleep last.
    sleepers: Vec<Sleeper>,
    /// Threads alive.
    threads: usize,
}

/// A pool thread parked in `work` until a `spawn` wakes it.
struct Sleeper {
    thread: Thread,
    /// Set by the thread before it parks, cleared under the lock by the `spawn` that wakes it.
    waiting: Arc<AtomicBool>,
}

static STATE: Mutex<State> = Mutex::new(State { jobs: VecDeque::new(), idle: 0, sleepers: Vec::new(), threads: 0 });

thread_local! {
    /// Set on a pool thread while it runs a job that has not called `finishing()`.
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

// A job never runs under the lock and jobs catch their own panics, so a poisoned lock still
// guards consistent state.
fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `job` on a pool thread, starting one if every thread is busy.
pub fn spawn(job: impl FnOnce() + Send + 'static) {
    let mut s = lock();
    s.jobs.push_back(Box::new(job));
    // Each idle thread takes one queued job before it sleeps or when it wakes: start a thread for
    // any job beyond them.
    if s.jobs.len() > s.idle && s.threads < MAX_THREADS {
        if thread::Builder::new().name("cairn-verb".into()).spawn(work).is_ok() {
            s.threads += 1;
        } else if s.threads == 0 {
            // No thread will ever take it: dropping the job rejects its promise (see `Reply`).
            let job = s.jobs.pop_back();
            drop(s);
            drop(job);
            return;
        }
    }
    // A thread that is idle but awake (sleepers already woken included) looks at `jobs` before it
    // sleeps: wake a sleeper only when the jobs outnumber those, and the warmest (the last asleep).
    let awake_idle = s.idle - s.sleepers.len();
    let wake = if s.jobs.len() > awake_idle { s.sleepers.pop() } else { None };
    if let Some(sleeper) = &wake {
        sleeper.waiting.store(false, Ordering::Release);
    }
    drop(s);
    if let Some(sleeper) = wake {
        sleeper.thread.unpark();
    }
}

/// Called by a job on a pool thread just before it answers: its thread counts as idle from here,
/// so a call JavaScript makes on seeing the answer does not start another thread. The job must
/// do nothing long after this. Anywhere else (the writer or syncer thread answering a write) it
/// does nothing.
pub fn finishing() {
    if BUSY.replace(false) {
        lock().idle += 1;
    }
}

fn work() {
    let waiting = Arc::new(AtomicBool::new(false));
    let mut s = lock();
    // A new thread is counted busy (see `spawn`) until it finds no job.
    let mut idle = false;
    loop {
        if let Some(job) = s.jobs.pop_front() {
            if idle {
                s.idle -= 1;
            }
            drop(s);
            BUSY.set(true);
            // Jobs catch their own panics; this keeps the counts true if one ever does not (its
            // `Reply`, dropped by the unwinding, rejects with `STORE_PANIC`).
            let _ = catch_unwind(AssertUnwindSafe(job));
            // Counted idle already when the job called `finishing()`.
            let counted = !BUSY.replace(false);
            s = lock();
            if !counted {
                s.idle += 1;
            }
            idle = true;
            continue;
        }
        if !idle {
            s.idle += 1;
            idle = true;
        }
        waiting.store(true, Ordering::Relaxed);
        s.sleepers.push(Sleeper { thread: thread::current(), waiting: waiting.clone() });
        drop(s);
        let deadline = Instant::now() + IDLE_EXIT;
        while waiting.load(Ordering::Acquire) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            thread::park_timeout(left);
        }
        s = lock();
        // Still waiting under the lock: no `spawn` woke it, so it timed out and leaves the
        // sleepers itself (a wake-up popped it already otherwise).
        if waiting.load(Ordering::Relaxed) {
            s.sleepers.retain(|w| !Arc::ptr_eq(&w.waiting, &waiting));
            if s.jobs.is_empty() {
                s.idle -= 1;
                s.threads -= 1;
                return;
            }
        }
    }
}
