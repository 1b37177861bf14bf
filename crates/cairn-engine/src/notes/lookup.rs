//! The read side of the notes index (`index.rs` writes it): the current notes that hold a
//! query's terms or enough of its trigrams, with the features ranking needs. Work goes block by
//! block (`block.rs`): a posting block becomes a 128-bit mask of its slots, the trigram channel
//! counts per slot in bit planes (`slot_counts.rs`), and each doc block is decoded only at the
//! slots that hit, so a common word costs a pass over its blocks rather than a merge of sorted
//! lists per term.

use super::block::{self, block_at, id_in};
use super::index::{DOC, GRAM, Meta, SAMPLE, TERM, TRI_COUNT, decode_count, decode_meta, term_prefix};
use super::search::{Counts, Features, Query, min_grams};
use super::slot_counts::SlotCounts;
use crate::error::Result;
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use crate::varint;

/// A trigram's postings are walked (rather than its blocks read once per candidate block) while
/// they number at most this many times the candidates: a walk decodes every posting, a read
/// descends the tree.
const SCAN_RATIO: u64 = 4;

/// Doc blocks are read in one pass over the tree (rather than looked up one by one) when the
/// blocks that hold hits are at least one in this many of the blocks between the first and
/// the last of them: a pass reads every block on the way, a lookup descends the tree.
const DOC_SCAN_DENSITY: u64 = 4;

/// One note holding a query term or trigram: its id and features.
pub(crate) struct Hit {
    pub id: u64,
    pub features: Features,
}

/// `admit` over notes' metas, remembering its answers: a partition's notes carry few distinct
/// metas (kinds × visibilities × owners), so most are decided by comparing a few bytes.
struct Admit<'a> {
    decide: &'a dyn Fn(&Meta<'_>) -> bool,
    /// Metas decided so far with their answers, at most `REMEMBERED`.
    seen: Vec<(Vec<u8>, bool)>,
}

/// How many distinct metas `Admit` keeps; past that, the rest are decided each time.
const REMEMBERED: usize = 16;

impl<'a> Admit<'a> {
    fn new(admit: &'a dyn Fn(&Meta<'_>) -> bool) -> Self {
        Admit { decide: admit, seen: Vec::new() }
    }

    fn check(&mut self, meta: &[u8]) -> Result<bool> {
        // A byte loop, not `==` on slices: metas are a few bytes, and a `memcmp` call per note
        // cost more than the comparison.
        let same = |m: &[u8]| m.len() == meta.len() && m.iter().zip(meta).all(|(a, b)| a == b);
        if let Some((_, ok)) = self.seen.iter().find(|(m, _)| same(m)) {
            return Ok(*ok);
        }
        let ok = (self.decide)(&decode_meta(meta)?);
        if self.seen.len() < REMEMBERED {
            self.seen.push((meta.to_vec(), ok));
        }
        Ok(ok)
    }
}

