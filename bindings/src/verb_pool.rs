//! Threads that run the JSON verbs. A write verb holds its thread until its group is durable, so
//! the threads that serve verbs cap how many writes can share one fsync: libuv's pool has four,
//! and with eight agents writing at once it made groups of at most four. This pool grows a thread
//! whenever every thread is busy (up to `MAX_THREADS`) and lets one go after `IDLE_EXIT` unused.
//!
//! Hand-written rather than a crate: `threadpool` has a fixed size, which is the cap this removes,
//! and a tokio runtime's blocking pool adds a hop through its scheduler to every call, which the
//! one-at-a-time path would pay.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

/// Enough for every connection of a busy node to have a write in flight; more waits its turn.
const MAX_THREADS: usize = 256;
/// How long an unused thread stays for the next call before it ends.
const IDLE_EXIT: Duration = Duration::from_secs(10);

struct State {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job.
    idle: usize,
    /// Threads alive.
    threads: usize,
}

static STATE: Mutex<State> = Mutex::new(State { jobs: VecDeque::new(), idle: 0, threads: 0 });
static READY: Condvar = Condvar::new();

// A job never runs under the lock and jobs catch their own panics, so a poisoned lock still
// guards consistent state.
fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `job` on a pool thread, starting one if every thread is busy.
pub fn spawn(job: impl FnOnce() + Send + 'static) {
    let mut s = lock();
    s.jobs.push_back(Box::new(job));
    // Each idle thread takes one queued job when it wakes: start a thread for any job beyond them.
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
    drop(s);
    READY.notify_one();
}

fn work() {
    let mut s = lock();
    loop {
        if let Some(job) = s.jobs.pop_front() {
            drop(s);
            job();
            s = lock();
            continue;
        }
        s.idle += 1;
        let (guard, wait) = READY.wait_timeout(s, IDLE_EXIT).unwrap_or_else(PoisonError::into_inner);
        s = guard;
        s.idle -= 1;
        if wait.timed_out() && s.jobs.is_empty() {
            s.threads -= 1;
            return;
        }
    }
}
