//! Full-text search: a BM25 inverted index over passages, kept in three trees of the store and
//! written in the caller's transaction, so the index never disagrees with the passages it covers.
//! A partition is an opaque byte prefix built by the caller (tenant, user, scope); nothing is ever
//! read or counted across partitions. `docs/design/fts.md` gives the layout and the decisions.

mod block;
mod keys;
mod merge;
#[cfg(test)]
mod tests;
mod vocab;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use crate::text::FastMap;
use crate::{Error, Result, Snapshot, WriteTxn};

use block::Posting;
pub use keys::{DOC_TREE, MAX_PART_LEN, MAX_TERM_BYTES, POST_TREE, STATS_TREE};
use keys::{
    PassageRecord, Segment, Stats, clean_term, decode_doc, decode_stats, doc_key, doc_prefix, encode_doc, encode_stats,
    key_tail, part_prefix, prefix_end,
};
pub use merge::FANOUT;
use vocab::{Terms, Vocab};

/// BM25 term-frequency saturation.
pub const K1: f64 = 1.2;
/// BM25 length normalisation.
pub const B: f64 = 0.75;

/// One passage found by `search`.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub doc: u64,
    pub ordinal: u32,
    /// The BM25 score, summed over the distinct query terms the passage holds.
    pub score: f32,
    /// The distinct query terms (as index terms: lowercased, stemmed) found in the passage, in
    /// query order.
    pub matched: Vec<String>,
}

/// The block of `term` in value `value` of a segment's key (`Segment::key_of`): in a chunk,
/// found by term; else the value itself.
fn block_in<'v>(value: &'v [u8], chunked: bool, term: &[u8]) -> Result<Option<&'v [u8]>> {
    if chunked { block::find_in_chunk(value, term) } else { Ok(Some(value)) }
}

/// Every posting of `term` in the partition with encoded prefix `prefix`, segment by segment
/// (the merge in progress seen through `Stats::term_keys`).
fn postings_of(snap: &Snapshot, prefix: &[u8], stats: &Stats, term: &str) -> Result<Vec<Posting>> {
    let mut out = Vec::new();
    for (key, chunked) in stats.term_keys(prefix, term.as_bytes()) {
        snap.get_with(POST_TREE, &key, |value| match value {
            Some(v) => match block_in(v, chunked, term.as_bytes())? {
                Some(b) => block::decode_into(b, &mut out),
                None => Ok(()),
            },
            None => Ok(()),
        })??;
    }
    Ok(out)
}

/// A query term as the index is read for it: the term, and the unfolded terms that passages
/// indexed before terms were folded hold for the same words (`text::query_terms`).
struct Wanted {
    term: String,
    unfolded: Vec<String>,
}

/// The postings of `wanted`: its term's, and its unfolded terms' merged in, one posting a passage
/// (tf summed, which only an old passage holding two spellings of the word needs), so the word
/// scores as one term whichever spelling a passage was indexed under.
fn postings_of_wanted(snap: &Snapshot, prefix: &[u8], stats: &Stats, wanted: &Wanted) -> Result<Vec<Posting>> {
    let mut out = postings_of(snap, prefix, stats, &wanted.term)?;
    if wanted.unfolded.is_empty() {
        return Ok(out);
    }
    for term in &wanted.unfolded {
        out.extend(postings_of(snap, prefix, stats, term)?);
    }
    Ok(merge_places(out))
}

/// `postings` with one posting a passage, tf summed.
fn merge_places(mut postings: Vec<Posting>) -> Vec<Posting> {
    postings.sort_unstable_by_key(|p| (p.doc, p.ordinal));
    let mut out: Vec<Posting> = Vec::with_capacity(postings.len());
    for p in postings {
        match out.last_mut() {
            Some(last) if (last.doc, last.ordinal) == (p.doc, p.ordinal) => last.tf += p.tf,
            _ => out.push(p),
        }
    }
    out
}

