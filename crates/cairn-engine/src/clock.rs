//! The store's clock: the times calls are stamped with never run backwards, across restarts too.
//!
//! A call brings the wall clock of the node (`Caller::now`). A clock stepped back (a VM restored,
//! NTP correcting a clock that ran ahead, a board without a battery-backed clock booting at the
//! time it last shut down) would date a later write before an earlier one: `handoff_resume`
//! returned the older capsule as the newest, a note's new version was dated before its first,
//! and `as_of` read versions out of order. So the store keeps a high-water mark, the latest time
//! it has handed out, and stamps a call with the later of the two. The mark is logged in the
//! transaction of every write that moved it, so a store reopened by a node whose clock is behind
//! starts from the mark, not from that clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use crate::error::{Error, Result};
use crate::write::WriteTxn;

/// The tree that holds the mark: one key (empty), the time as 8 bytes big-endian.
pub(crate) const TREE: &str = "s.clock";

/// The mark, shared by the callers (who stamp) and the writer (who logs it).
#[derive(Debug, Default)]
pub(crate) struct Clock {
    mark: AtomicI64,
}

impl Clock {
    /// A clock starting at the mark stored in `value` (none in a store written before it).
    pub(crate) fn starting_at(value: Option<&[u8]>) -> Result<Arc<Clock>> {
        let mark = match value {
            None => 0,
            Some(bytes) => i64::from_be_bytes(
                bytes.try_into().map_err(|_| Error::corrupt(None, "the store's clock mark is not 8 bytes"))?,
            ),
        };
        Ok(Arc::new(Clock { mark: AtomicI64::new(mark) }))
    }

    /// The time to stamp a call that brings `now` with: `now`, or the mark when `now` is behind it.
    pub(crate) fn stamp(&self, now: i64) -> i64 {
        self.mark.fetch_max(now, Ordering::AcqRel).max(now)
    }

    /// The latest time handed out.
    pub(crate) fn mark(&self) -> i64 {
        self.mark.load(Ordering::Acquire)
    }
}

/// The writer's side: what it last put in a transaction, so that only a write that moved the
/// mark carries it.
#[derive(Debug, Default)]
pub(crate) struct ClockLog {
    logged: i64,
}

impl ClockLog {
    pub(crate) fn starting_at(clock: &Clock) -> ClockLog {
        ClockLog { logged: clock.mark() }
    }

    /// Puts the mark in `tx` (a write's transaction, about to commit) when it moved since the last
    /// one put; every call stamped before `tx` began is then covered by a transaction that
    /// commits no later than `tx`. Returns the mark to `record` once `tx` committed.
    pub(crate) fn put(&self, clock: &Clock, tx: &mut WriteTxn<'_>) -> Result<Option<i64>> {
        let mark = clock.mark();
        if mark <= self.logged {
            return Ok(None);
        }
        tx.put(TREE, &[], &mark.to_be_bytes())?;
        Ok(Some(mark))
    }

    /// `tx` with the mark `put` returned has committed.
    pub(crate) fn record(&mut self, mark: Option<i64>) {
        if let Some(mark) = mark {
            self.logged = self.logged.max(mark);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_is_never_before_one_handed_out_earlier() {
        let clock = Clock::starting_at(Some(&1_000i64.to_be_bytes())).unwrap();
        assert_eq!(clock.stamp(900), 1_000, "a clock behind the stored mark");
        assert_eq!(clock.stamp(1_500), 1_500);
        assert_eq!(clock.stamp(1_200), 1_500, "a clock stepped back");
        assert_eq!(clock.mark(), 1_500);
    }

    #[test]
    fn a_store_reopened_by_a_clock_behind_stamps_from_its_last_write() {
        use crate::vfs::fault::{CrashMode, FaultFs};
        let open = |fs: &FaultFs| {
            crate::Store::open("/s", crate::StoreOptions { vfs: Arc::new(fs.clone()), ..Default::default() }).unwrap()
        };
        let fs = FaultFs::new();
        let store = open(&fs);
        assert_eq!(store.stamp(2_000), 2_000);
        store.write(|tx| tx.put("t", b"k", b"written at 2000")).unwrap();
        // Stamped, but no write stored it: nothing dated 5000 exists to stay after.
        assert_eq!(store.stamp(5_000), 5_000);
        store.write(|_| Ok(())).unwrap();
        store.close().unwrap();
        let store = open(&fs);
        assert_eq!(store.stamp(1_000), 2_000, "the clock behind after the restart");
        assert_eq!(store.stamp(3_000), 3_000);
        store.write(|tx| tx.put("t", b"k", b"written at 3000")).unwrap();
        // Power lost with the write only in the log: the mark comes back from it.
        fs.crash_now();
        let _ = store.close();
        let store = open(&fs.crash_image(CrashMode::SyncedOnly, 0));
        assert_eq!(store.get("t", b"k").unwrap().as_deref(), Some(&b"written at 3000"[..]));
        assert_eq!(store.stamp(1_000), 3_000);
    }

    #[test]
    fn a_mark_of_the_wrong_size_is_corruption() {
        assert!(Clock::starting_at(Some(&[1, 2, 3])).is_err());
        assert_eq!(Clock::starting_at(None).unwrap().mark(), 0);
    }
}