/// Every current note holding a query term or trigram that `admit` lets through (it sees each
/// note's `Meta`), in id order (the order candidates keep on ties), with its features.
pub(crate) fn lookup(
    snap: &Snapshot,
    part: &Partition,
    query: &Query,
    admit: &dyn Fn(&Meta<'_>) -> bool,
) -> Result<Vec<Hit>> {
    let grams = lookup_grams(snap, part, query)?;
    // Each term's postings, sorted by id like every posting list.
    let mut terms: Vec<Vec<(u64, u32)>> = Vec::with_capacity(query.terms.len());
    for term in &query.terms {
        let mut list = Vec::new();
        snap.scan_prefix(TERM, &term_prefix(part, term), |k, v| {
            let blk = block_at(k)?;
            for entry in block::entries(v) {
                let (slot, payload) = entry?;
                let tf = varint::get(payload, &mut 0, "a notes term posting")?;
                list.push((id_in(blk, slot), u32::try_from(tf).unwrap_or(u32::MAX)));
            }
            Ok(true)
        })?;
        terms.push(list);
    }
    // The blocks that hold a hit, each with the slots that do, ascending.
    let mut hit_blocks: Vec<(u64, u128)> = grams.iter().map(|g| (g.blk, g.live)).collect();
    for list in &terms {
        for &(id, _) in list {
            let (blk, bit) = (id >> block::BLOCK_BITS, 1u128 << block::slot_of(id));
            match hit_blocks.last_mut() {
                Some((b, mask)) if *b == blk => *mask |= bit,
                _ => hit_blocks.push((blk, bit)),
            }
        }
    }
    hit_blocks.sort_unstable_by_key(|(b, _)| *b);
    hit_blocks.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 |= next.1;
        }
        same
    });
    let mut out = Assemble {
        admit: Admit::new(admit),
        grams: &grams,
        at_gram: 0,
        terms: &terms,
        at_term: vec![0; terms.len()],
        out: Vec::with_capacity(hit_blocks.iter().map(|(_, m)| m.count_ones() as usize).sum()),
    };
    let (Some(&(first, _)), Some(&(last, _))) = (hit_blocks.first(), hit_blocks.last()) else {
        return Ok(Vec::new());
    };
    if (hit_blocks.len() as u64).saturating_mul(DOC_SCAN_DENSITY) > last - first {
        // Dense: one pass over the doc blocks from the first hit block to the last.
        let mut at = 0;
        let start = part.key(&[&first.to_be_bytes()]);
        snap.scan_from(DOC, &start, &part.key(&[]), |k, v| {
            let blk = block_at(k)?;
            while at < hit_blocks.len() && hit_blocks[at].0 < blk {
                at += 1;
            }
            let Some(&(b, mask)) = hit_blocks.get(at) else { return Ok(false) };
            if b == blk {
                out.block(blk, mask, v)?;
            }
            Ok(true)
        })?;
    } else {
        for &(blk, mask) in &hit_blocks {
            snap.get_with(DOC, &part.key(&[&blk.to_be_bytes()]), |v| out.block(blk, mask, v.unwrap_or_default()))??;
        }
    }
    Ok(out.out)
}

/// Builds the hits of `lookup` from the doc blocks, in id order.
struct Assemble<'a> {
    admit: Admit<'a>,
    grams: &'a [GramBlock],
    at_gram: usize,
    terms: &'a [Vec<(u64, u32)>],
    /// Per term, the position in its list of the next id to look for.
    at_term: Vec<usize>,
    out: Vec<Hit>,
}

impl Assemble<'_> {
    /// The hits at `mask`'s slots of block `blk`, whose doc block holds `doc`. Blocks come in
    /// ascending order.
    fn block(&mut self, blk: u64, mask: u128, doc: &[u8]) -> Result<()> {
        while self.at_gram < self.grams.len() && self.grams[self.at_gram].blk < blk {
            self.at_gram += 1;
        }
        let gram = self.grams.get(self.at_gram).filter(|g| g.blk == blk);
        let top = mask.checked_ilog2().unwrap_or(0);
        for entry in block::entries(doc) {
            let (slot, payload) = entry?;
            if u32::from(slot) > top {
                break;
            }
            if mask & (1u128 << slot) == 0 {
                continue;
            }
            let mut at = 0;
            let len = varint::get(payload, &mut at, "a notes doc entry")?;
            if !self.admit.check(&payload[at..])? {
                continue;
            }
            let id = id_in(blk, slot);
            let mut features = Features {
                tf: Counts::zeros(self.terms.len()),
                len: u32::try_from(len).unwrap_or(u32::MAX),
                ..Features::default()
            };
            if let Some(g) = gram
                && g.live & (1u128 << slot) != 0
            {
                features.grams = u32::from(g.held.get(slot));
            }
            for ((list, at), tf) in self.terms.iter().zip(&mut self.at_term).zip(features.tf.iter_mut()) {
                while *at < list.len() && list[*at].0 < id {
                    *at += 1;
                }
                if let Some(&(i, n)) = list.get(*at)
                    && i == id
                {
                    *tf = n;
                }
            }
            self.out.push(Hit { id, features });
        }
        Ok(())
    }
}

/// One block's share of the trigram channel: the slots still in it and how many query trigrams
/// each holds so far.
struct GramBlock {
    blk: u64,
    /// Slots that can still reach `need` (at the end: that hold at least `need`).
    live: u128,
    held: SlotCounts,
}