/// The passages of `part` that hold every index term of `text`, seen from inside a write
/// transaction (its own writes included), in (doc, ordinal) order. Used to find every passage
/// naming something, linked or not, before it is forgotten.
pub fn passages_with_all_terms(tx: &mut WriteTxn<'_>, part: &[u8], text: &str) -> Result<Vec<(u64, u32)>> {
    let prefix = part_prefix(part)?;
    let stats = read_stats(tx, &prefix)?;
    // No segment, no posting: a scope without passages (an import of a graph, facts remembered
    // alone) asks this for every entity it creates, and tokenizing the name was most of the cost.
    if stats.segments.is_empty() {
        return Ok(Vec::new());
    }
    let mut found: Option<Vec<(u64, u32)>> = None;
    // A passage indexed before terms were folded holds a word under its unfolded term: either counts.
    // One term a word, not the parts of identifiers: every passage spelling the name in full holds
    // it (`GitHub` in `Github`, which has no parts).
    for wanted in query_terms(text, false) {
        let mut postings = Vec::new();
        for term in std::iter::once(&wanted.term).chain(&wanted.unfolded) {
            for (key, chunked) in stats.term_keys(&prefix, term.as_bytes()) {
                if let Some(value) = tx.get(POST_TREE, &key)?
                    && let Some(b) = block_in(&value, chunked, term.as_bytes())?
                {
                    block::decode_into(b, &mut postings)?;
                }
            }
        }
        // A re-indexed passage lands in a later segment than its document's others: sort across them.
        let mut here: Vec<(u64, u32)> = postings.into_iter().map(|p| (p.doc, p.ordinal)).collect();
        here.sort_unstable();
        here.dedup();
        found = Some(match found {
            None => here,
            Some(before) => before.into_iter().filter(|p| here.binary_search(p).is_ok()).collect(),
        });
    }
    Ok(found.unwrap_or_default())
}

/// A passage's text tokenized ahead of the transaction that indexes it (`Indexer::tokenize`, on
/// the caller's thread), so the store's single writer thread only files its terms.
#[derive(Debug)]
pub struct Tokenized {
    terms: Terms,
    /// Its number in the batch that tokenized it: `prepare` names passages by it.
    serial: u64,
}

/// A batch's postings grouped by term and encoded, for the places given: one block per term
/// (term id, doc of its last posting, its bytes in `arena`), each passage's distinct term hashes
/// (sorted, in the places' order), and the tokens they hold.
struct Built {
    arena: Vec<u8>,
    blocks: Vec<(u32, u64, std::ops::Range<usize>)>,
    /// Every passage's hashes, one run after another; passage `i`'s end at `hash_ends[i]`.
    hashes: Vec<u16>,
    hash_ends: Vec<usize>,
    tokens: u64,
}

impl Built {
    /// The distinct term hashes of each passage, in the places' order.
    fn passage_hashes(&self) -> impl Iterator<Item = &[u16]> {
        let starts = std::iter::once(0).chain(self.hash_ends.iter().copied());
        starts.zip(&self.hash_ends).map(|(start, &end)| &self.hashes[start..end])
    }
}

/// Groups the postings of `places` (`(doc, ordinal, terms)`, in ascending `(doc, ordinal)`) by
/// term id of `vocab`, with a counting sort, and encodes each term's block.
fn build(vocab: &Vocab, places: &[(u64, u32, &Terms)]) -> Built {
    // Term `id`'s postings are at `offsets[id]..offsets[id + 1]` of `grouped`.
    let mut offsets = vec![0_usize; vocab.len() + 1];
    for (_, _, terms) in places {
        for &(id, _) in &terms.counts {
            offsets[id as usize + 1] += 1;
        }
    }
    for id in 0..vocab.len() {
        offsets[id + 1] += offsets[id];
    }
    let mut fill = offsets.clone();
    GROUPED.with_borrow_mut(|grouped| {
        grouped.clear();
        grouped.resize(offsets[vocab.len()], Posting::default());
        build_grouped(vocab, places, &offsets, &mut fill, grouped)
    })
}

