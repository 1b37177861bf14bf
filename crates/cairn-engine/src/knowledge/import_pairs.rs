//! The facts stored between two ends under one type, as an import call matches its fact records
//! against them (`import.rs`: the same fact stored here already is reused, not stored twice).
//! Each pair is read once a call, when the call first meets it, and kept true as the call stores
//! facts of it. Read once per record, a pair of many versions cost the square of them: a status
//! replaced and restored 2,000 times (each restore keeps the earlier life as an ended copy) took
//! 3.2 s to import, a fact revised 2,000 times 4.1 s, 4× each time the revisions doubled. Nothing
//! else in the call's fact phase changes what a match reads (ends, type, times, `version_of`):
//! entities come before facts, documents after, and merging provenance changes only provenance.

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
pub(super) struct Pairs(HashMap<Pair, HashMap<Version, u64>>);

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