/// The trigram channel's side of `lookup`: the notes that hold at least `need` (`min_grams`:
/// ⌈G/2⌉) of the query's G trigrams, by block in ascending order, with the count each holds. Such
/// a note holds one of any G − need + 1 of them: the postings of the rarest G − need + 1 (by
/// `TRI_COUNT`) give every candidate, and the other trigrams are then counted for the candidates
/// only — by walking a trigram's postings when they are few, else by reading the blocks that
/// hold candidates — stopping for a candidate once it cannot reach `need`. Counts are exact for
/// every note that can enter the channel; a note that cannot is left out (its share is below the
/// threshold either way), so ranking equals a full read. Visibility is decided afterwards, per
/// note.
fn lookup_grams(snap: &Snapshot, part: &Partition, query: &Query) -> Result<Vec<GramBlock>> {
    let total = query.grams.len();
    if total == 0 {
        return Ok(Vec::new());
    }
    let need = u32::try_from(min_grams(total)).unwrap_or(u32::MAX);
    let mut by_count: Vec<(u32, &String)> = Vec::with_capacity(total);
    for g in &query.grams {
        let n = snap.get_with(TRI_COUNT, &part.key(&[g.as_bytes()]), |v| v.map_or(0, decode_count))?;
        by_count.push((n, g));
    }
    by_count.sort();
    let (scan, rest) = by_count.split_at(total - min_grams(total) + 1);
    // The scanned trigrams' blocks, gathered then sorted by block: adding to a count commutes.
    let mut scanned: Vec<(u64, u128)> = Vec::new();
    for (_, g) in scan {
        snap.scan_prefix(GRAM, &part.key(&[g.as_bytes(), b"\0"]), |k, v| {
            scanned.push((block_at(k)?, block::slots(v)?));
            Ok(true)
        })?;
    }
    scanned.sort_unstable_by_key(|(blk, _)| *blk);
    let mut blocks: Vec<GramBlock> = Vec::new();
    for (blk, bits) in scanned {
        match blocks.last_mut() {
            Some(b) if b.blk == blk => {
                b.live |= bits;
                b.held.add(bits);
            }
            _ => {
                let mut held = SlotCounts::default();
                held.add(bits);
                blocks.push(GramBlock { blk, live: bits, held });
            }
        }
    }
    let mut key = Vec::new();
    for (i, (n, g)) in rest.iter().enumerate() {
        // Drop candidates that cannot reach `need` even holding this and every later trigram.
        let short_of = need.saturating_sub(u32::try_from(rest.len() - i).unwrap_or(u32::MAX));
        let mut cands = 0u64;
        for b in &mut blocks {
            b.live &= b.held.at_least(short_of);
            cands += u64::from(b.live.count_ones());
        }
        blocks.retain(|b| b.live != 0);
        if blocks.is_empty() {
            break;
        }
        let prefix = part.key(&[g.as_bytes(), b"\0"]);
        if u64::from(*n) * SAMPLE <= cands.saturating_mul(SCAN_RATIO) {
            // Few postings: walk them alongside the (sorted) candidate blocks.
            let mut at = 0;
            snap.scan_prefix(GRAM, &prefix, |k, v| {
                let blk = block_at(k)?;
                while at < blocks.len() && blocks[at].blk < blk {
                    at += 1;
                }
                let Some(b) = blocks.get_mut(at) else { return Ok(false) };
                if b.blk == blk {
                    b.held.add(block::slots(v)? & b.live);
                }
                Ok(true)
            })?;
        } else {
            for b in &mut blocks {
                key.clear();
                key.extend_from_slice(&prefix);
                key.extend_from_slice(&b.blk.to_be_bytes());
                let bits = snap.get_with(GRAM, &key, |v| v.map_or(Ok(0), block::slots))??;
                b.held.add(bits & b.live);
            }
        }
    }
    for b in &mut blocks {
        b.live &= b.held.at_least(need);
    }
    blocks.retain(|b| b.live != 0);
    Ok(blocks)
}