thread_local! {
    /// `build`'s postings grouped by term, kept between batches: a batch's take a megabyte or
    /// two, which a fresh allocation each time took as new pages for the kernel to zero.
    static GROUPED: std::cell::RefCell<Vec<Posting>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `build` past the counts: fills `grouped` (sized) by term and encodes the blocks.
fn build_grouped(
    vocab: &Vocab,
    places: &[(u64, u32, &Terms)],
    offsets: &[usize],
    fill: &mut [usize],
    grouped: &mut [Posting],
) -> Built {
    let term_hashes: Vec<u16> = vocab.terms().map(|t| keys::term_hash(t.as_bytes())).collect();
    let mut tokens: u64 = 0;
    let mut hashes: Vec<u16> = Vec::with_capacity(grouped.len());
    let mut hash_ends: Vec<usize> = Vec::with_capacity(places.len());
    for &(doc, ordinal, Terms { len, counts }) in places {
        let start = hashes.len();
        for &(id, tf) in counts {
            let at = &mut fill[id as usize];
            grouped[*at] = Posting { doc, ordinal, tf, len: *len };
            *at += 1;
            hashes.push(term_hashes[id as usize]);
        }
        let mine = &mut hashes[start..];
        mine.sort_unstable();
        // Distinct hashes to the front of the passage's run, the rest cut off.
        let mut kept = 0;
        for i in 0..mine.len() {
            if i == 0 || mine[i] != mine[kept - 1] {
                mine[kept] = mine[i];
                kept += 1;
            }
        }
        hashes.truncate(start + kept);
        hash_ends.push(hashes.len());
        tokens += u64::from(*len);
    }
    // Places come in (doc, ordinal) order, so each term's postings are sorted. All blocks are
    // encoded into one buffer.
    let mut arena: Vec<u8> = Vec::with_capacity(grouped.len() * 6);
    let mut blocks = Vec::with_capacity(vocab.len());
    for id in 0..vocab.len() {
        let postings = &grouped[offsets[id]..offsets[id + 1]];
        if let Some(last) = postings.last() {
            let start = arena.len();
            block::encode_into(postings, &mut arena);
            // Fits: a batch's vocabulary is far below u32::MAX terms.
            blocks.push((id as u32, last.doc, start..arena.len()));
        }
    }
    Built { arena, blocks, hashes, hash_ends, tokens }
}

/// A batch's segment laid out before its transaction (`Indexer::prepare`), with the batch's own
/// doc numbers (0, 1, … in the call's order): the transaction only raises them to the ids it
/// assigned and copies the chunks.
struct Prepared {
    /// Each passage's (serial, local doc, ordinal), in ascending (local doc, ordinal).
    places: Vec<(u64, u64, u32)>,
    built: Built,
    buckets: u32,
    /// The non-empty chunks: (bucket, indexes into `built.blocks`, by term).
    chunks: Vec<(u32, Vec<u32>)>,
}

/// Passages gathered over one call and indexed together: the batch becomes a new segment, one
/// block per distinct term, appended after the partition's older segments.
pub struct Indexer {
    prefix: Vec<u8>,
    vocab: Vocab,
    /// `(doc, ordinal)` → the passage's terms, whether the place is known to hold nothing
    /// indexed yet (a document created in this transaction), and its serial if it was tokenized
    /// ahead; a later `add` of the same place replaces an earlier one.
    passages: BTreeMap<(u64, u32), (Terms, bool, Option<u64>)>,
    /// Serials handed out by `tokenize`.
    serials: u64,
    prepared: Option<Prepared>,
}

impl Indexer {
    /// A batch for partition `part`.
    pub fn new(part: &[u8]) -> Result<Indexer> {
        Ok(Indexer {
            prefix: part_prefix(part)?,
            vocab: Vocab::default(),
            passages: BTreeMap::new(),
            serials: 0,
            prepared: None,
        })
    }

    /// Tokenizes `text` for this batch now (before the write transaction, off the store's single
    /// writer thread, whose time is what bounds ingest); `add_tokenized` files it later.
    pub fn tokenize(&mut self, text: &str) -> Result<Tokenized> {
        let terms = self.vocab.terms_of(text)?;
        self.serials += 1;
        Ok(Tokenized { terms, serial: self.serials })
    }

    /// Lays the segment out ahead of the transaction (on the caller's thread), for passages
    /// `places` (`(local doc, ordinal, passage)`, in ascending `(local doc, ordinal)`) that the
    /// transaction will add as fresh places of docs `base + local doc` for one `base`. `finish`
    /// uses the layout when the passages added are exactly these, at such docs, and otherwise
    /// builds the segment itself, so the result never depends on it.
    pub fn prepare(&mut self, places: &[(u64, u32, &Tokenized)]) {
        if places.windows(2).any(|w| (w[0].0, w[0].1) >= (w[1].0, w[1].1)) {
            return;
        }
        let by_term: Vec<(u64, u32, &Terms)> = places.iter().map(|&(doc, o, t)| (doc, o, &t.terms)).collect();
        let built = build(&self.vocab, &by_term);
        let blocks: Vec<merge::Block<'_>> = built
            .blocks
            .iter()
            .map(|(id, last, range)| (self.vocab.term(*id as usize).as_bytes(), *last, &built.arena[range.clone()]))
            .collect();
        // A raised doc can lengthen each block's first delta by up to 9 bytes: the layout's sizes
        // are estimates either way.
        let (buckets, chunks) = merge::layout(&blocks);
        let places = places.iter().map(|&(doc, o, t)| (t.serial, doc, o)).collect();
        self.prepared = Some(Prepared { places, built, buckets, chunks });
    }

    /// Adds passage `ordinal` of `doc`, replacing what is indexed there when the batch is written.
    pub fn add(&mut self, doc: u64, ordinal: u32, text: &str) -> Result<()> {
        let terms = self.vocab.terms_of(text)?;
        self.passages.insert((doc, ordinal), (terms, false, None));
        Ok(())
    }

    /// `add` for a passage of the given index terms (no tokenizer): what an older tokenizer wrote.
    #[cfg(test)]
    pub(crate) fn add_terms(&mut self, doc: u64, ordinal: u32, terms: &[&str]) {
        let terms = self.vocab.terms_given(terms);
        self.passages.insert((doc, ordinal), (terms, false, None));
    }

    /// `add` for a passage this batch tokenized (`tokenize`). `fresh`: nothing is indexed at
    /// `(doc, ordinal)` before this batch (the document was created in this transaction), so
    /// `finish` need not look for a record to replace there.
    pub fn add_tokenized(&mut self, doc: u64, ordinal: u32, passage: Tokenized, fresh: bool) {
        self.passages.insert((doc, ordinal), (passage.terms, fresh, Some(passage.serial)));
    }

    /// The doc ids of the prepared layout are `base + local doc` for the `base` returned, when
    /// the passages added are exactly the prepared ones, all fresh.
    fn prepared_base(&self) -> Option<u64> {
        let prepared = self.prepared.as_ref()?;
        let &(_, local, _) = prepared.places.first()?;
        let (&(doc, _), _) = self.passages.first_key_value()?;
        let base = doc.checked_sub(local)?;
        let same = self.passages.len() == prepared.places.len()
            && self.passages.iter().zip(&prepared.places).all(|((&(doc, ordinal), (_, fresh, serial)), p)| {
                *fresh && *serial == Some(p.0) && local_plus(base, p.1) == Some(doc) && ordinal == p.2
            });
        same.then_some(base)
    }

    /// Writes the batch: removes what was indexed at each place, then writes a new segment (one
    /// block per term) and one record per passage, adjusts the partition's totals, and merges the
    /// newest segments when `FANOUT` of them share a level.
    pub fn finish(self, tx: &mut WriteTxn<'_>) -> Result<()> {
        self.finish_spent(tx).map(drop)
    }

    /// `finish`, handing the batch's buffers back so that the thread that made them (the
    /// caller's, which tokenized and laid out the batch) frees them, not the writer: memory
    /// freed on another thread than its own returns to its allocator late, and the allocating
    /// thread meanwhile takes fresh pages, which the kernel zeroes.
    pub fn finish_spent(self, tx: &mut WriteTxn<'_>) -> Result<Spent> {
        if !self.passages.is_empty() {
            match self.prepared_base() {
                Some(base) => self.write_prepared(tx, base)?,
                None => self.write_built(tx)?,
            }
        }
        Ok(Spent { _batch: self })
    }

    /// `finish` building the segment in the transaction.
    fn write_built(&self, tx: &mut WriteTxn<'_>) -> Result<()> {
        let Indexer { prefix, vocab, passages, .. } = self;
        let old: Vec<(u64, u32, PassageRecord)> = passages
            .iter()
            .filter(|(_, (_, fresh, _))| !fresh)
            .filter_map(|(&(doc, ordinal), _)| match tx.get(DOC_TREE, &doc_key(prefix, doc, ordinal)) {
                Ok(Some(value)) => Some(decode_doc(&value).map(|r| (doc, ordinal, r))),
                Ok(None) => None,
                Err(e) => Some(Err(e)),
            })
            .collect::<Result<_>>()?;
        let stats = read_stats(tx, prefix)?;
        let removed = drop_passages(tx, prefix, &stats, &old)?;
        let batch = stats.next_batch;
        let places: Vec<(u64, u32, &Terms)> =
            passages.iter().map(|(&(doc, ordinal), (terms, _, _))| (doc, ordinal, terms)).collect();
        let built = build(vocab, &places);
        for (&(doc, ordinal, terms), mine) in places.iter().zip(built.passage_hashes()) {
            tx.put(DOC_TREE, &doc_key(prefix, doc, ordinal), &encode_doc(batch, terms.len, mine))?;
        }
        let blocks: Vec<merge::Block<'_>> = built
            .blocks
            .iter()
            .map(|(id, last, range)| (vocab.term(*id as usize).as_bytes(), *last, &built.arena[range.clone()]))
            .collect();
        let buckets = merge::write_segment(tx, prefix, batch, &blocks)?;
        let tokens = built.tokens;
        let count = passages.len() as u64;
        close_batch(tx, prefix, stats, (count, tokens), removed, buckets)
    }

    /// `finish` for a batch whose segment `prepare` laid out, at docs `base + local doc`: the
    /// passages are fresh (no record to replace), so it writes their records, the chunks with
    /// each block raised by `base`, and the totals.
    fn write_prepared(&self, tx: &mut WriteTxn<'_>, base: u64) -> Result<()> {
        let Indexer { prefix, vocab, passages, prepared, .. } = self;
        let Prepared { built, buckets, chunks, .. } = prepared.as_ref().expect("checked by prepared_base");
        let stats = read_stats(tx, prefix)?;
        let batch = stats.next_batch;
        for ((&(doc, ordinal), (terms, _, _)), mine) in passages.iter().zip(built.passage_hashes()) {
            tx.put(DOC_TREE, &doc_key(prefix, doc, ordinal), &encode_doc(batch, terms.len, mine))?;
        }
        let mut raised: Vec<u8> = Vec::with_capacity(built.arena.len() + 10 * built.blocks.len());
        let mut spans = Vec::with_capacity(built.blocks.len());
        for (_, _, range) in &built.blocks {
            let start = raised.len();
            block::rebase_into(&built.arena[range.clone()], base, &mut raised)?;
            spans.push(start..raised.len());
        }
        for (bucket, members) in chunks {
            let entries = members.iter().map(|&i| {
                let (id, last, _) = &built.blocks[i as usize];
                block::Entry {
                    term: vocab.term(*id as usize).as_bytes(),
                    last: last + base,
                    block: &raised[spans[i as usize].clone()],
                }
            });
            tx.put(POST_TREE, &keys::chunk_key(prefix, batch, *bucket), &block::encode_chunk(entries))?;
        }
        let count = passages.len() as u64;
        close_batch(tx, prefix, stats, (count, built.tokens), (0, 0), *buckets)
    }
}

/// A written batch's buffers (`Indexer::finish_spent`), freed where it is dropped.
pub struct Spent {
    _batch: Indexer,
}

/// `base + local`, if it fits.
fn local_plus(base: u64, local: u64) -> Option<u64> {
    base.checked_add(local)
}

/// Adds a written batch (`added` and `removed` as (passages, tokens)) and its segment of
/// `buckets` chunks to the partition's totals `stats`, merges, and stores the totals.
fn close_batch(
    tx: &mut WriteTxn<'_>,
    prefix: &[u8],
    mut stats: Stats,
    added: (u64, u64),
    removed: (u64, u64),
    buckets: u32,
) -> Result<()> {
    let underflow = || Error::corrupt(None, "full-text totals are smaller than the passages they count");
    let batch = stats.next_batch;
    stats.passages = (stats.passages + added.0).checked_sub(removed.0).ok_or_else(underflow)?;
    stats.tokens = (stats.tokens + added.1).checked_sub(removed.1).ok_or_else(underflow)?;
    stats.next_batch += 1;
    stats.segments.push(Segment { first: batch, level: 0, buckets });
    merge::settle(tx, prefix, &mut stats)?;
    write_stats(tx, prefix, &stats)
}

/// Indexes passage `ordinal` of `doc` in partition `part`, replacing what was indexed there before.
/// A passage without terms is still counted (it adds to the partition's passage count). Many
/// passages are cheaper through one `Indexer`.
pub fn index_passage(tx: &mut WriteTxn<'_>, part: &[u8], doc: u64, ordinal: u32, text: &str) -> Result<()> {
    let mut batch = Indexer::new(part)?;
    batch.add(doc, ordinal, text)?;
    batch.finish(tx)
}

/// Removes passage `ordinal` of `doc` from partition `part`; `false` when it was not indexed.
pub fn remove_passage(tx: &mut WriteTxn<'_>, part: &[u8], doc: u64, ordinal: u32) -> Result<bool> {
    Ok(remove_passages(tx, part, &[(doc, ordinal)])? == 1)
}

/// Removes passages `passages` (doc, ordinal) of partition `part`, those it indexes; how many
/// those were. Together: a posting chunk that several hold is rewritten once a run of
/// `DROP_RUN` passages, not once a passage (a source of 20,000 one-passage documents forgotten
/// one passage at a time took 25 s, rewriting the chunks of each passage's ~100 terms).
pub fn remove_passages(tx: &mut WriteTxn<'_>, part: &[u8], passages: &[(u64, u32)]) -> Result<u64> {
    let prefix = part_prefix(part)?;
    let mut wanted = passages.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut run = Dropping::default();
    for (doc, ordinal) in wanted {
        if let Some(value) = tx.get(DOC_TREE, &doc_key(&prefix, doc, ordinal))? {
            run.push(tx, &prefix, (doc, ordinal, decode_doc(&value)?))?;
        }
    }
    run.finish(tx, &prefix)
}

/// Removes every passage of each document of `docs` from partition `part`; how many there were.
/// Together, as `remove_passages`.
pub fn remove_docs(tx: &mut WriteTxn<'_>, part: &[u8], docs: &[u64]) -> Result<u64> {
    let prefix = part_prefix(part)?;
    let mut wanted = docs.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut run = Dropping::default();
    for doc in wanted {
        for (key, value) in scan(tx, DOC_TREE, &doc_prefix(&prefix, doc))? {
            let (_, ordinal) = key_tail(&key)?;
            run.push(tx, &prefix, (doc, ordinal, decode_doc(&value)?))?;
        }
    }
    run.finish(tx, &prefix)
}

/// Passages whose postings `drop_passages` takes out together, at most this many at once: what a
/// removal holds in memory (each passage's record: its terms).
const DROP_RUN: usize = 4096;

/// Passages gathered for `drop_passages`, dropped a run at a time, the totals updated after each.
#[derive(Default)]
struct Dropping {
    run: Vec<(u64, u32, PassageRecord)>,
    dropped: u64,
}

impl Dropping {
    fn push(&mut self, tx: &mut WriteTxn<'_>, prefix: &[u8], passage: (u64, u32, PassageRecord)) -> Result<()> {
        self.run.push(passage);
        if self.run.len() >= DROP_RUN { self.drop_run(tx, prefix) } else { Ok(()) }
    }

    fn drop_run(&mut self, tx: &mut WriteTxn<'_>, prefix: &[u8]) -> Result<()> {
        if self.run.is_empty() {
            return Ok(());
        }
        let stats = read_stats(tx, prefix)?;
        let removed = drop_passages(tx, prefix, &stats, &self.run)?;
        subtract_stats(tx, prefix, stats, removed)?;
        self.dropped += removed.0;
        self.run.clear();
        Ok(())
    }

    /// Drops what is left; how many passages went in all.
    fn finish(mut self, tx: &mut WriteTxn<'_>, prefix: &[u8]) -> Result<u64> {
        self.drop_run(tx, prefix)?;
        Ok(self.dropped)
    }
}

/// Removes everything of partition `part`: postings, passages and totals. Returns the number of
/// passages it held.
pub fn remove_partition(tx: &mut WriteTxn<'_>, part: &[u8]) -> Result<u64> {
    let prefix = part_prefix(part)?;
    let mut passages: u64 = 0;
    for tree in [POST_TREE, DOC_TREE, STATS_TREE] {
        let removed = tx.delete_prefix(tree, &prefix)?;
        if tree == DOC_TREE {
            passages = removed;
        }
    }
    Ok(passages)
}

/// The `k` passages of partition `part` that score highest for `query` under BM25 (`K1`, `B`,
/// idf = ln(1 + (N − n + 0.5) / (n + 0.5))). The query is tokenized as passages are; a term
/// repeated in the query counts once. Ties are broken by `(doc, ordinal)` ascending. Every
/// posting of each query term is read.
pub fn search(snap: &Snapshot, part: &[u8], query: &str, k: usize) -> Result<Vec<Hit>> {
    let prefix = part_prefix(part)?;
    if k == 0 {
        return Ok(Vec::new());
    }
    let terms = query_terms(query, true);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let Some(stats) = snap.get(STATS_TREE, &prefix)? else {
        return Ok(Vec::new());
    };
    let stats = decode_stats(&stats)?;
    let (n, total) = (stats.passages, stats.tokens);
    // Precision: counts above 2^53 are far beyond any store.
    #[allow(clippy::cast_precision_loss)]
    let (n, avg_len) = (n as f64, if n == 0 { 0.0 } else { total as f64 / n as f64 });
    // Each candidate's score and the last of its matches, which chain back through `matches`
    // (term index, previous match): no list per candidate.
    let mut scores: FastMap<(u64, u32), (f64, u32)> = FastMap::default();
    let mut matches: Vec<(u32, u32)> = Vec::new();
    for (i, wanted) in terms.iter().enumerate() {
        let postings = postings_of_wanted(snap, &prefix, &stats, wanted)?;
        // Precision: a term is in fewer than 2^53 passages.
        #[allow(clippy::cast_precision_loss)]
        let df = postings.len() as f64;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for p in postings {
            let tf = f64::from(p.tf);
            let norm = if avg_len > 0.0 { f64::from(p.len) / avg_len } else { 0.0 };
            let slot = scores.entry((p.doc, p.ordinal)).or_insert((0.0, NO_MATCH));
            slot.0 += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * norm));
            // Fits: a query has far fewer terms, and a search far fewer matches, than u32::MAX.
            matches.push((i as u32, slot.1));
            slot.1 = (matches.len() - 1) as u32;
        }
    }
    let mut ranked: Vec<((u64, u32), (f64, u32))> = scores.into_iter().collect();
    let order = |(a, (sa, _)): &((u64, u32), (f64, u32)), (b, (sb, _)): &((u64, u32), (f64, u32))| {
        sb.total_cmp(sa).then(a.cmp(b))
    };
    // Only the best `k` need sorting.
    if ranked.len() > k {
        ranked.select_nth_unstable_by(k - 1, order);
        ranked.truncate(k);
    }
    ranked.sort_unstable_by(order);
    Ok(ranked
        .into_iter()
        .map(|((doc, ordinal), (score, last))| {
            let mut found = Vec::new();
            let mut at = last;
            while at != NO_MATCH {
                let (term, prev) = matches[at as usize];
                found.push(terms[term as usize].term.clone());
                at = prev;
            }
            found.reverse();
            // Scores are reported as f32; ranking used the f64 sum.
            Hit { doc, ordinal, score: score as f32, matched: found }
        })
        .collect())
}

