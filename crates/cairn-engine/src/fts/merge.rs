//! Segment merging. Each indexing batch writes its postings as a new segment at the end of the
//! partition's key range (an append, whatever the index's size); when the newest `FANOUT` segments
//! share a level they are merged into one segment of the next level, so a partition holds a few
//! segments per level and a query reads a few blocks per term. Every posting is rewritten once per
//! level, as in FTS5's and Lucene's segment merges, instead of a batch touching one leaf per
//! distinct term of one term-major tree.

use std::ops::Bound;

use super::block::{self, Posting};
use super::keys::{POST_TREE, Stats, post_key, post_key_term, prefix_end, segment_prefix};
use crate::text::FastMap;
use crate::{Result, WriteTxn};

/// Segments merged at once: the newest `FANOUT` segments of one level become one of the next.
pub const FANOUT: usize = 16;

/// Merges the newest segments while `FANOUT` of them share a level, updating `stats.segments`
/// (the caller stores `stats`).
pub(super) fn settle(tx: &mut WriteTxn<'_>, prefix: &[u8], stats: &mut Stats) -> Result<()> {
    loop {
        let n = stats.segments.len();
        let Some(tail) = n.checked_sub(FANOUT) else { return Ok(()) };
        let level = stats.segments[n - 1].level;
        if level == u8::MAX || stats.segments[tail..].iter().any(|s| s.level != level) {
            return Ok(());
        }
        merge_newest(tx, prefix, stats.segments[tail].first)?;
        stats.segments.truncate(tail + 1);
        stats.segments[tail].level = level + 1;
    }
}

/// Rewrites every segment from `first` on (the newest ones: nothing follows them in the
/// partition) as one segment named `first`, with one block per term.
fn merge_newest(tx: &mut WriteTxn<'_>, prefix: &[u8], first: u64) -> Result<()> {
    let start = segment_prefix(prefix, first);
    let end = prefix_end(prefix);
    let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let entries = tx.range(POST_TREE, Bound::Included(&start), end)?;
    let mut by_term: FastMap<&[u8], Vec<Posting>> = FastMap::default();
    for (key, value) in &entries {
        let term = post_key_term(prefix, key)?;
        block::decode_into(value, by_term.entry(term).or_default())?;
        // The first segment's keys are overwritten below (each of its terms is in `by_term`).
        if !key.starts_with(&start) {
            tx.erase(POST_TREE, key)?;
        }
    }
    for (term, mut postings) in by_term {
        // A place is in one segment at most, so the union has each place once; blocks from
        // different batches interleave in document order (a re-indexed passage keeps its doc).
        postings.sort_unstable_by_key(|p| (p.doc, p.ordinal));
        tx.put(POST_TREE, &post_key(prefix, first, term), &block::encode(&postings))?;
    }
    Ok(())
}
