//! A time limit on a read run on the caller's own thread. Handing a call to another thread and
//! being woken for its answer costs two cross-thread wake-ups, which from Node on the 2-core
//! machines here added about 100 µs to a recall that itself takes about 80 µs at 10k entities.
//! So a binding may try a read where it is called, under a deadline, and run it elsewhere from
//! the start only when it runs out of time.
//!
//! The deadline is checked before every page read (the work of a read is mostly page reads), every
//! so many steps of a loop that reads no pages (`Meter`: matching names over a scope's cached
//! index), and before anything that would wait for the writer or queue a write: a call that gets
//! there is stopped with `Error::Deferred` and has changed nothing. What a read caches for later reads
//! (names, in `knowledge::cache`) it stores only once built, so a stopped read leaves none.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Threads inside `within` now. Page reads on every other thread (the writer's above all) test
/// this one shared counter instead of their thread-local deadline: zero almost always.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// When the read running on this thread under `within` must stop; `None` outside it.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Set once that read was stopped, whatever became of the error after.
    static STOPPED: Cell<bool> = const { Cell::new(false) };
}

/// Resets the thread's deadline when `within` ends, a panic included.
struct Reset(Option<Instant>);

impl Drop for Reset {
    fn drop(&mut self) {
        DEADLINE.set(self.0);
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs `f` on this thread with `limit` to finish in. `None` when it was stopped for running out
/// of time or for reaching a wait (`Error::Deferred`): its answer is void, even if some caller
/// turned that error into a reply, and the call must run again where waiting is fine.
pub fn within<R>(limit: Duration, f: impl FnOnce() -> Result<R>) -> Option<Result<R>> {
    // Counted before the deadline is set: this thread then always sees its own count.
    ACTIVE.fetch_add(1, Ordering::Relaxed);
    let reset = Reset(DEADLINE.replace(Some(Instant::now() + limit)));
    let was_stopped = STOPPED.replace(false);
    let out = f();
    drop(reset);
    let stopped = STOPPED.replace(was_stopped);
    (!stopped).then_some(out)
}

/// Before a page read: fails once the deadline of this thread's `within` has passed.
pub(crate) fn check() -> Result<()> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    match DEADLINE.get() {
        Some(deadline) if Instant::now() >= deadline => stop(),
        _ => Ok(()),
    }
}

/// Steps between two deadline checks of a `Meter`: a few µs of name matching.
const METER_EVERY: u64 = 1 << 12;

/// Counts the steps of a computation that reads no pages and so never meets `check` (found by an
/// audit: matching a subject against a scope's cached names ran 13 s on the event loop), and
/// checks the deadline each time the count passes a multiple of `METER_EVERY`. Once out of time
/// it stays out: the computation stops where it is and its partial answer is void (`within`).
#[derive(Debug, Default)]
pub(crate) struct Meter {
    steps: u64,
    stopped: bool,
}

impl Meter {
    /// Adds `n` steps; `false` once the computation must stop.
    pub(crate) fn tick(&mut self, n: usize) -> bool {
        let before = self.steps;
        self.steps = before.saturating_add(n as u64);
        if !self.stopped && before / METER_EVERY != self.steps / METER_EVERY {
            self.stopped = check().is_err();
        }
        !self.stopped
    }

    /// The steps counted so far.
    #[cfg(test)]
    pub(crate) fn steps(&self) -> u64 {
        self.steps
    }
}

/// Before waiting for another thread or queueing a write: fails inside `within`, always.
pub(crate) fn may_wait() -> Result<()> {
    if ACTIVE.load(Ordering::Relaxed) != 0 && DEADLINE.get().is_some() { stop() } else { Ok(()) }
}

fn stop() -> Result<()> {
    STOPPED.set(true);
    Err(Error::Deferred)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_in_time_keeps_its_answer_and_leaves_no_deadline() {
        assert_eq!(within(Duration::from_secs(5), || check().map(|()| 7)).map(Result::ok), Some(Some(7)));
        assert!(check().is_ok() && may_wait().is_ok(), "no deadline outside `within`");
    }

    #[test]
    fn a_read_past_its_deadline_is_void_even_if_the_error_was_swallowed() {
        let out = within(Duration::ZERO, || {
            let swallowed = check().is_err();
            Ok(swallowed)
        });
        assert!(out.is_none());
        assert!(check().is_ok(), "the deadline ends with `within`");
    }

    #[test]
    fn waiting_is_refused_inside_and_allowed_after() {
        assert!(within(Duration::from_secs(5), may_wait).is_none());
        assert!(may_wait().is_ok());
    }

    #[test]
    fn a_meter_stops_a_loop_past_its_deadline_and_only_there() {
        let count = |limit: Option<Duration>| {
            let mut meter = Meter::default();
            let mut ticks = 0_u64;
            let mut run = || {
                while ticks < 10 * METER_EVERY && meter.tick(1) {
                    ticks += 1;
                }
                Ok(ticks)
            };
            match limit {
                Some(limit) => within(limit, run).map(Result::unwrap),
                None => run().ok(),
            }
        };
        assert_eq!(count(None), Some(10 * METER_EVERY), "no deadline outside `within`");
        assert_eq!(count(Some(Duration::from_secs(60))), Some(10 * METER_EVERY));
        assert_eq!(count(Some(Duration::ZERO)), None, "stopped at its first check, and void");
    }

    #[test]
    fn a_panic_inside_leaves_no_deadline_behind() {
        let caught = std::panic::catch_unwind(|| within(Duration::ZERO, || -> Result<()> { panic!("boom") }));
        assert!(caught.is_err());
        assert!(check().is_ok() && may_wait().is_ok());
    }
}