/// The end of a candidate's chain of matches in `search`.
const NO_MATCH: u32 = u32::MAX;

/// The distinct index terms of `query`, in order of first occurrence.
/// In how many passages of `part` the index term `term` occurs, counting at most `cap`: enough to
/// tell a rare word from a common one without reading a common word's every posting.
pub fn doc_freq(snap: &Snapshot, part: &[u8], term: &str, cap: usize) -> Result<usize> {
    let prefix = part_prefix(part)?;
    let Some(stats) = snap.get(STATS_TREE, &prefix)? else { return Ok(0) };
    let mut n = 0;
    for (key, chunked) in decode_stats(&stats)?.term_keys(&prefix, term.as_bytes()) {
        if n >= cap {
            break;
        }
        n += snap.get_with(POST_TREE, &key, |value| match value {
            Some(v) => block_in(v, chunked, term.as_bytes())?.map_or(Ok(0), block::count),
            None => Ok(0),
        })??;
    }
    Ok(n.min(cap))
}

/// The number of passages indexed in `part`.
pub fn passage_count(snap: &Snapshot, part: &[u8]) -> Result<u64> {
    let prefix = part_prefix(part)?;
    Ok(match snap.get(STATS_TREE, &prefix)? {
        Some(stats) => decode_stats(&stats)?.passages,
        None => 0,
    })
}

