//! The facts stored between two ends under one type, as an import call matches its fact records
//! against them (`import.rs`: the same fact stored here already is reused, not stored twice).
//! Each pair is read once a call, when the call first meets it, and kept true as the call stores
//! facts of it. Read once per record, a pair of many versions cost the square of them: a status
//! replaced and restored 2,000 times (each restore keeps the earlier life as an ended copy) took
//! 3.2 s to import, a fact revised 2,000 times 4.1 s, 4× each time the revisions doubled. Nothing
//! else in the call's fact phase changes what a match reads (ends, type, times, `version_of`):
//! entities come before facts, documents after, and merging provenance changes only provenance.
//!
//! Read once a call, a pair was still read once per page: importing the pages of a fact revised
//! 20,000 times took 2.8 s, each page slower than the one before (10 ms → 28 ms a page; a
//! status replaced 20,000 times 4.6 ms → 50 ms, 3.0 s). So what the calls of an import know of
//! their pairs is kept between them (`Kept`, in the store's memory): the next call takes it up
//! as it is when no write was committed since the call that left it (its transaction follows
//! that one's), and reads its pairs afresh otherwise. A pair of few facts costs one short read
//! again: only pairs of many are kept, and no more than `KEPT_MOST` facts in all.

use super::edge_reads;
use super::edge_view::EdgeView;
use super::part::Partition;
use crate::error::Result;
use crate::write::WriteTxn;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// What makes a stored fact the one a record describes: a live one is the live fact, whenever it
/// was recorded; an ended one is the version ended and recorded at the same times. Either way a
/// version matches a version of the same fact, a fact a fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Version {
    Live { version_of: Option<u64> },
    Ended { ended_at: i64, recorded_at: i64, version_of: Option<u64> },
}

impl Version {
    pub(super) fn of(recorded_at: i64, ended_at: Option<i64>, version_of: Option<u64>) -> Self {
        match ended_at {
            None => Version::Live { version_of },
            Some(ended_at) => Version::Ended { ended_at, recorded_at, version_of },
        }
    }
}

/// Local `from`, `to` and the folded type.
type Pair = (u64, u64, String);

/// Per pair the call met, the first stored fact (lowest id, as a scan in id order finds it) of
/// each `Version`.
#[derive(Default)]
pub(crate) struct Pairs(HashMap<Pair, HashMap<Version, u64>>);

/// Facts a pair holds from which it is kept between calls: reading fewer again costs one short
/// read of an adjacency list.
const KEPT_FROM: usize = 64;

/// Facts kept between calls in all, about 40 bytes each (a million facts' import keeps the few
/// pairs that were revised or replaced thousands of times, not every pair).
const KEPT_MOST: usize = 1 << 20;

/// The pairs an import call of `part` knew when its transaction `txn` committed (or, had it
/// written nothing, when the transaction before it did).
pub(crate) struct Kept {
    part: Partition,
    txn: u64,
    pairs: Pairs,
}

impl Kept {
    /// `pairs` as the call of `part` left them, which the store committed as transaction `txn`;
    /// `None` when nothing is worth keeping.
    pub(crate) fn of(part: &Partition, txn: u64, mut pairs: Pairs) -> Option<Kept> {
        pairs.0.retain(|_, versions| versions.len() >= KEPT_FROM);
        let facts: usize = pairs.0.values().map(HashMap::len).sum();
        (facts > 0 && facts <= KEPT_MOST).then(|| Kept { part: part.clone(), txn, pairs })
    }

    /// What a call of `part` in transaction `tx` starts from: the kept pairs when they are the
    /// store's now (no transaction committed since theirs, and the same partition), else none.
    pub(crate) fn resume(kept: Option<Kept>, tx: &WriteTxn<'_>, part: &Partition) -> Pairs {
        match kept {
            Some(k) if k.txn.checked_add(1) == Some(tx.txn()) && k.part == *part => k.pairs,
            _ => Pairs::default(),
        }
    }
}

impl Pairs {
    /// The stored fact of `pair` that is `version`, if any; the pair is read the first time.
    pub(super) fn find(
        &mut self,
        tx: &mut WriteTxn<'_>,
        part: &Partition,
        (from, to, folded_type): (u64, u64, &str),
        version: Version,
    ) -> Result<Option<u64>> {
        let pair = match self.0.entry((from, to, folded_type.to_owned())) {
            Entry::Occupied(read) => read.into_mut(),
            Entry::Vacant(slot) => {
                let stored: Vec<EdgeView> = edge_reads::of_type(tx, part, (from, to), folded_type)?;
                let mut first = HashMap::with_capacity(stored.len());
                for have in stored {
                    first.entry(Version::of(have.recorded_at, have.ended_at, have.version_of)).or_insert(have.id);
                }
                slot.insert(first)
            }
        };
        Ok(pair.get(&version).copied())
    }

    /// Notes that fact `id`, just stored, is `version` of `pair`: ids only grow, so an earlier
    /// fact of the same `Version` stays the one found.
    pub(super) fn stored(&mut self, (from, to, folded_type): (u64, u64, &str), version: Version, id: u64) {
        if let Some(pair) = self.0.get_mut(&(from, to, folded_type.to_owned())) {
            pair.entry(version).or_insert(id);
        }
    }
}