fn query_terms(query: &str, parts: bool) -> Vec<Wanted> {
    let mut out: Vec<Wanted> = Vec::new();
    for q in crate::text::query_terms(query, parts) {
        // Cutting a long term can make two terms one.
        let Some(term) = clean_term(&q.term) else { continue };
        let unfolded = q.unfolded.iter().filter_map(|u| clean_term(u)).filter(|u| *u != term).map(str::to_owned);
        match out.iter_mut().find(|w| w.term == term) {
            Some(w) => w.unfolded.extend(unfolded.filter(|u| !w.unfolded.contains(u)).collect::<Vec<_>>()),
            None => out.push(Wanted { term: term.to_owned(), unfolded: unfolded.collect() }),
        }
    }
    out
}

/// A block left in a chunk by `drop_passages`: (term, last doc, block as it was or re-encoded).
type Kept<'a> = (&'a [u8], u64, Cow<'a, [u8]>);

/// A set of passages, by `(doc, ordinal)`.
type Places = BTreeSet<(u64, u32)>;

/// Deletes the postings and records of passages (with their decoded records), rewriting each
/// chunk (or block) they touch once. Returns (passages, tokens) removed; the totals are left to
/// the caller.
fn drop_passages(
    tx: &mut WriteTxn<'_>,
    prefix: &[u8],
    stats: &Stats,
    passages: &[(u64, u32, PassageRecord)],
) -> Result<(u64, u64)> {
    // Key → (the segment whose layout it follows, the places to take out of it).
    let mut by_key: BTreeMap<Vec<u8>, (Segment, Places)> = BTreeMap::new();
    let mut tokens: u64 = 0;
    for (doc, ordinal, record) in passages {
        let at = stats.segment_at(record.batch)?;
        let seg = stats.segments[at];
        // A chunked segment's postings of each hash are in its chunk, or in the output's when
        // the segment is an input of the merge in progress and the hash's class is done.
        let keys: Vec<(Segment, Vec<u8>)> = if seg.buckets > 0 {
            record
                .hashes
                .iter()
                .map(|&h| {
                    let holder = stats.holder(at, h);
                    (holder, keys::chunk_key(prefix, holder.first, holder.bucket(h)))
                })
                .collect()
        } else if record.terms.len() >= record.hashes.len() {
            record.terms.iter().map(|t| (seg, keys::post_key(prefix, seg.first, t.as_bytes()))).collect()
        } else {
            return Err(Error::corrupt(None, "a full-text passage record names no terms for a segment of blocks"));
        };
        for (holder, key) in keys {
            by_key.entry(key).or_insert_with(|| (holder, BTreeSet::new())).1.insert((*doc, *ordinal));
        }
        tx.delete(DOC_TREE, &doc_key(prefix, *doc, *ordinal))?;
        tokens += u64::from(record.len);
    }
    for (key, (seg, gone)) in by_key {
        let Some(value) = tx.get(POST_TREE, &key)? else {
            return Err(Error::corrupt(None, format!("full-text segment {} lacks a passage's postings", seg.first)));
        };
        // Every block of the chunk loses the places it holds (a place is in a segment once).
        let mut kept: Vec<Kept<'_>> = Vec::new();
        for e in merge::entries_of(&seg, prefix, &key, &value)? {
            let mut postings = block::decode(e.block)?;
            let before = postings.len();
            postings.retain(|p| !gone.contains(&(p.doc, p.ordinal)));
            if postings.len() == before {
                kept.push((e.term, e.last, e.block.into()));
            } else if let Some(last) = postings.last() {
                kept.push((e.term, last.doc, block::encode(&postings).into()));
            }
        }
        if kept.is_empty() {
            tx.delete(POST_TREE, &key)?;
        } else if seg.buckets == 0 {
            tx.put(POST_TREE, &key, &kept[0].2)?;
        } else {
            let entries = kept.iter().map(|(term, last, bytes)| block::Entry { term, last: *last, block: bytes });
            tx.put(POST_TREE, &key, &block::encode_chunk(entries))?;
        }
    }
    Ok((passages.len() as u64, tokens))
}

/// The partition's totals as this transaction sees them (zeros when it holds nothing).
fn read_stats(tx: &mut WriteTxn<'_>, prefix: &[u8]) -> Result<Stats> {
    tx.get(STATS_TREE, prefix)?.map_or(Ok(Stats::default()), |v| decode_stats(&v))
}

/// Stores the partition's totals, or deletes them when no passage is left, so an emptied
/// partition leaves no key.
fn write_stats(tx: &mut WriteTxn<'_>, prefix: &[u8], stats: &Stats) -> Result<()> {
    if stats.passages == 0 {
        tx.delete(STATS_TREE, prefix)?;
        Ok(())
    } else {
        tx.put(STATS_TREE, prefix, &encode_stats(stats))
    }
}

/// Subtracts removed (passages, tokens) from the partition's totals `stats` (as read before).
fn subtract_stats(
    tx: &mut WriteTxn<'_>,
    prefix: &[u8],
    mut stats: Stats,
    (passages, tokens): (u64, u64),
) -> Result<()> {
    let underflow = || Error::corrupt(None, "full-text totals are smaller than the passages they count");
    stats.passages = stats.passages.checked_sub(passages).ok_or_else(underflow)?;
    stats.tokens = stats.tokens.checked_sub(tokens).ok_or_else(underflow)?;
    write_stats(tx, prefix, &stats)
}

/// Every entry of `tree` whose key starts with `prefix`, as this transaction sees it.
fn scan(tx: &mut WriteTxn<'_>, tree: &str, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let end = prefix_end(prefix);
    let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    tx.range(tree, Bound::Included(prefix), end)
}
