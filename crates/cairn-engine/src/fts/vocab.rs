//! A batch's vocabulary: the distinct terms of the passages an `Indexer` gathers, each named by a
//! small id, found through one table (shared by every thread) of the words seen so far.
//! Tokenizing bounds ingest, and text repeats its words (Zipf): a word seen before costs one map
//! lookup and one array read, instead of stop-word, script and stemming work and a map of the
//! batch's term strings.

use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rust_stemmers::{Algorithm, Stemmer};

use super::keys::clean_term;
use crate::Result;
use crate::error::Error;
use crate::text::{FastMap, Piece, each_word, word_term};

/// A passage as the index sees it: its length in tokens and each distinct term's count, as
/// (term id in the batch's `Vocab`, count) in id order.
#[derive(Debug, Clone)]
pub(super) struct Terms {
    pub len: u32,
    pub counts: Vec<(u32, u32)>,
}

/// Words the table holds before it starts over (its map then takes 3 MiB at most).
const TABLE_WORDS: usize = 1 << 16;

/// No term: a stop word, or a term that `clean_term` refuses.
const NO_TERM: u32 = u32::MAX;

/// Tables are numbered from one counter, and renumbered when they start over, so a `Vocab`
/// can tell whether the table ids it cached are still the ones it saw.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// Short words (most of any text) in an open-addressing map with the key inline: one cache line
/// touched per lookup and no string compare call, instead of a pointer to chase to the key.
/// Longer words go to `long`.
struct WordMap {
    /// A power of two, at most half full.
    slots: Vec<Slot>,
    short: usize,
    long: FastMap<Box<str>, u32>,
}

/// A word of at most `INLINE` bytes, zero-padded, its length in the low byte of `tag` (0: empty)
/// and high hash bits above it; `id` is its value.
#[derive(Clone, Copy, Default)]
struct Slot {
    key: [u64; 2],
    tag: u32,
    id: u32,
}

/// The longest word kept inline.
const INLINE: usize = 16;

impl WordMap {
    fn new() -> WordMap {
        WordMap { slots: vec![Slot::default(); 1 << 12], short: 0, long: FastMap::default() }
    }

    fn len(&self) -> usize {
        self.short + self.long.len()
    }

    /// The inline key of a short word, its tag and its home slot's hash.
    fn key(word: &str) -> ([u64; 2], u32, u64) {
        let mut buf = [0_u8; INLINE];
        buf[..word.len()].copy_from_slice(word.as_bytes());
        let key = [
            u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")),
            u64::from_le_bytes(buf[8..].try_into().expect("8 bytes")),
        ];
        // Folded multiplies (as `FastHasher`): every output bit depends on every input bit.
        let mix = |h: u64, w: u64| {
            let p = u128::from(h ^ w) * 0x9E37_79B9_7F4A_7C15_u128;
            (p as u64) ^ ((p >> 64) as u64)
        };
        let hash = mix(mix(word.len() as u64, key[0]), key[1]);
        // Truncation intended: the length in the low byte, 24 hash bits above it.
        let tag = (word.len() as u32) | ((hash >> 40) as u32 & !0xFF);
        (key, tag, hash)
    }

    fn get(&self, word: &str) -> Option<u32> {
        if word.len() > INLINE || word.is_empty() {
            return self.long.get(word).copied();
        }
        let (key, tag, hash) = Self::key(word);
        self.get_short(key, tag, hash)
    }

    /// `get` for a short word, by its `key`.
    fn get_short(&self, key: [u64; 2], tag: u32, hash: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        // Truncation intended: the low bits pick the home slot.
        let mut at = hash as usize & mask;
        loop {
            let slot = &self.slots[at];
            if slot.tag == 0 {
                return None;
            }
            if slot.tag == tag && slot.key == key {
                return Some(slot.id);
            }
            at = (at + 1) & mask;
        }
    }

    /// Adds `word` (not in the map yet).
    fn insert(&mut self, word: &str, id: u32) {
        if word.len() > INLINE || word.is_empty() {
            self.long.insert(word.into(), id);
            return;
        }
        if 2 * (self.short + 1) > self.slots.len() {
            let grown = vec![Slot::default(); 2 * self.slots.len()];
            let old = std::mem::replace(&mut self.slots, grown);
            for slot in old.into_iter().filter(|s| s.tag != 0) {
                self.place(slot, Self::rehash(&slot));
            }
        }
        let (key, tag, hash) = Self::key(word);
        self.place(Slot { key, tag, id }, hash);
        self.short += 1;
    }

    /// The hash of a stored slot's word.
    fn rehash(slot: &Slot) -> u64 {
        let mut buf = [0_u8; INLINE];
        buf[..8].copy_from_slice(&slot.key[0].to_le_bytes());
        buf[8..].copy_from_slice(&slot.key[1].to_le_bytes());
        let len = (slot.tag & 0xFF) as usize;
        // The bytes were a word's: valid UTF-8.
        Self::key(std::str::from_utf8(&buf[..len]).expect("an inline word is UTF-8")).2
    }

    fn place(&mut self, slot: Slot, hash: u64) {
        let mask = self.slots.len() - 1;
        // Truncation intended: the low bits pick the home slot.
        let mut at = hash as usize & mask;
        while self.slots[at].tag != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = slot;
    }
}

/// The words tokenized so far, by every thread: word (or CJK term) → table id of its index term.
struct Table {
    generation: u64,
    words: WordMap,
    term_ids: FastMap<Box<str>, u32>,
    terms: Vec<Box<str>>,
}

impl Table {
    fn new() -> Table {
        Table {
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            words: WordMap::new(),
            term_ids: FastMap::default(),
            terms: Vec::new(),
        }
    }

    /// The table id of `piece`'s term (or `NO_TERM`) if the table holds its word.
    fn get(&self, piece: Piece<'_>) -> Option<u32> {
        let (Piece::Word(word) | Piece::Term(word)) = piece;
        // Words and CJK terms never share a key: a word holds no CJK character, a CJK term only those.
        self.words.get(word)
    }

    /// The table id of `piece`'s term, or `NO_TERM`; a word not seen before is stemmed and added.
    fn lookup(&mut self, piece: Piece<'_>) -> u32 {
        if let Some(id) = self.get(piece) {
            return id;
        }
        let (Piece::Word(word) | Piece::Term(word)) = piece;
        let mut id = NO_TERM;
        let stemmer = Stemmer::create(Algorithm::English);
        let mut intern = |term: &str| {
            if let Some(term) = clean_term(term) {
                id = self.intern(term);
            }
        };
        match piece {
            Piece::Word(w) => word_term(&stemmer, w, &mut intern),
            Piece::Term(t) => intern(t),
        }
        self.words.insert(word, id);
        id
    }

    /// The table id of term `term` (already cleaned), added if new.
    fn intern(&mut self, term: &str) -> u32 {
        if let Some(&t) = self.term_ids.get(term) {
            return t;
        }
        // Fits: the table starts over long before u32::MAX.
        let t = self.terms.len() as u32;
        self.terms.push(term.into());
        self.term_ids.insert(term.into(), t);
        t
    }
}

/// Words of a text that the table did not hold, kept (they may be lowercased copies that
/// `each_word` lends only for the call) until the write lock is taken.
#[derive(Default)]
struct Unseen {
    text: String,
    /// (is a CJK term, end in `text`), in order.
    ends: Vec<(bool, usize)>,
}

impl Unseen {
    fn push(&mut self, piece: Piece<'_>) {
        let (Piece::Word(w) | Piece::Term(w)) = piece;
        self.text.push_str(w);
        self.ends.push((matches!(piece, Piece::Term(_)), self.text.len()));
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    fn pieces(&self) -> impl Iterator<Item = Piece<'_>> {
        let mut start = 0;
        self.ends.iter().map(move |&(term, end)| {
            let s = &self.text[start..end];
            start = end;
            if term { Piece::Term(s) } else { Piece::Word(s) }
        })
    }
}

/// One table for every thread: the callers tokenizing in parallel share one copy of the hot words
/// in cache, and stem each word once, instead of once a thread. Lookups take the read lock once
/// a passage; the words a passage adds take the write lock once after it.
static TABLE: RwLock<Option<Table>> = RwLock::new(None);

/// The distinct terms of one batch, each named by a small id, so grouping a batch's postings by
/// term on the writer thread indexes a vector instead of hashing strings. The terms share one
/// string (two allocations for the batch, freed on the writer thread).
#[derive(Default)]
pub(super) struct Vocab {
    arena: String,
    /// Term id → its byte range in `arena`.
    spans: Vec<(u32, u32)>,
    /// The table (`Table::generation`) that `by_table` maps from.
    generation: u64,
    /// Table id → this batch's id + 1 (0: not in this batch yet).
    by_table: Vec<u32>,
}

impl std::fmt::Debug for Vocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocab").field("terms", &self.spans.len()).finish_non_exhaustive()
    }
}

impl Vocab {
    /// The number of distinct terms.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Term `id`.
    pub fn term(&self, id: usize) -> &str {
        let (start, end) = self.spans[id];
        &self.arena[start as usize..end as usize]
    }

    /// The terms, by id.
    pub fn terms(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|id| self.term(id))
    }

    /// This batch's id for the term of table id `t` of `table`.
    fn id(&mut self, table: &Table, t: u32) -> u32 {
        let at = t as usize;
        if at >= self.by_table.len() {
            self.by_table.resize(table.terms.len(), 0);
        }
        match self.by_table[at] {
            0 => {
                // Fits: a batch holds at most 1 MiB of text (a few for an import), far below u32::MAX.
                let id = self.spans.len() as u32;
                let start = self.arena.len() as u32;
                self.arena.push_str(&table.terms[at]);
                self.spans.push((start, self.arena.len() as u32));
                self.by_table[at] = id + 1;
                id
            }
            known => known - 1,
        }
    }

    /// Points `by_table` at `table` (another thread's, or the same one started over): this
    /// batch's terms are interned there and mapped again.
    fn follow(&mut self, table: &mut Table) {
        self.generation = table.generation;
        self.by_table.clear();
        for id in 0..self.spans.len() {
            let (start, end) = self.spans[id];
            let t = table.intern(&self.arena[start as usize..end as usize]) as usize;
            if t >= self.by_table.len() {
                self.by_table.resize(t + 1, 0);
            }
            // Fits: see `id`.
            self.by_table[t] = id as u32 + 1;
        }
    }

    /// Each distinct table id of `tids` (a passage's terms, as table ids) as (this batch's id,
    /// count), in batch id order. Sorted first, so `by_table` and the table's terms are read in
    /// order, once a distinct term, not at random once a word.
    fn count(&mut self, table: &Table, tids: &mut [u32]) -> Vec<(u32, u32)> {
        tids.sort_unstable();
        let mut counts: Vec<(u32, u32)> = Vec::with_capacity(tids.len());
        for &t in tids.iter() {
            match counts.last_mut() {
                Some((last, n)) if *last == t => *n += 1,
                _ => counts.push((t, 1)),
            }
        }
        for c in &mut counts {
            c.0 = self.id(table, c.0);
        }
        counts.sort_unstable_by_key(|c| c.0);
        counts.shrink_to_fit();
        counts
    }

    /// Tokenizes `text` into its terms.
    pub fn terms_of(&mut self, text: &str) -> Result<Terms> {
        // The table ids of the text's terms, one a token.
        let mut tids: Vec<u32> = Vec::with_capacity(text.len() / 5);
        // Words the table does not hold yet, added after the read pass (rare once text repeats).
        let mut unseen = Unseen::default();
        let read = {
            let guard = TABLE.read().expect("word table lock");
            match guard.as_ref() {
                Some(table) if table.words.len() < TABLE_WORDS && self.generation == table.generation => {
                    read_pass(table, text, &mut tids, &mut unseen);
                    unseen.is_empty().then(|| self.count(table, &mut tids))
                }
                // No table yet, a full one, or one this batch has not followed (`follow` interns):
                // all under the write lock below.
                _ => None,
            }
        };
        let counts = if let Some(counts) = read {
            counts
        } else {
            let mut guard = TABLE.write().expect("word table lock");
            // Starting over happens between texts only, and renumbers the table.
            if guard.as_ref().is_none_or(|t| t.words.len() >= TABLE_WORDS) {
                *guard = Some(Table::new());
            }
            let table = guard.as_mut().expect("a table was just made");
            if self.generation != table.generation {
                // Another table than the read pass saw (or none): every word again, in this one.
                self.follow(table);
                tids.clear();
                unseen.clear();
                each_word(text, |piece, _, _| unseen.push(piece));
            }
            for piece in unseen.pieces() {
                let t = table.lookup(piece);
                if t != NO_TERM {
                    tids.push(t);
                }
            }
            self.count(table, &mut tids)
        };
        let len = u32::try_from(tids.len())
            .map_err(|_| Error::InvalidArgument("passage has more than u32::MAX tokens".into()))?;
        Ok(Terms { len, counts })
    }
}

#[cfg(test)]
impl Vocab {
    /// A passage of the given index terms as they are, tokenizer bypassed: how a test writes an
    /// index as an older tokenizer did.
    pub fn terms_given(&mut self, given: &[&str]) -> Terms {
        let mut guard = TABLE.write().expect("word table lock");
        let table = guard.get_or_insert_with(Table::new);
        if self.generation != table.generation {
            self.follow(table);
        }
        let mut tids: Vec<u32> = given.iter().map(|t| table.intern(t)).collect();
        let len = u32::try_from(tids.len()).expect("a test passage is short");
        Terms { len, counts: self.count(table, &mut tids) }
    }
}

/// Looks every word of `text` up in `table`: the table ids of the words it holds go to `tids`
/// (none for a stop word), the others to `unseen`. The order of `tids` does not matter (they
/// are counted), so short words are cut out first and looked up after, all in one tight loop:
/// the table is megabytes and its words are reached at random, so each lookup is a cache miss,
/// and a loop of independent lookups lets the core wait for many at once instead of one a word
/// between tokenizing steps.
fn read_pass(table: &Table, text: &str, tids: &mut Vec<u32>, unseen: &mut Unseen) {
    PENDING.with_borrow_mut(|pending| {
        pending.clear();
        each_word(text, |piece, _, _| {
            let (Piece::Word(word) | Piece::Term(word)) = piece;
            if word.is_empty() || word.len() > INLINE {
                match table.get(piece) {
                    Some(NO_TERM) => {}
                    Some(t) => tids.push(t),
                    None => unseen.push(piece),
                }
            } else {
                let (key, tag, hash) = WordMap::key(word);
                pending.push(Pending { key, tag, hash, cjk: matches!(piece, Piece::Term(_)) });
            }
        });
        for p in pending.iter() {
            match table.words.get_short(p.key, p.tag, p.hash) {
                Some(NO_TERM) => {}
                Some(t) => tids.push(t),
                None => p.with_piece(|piece| unseen.push(piece)),
            }
        }
    });
}

/// A short word of a text waiting for its lookup (`read_pass`): its `WordMap::key`, and whether
/// it is a CJK term.
#[derive(Clone, Copy)]
struct Pending {
    key: [u64; 2],
    tag: u32,
    hash: u64,
    cjk: bool,
}

impl Pending {
    /// Calls `f` with the word as `each_word` gave it.
    fn with_piece(&self, f: impl FnOnce(Piece<'_>)) {
        let mut buf = [0_u8; INLINE];
        buf[..8].copy_from_slice(&self.key[0].to_le_bytes());
        buf[8..].copy_from_slice(&self.key[1].to_le_bytes());
        let len = (self.tag & 0xFF) as usize;
        // The bytes were a word's: valid UTF-8.
        let word = std::str::from_utf8(&buf[..len]).expect("a short word is UTF-8");
        f(if self.cjk { Piece::Term(word) } else { Piece::Word(word) });
    }
}

thread_local! {
    /// `read_pass`'s words, kept between texts.
    static PENDING: std::cell::RefCell<Vec<Pending>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(vocab: &Vocab, t: &Terms) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> =
            t.counts.iter().map(|&(id, n)| (vocab.term(id as usize).to_owned(), n)).collect();
        out.sort();
        out
    }

    #[test]
    fn word_maps_find_what_they_hold_short_and_long() {
        let mut map = WordMap::new();
        let words: Vec<String> = (0..20_000).map(|i| format!("w{i}{}", "x".repeat(i % 23))).collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(map.get(w), None);
            map.insert(w, i as u32);
        }
        assert_eq!(map.len(), words.len());
        for (i, w) in words.iter().enumerate() {
            assert_eq!(map.get(w), Some(i as u32), "{w}");
        }
        assert_eq!(map.get("w1xx"), None);
        assert_eq!(map.get("é"), None);
        map.insert("é", 7);
        assert_eq!(map.get("é"), Some(7));
    }

    #[test]
    fn a_batch_keeps_one_id_per_term_across_threads_and_table_restarts() {
        let mut vocab = Vocab::default();
        let first = vocab.terms_of("Running runners ran, the runs run!").unwrap();
        assert_eq!(first.len, 5);
        assert_eq!(terms(&vocab, &first), [("ran".to_owned(), 1), ("run".to_owned(), 3), ("runner".to_owned(), 1)]);
        // The same batch continued on another thread (another table), then after this thread's
        // table started over: a term already in the batch keeps its id.
        let (vocab, second) = std::thread::spawn(move || {
            let t = vocab.terms_of("run 東京 runner").unwrap();
            (vocab, t)
        })
        .join()
        .unwrap();
        let mut vocab = vocab;
        *TABLE.write().unwrap() = Some(Table::new());
        let third = vocab.terms_of("ran runs").unwrap();
        assert_eq!(vocab.len(), 4, "{:?}", vocab.terms().collect::<Vec<_>>());
        let id = |term: &str| vocab.terms().position(|t| t == term).unwrap() as u32;
        assert!(second.counts.contains(&(id("run"), 1)) && second.counts.contains(&(id("東京"), 1)));
        assert_eq!(third.counts, {
            let mut c = vec![(id("ran"), 1), (id("run"), 1)];
            c.sort_unstable();
            c
        });
    }

    #[test]
    fn threads_sharing_the_table_get_the_terms_one_thread_gets_while_it_starts_over() {
        let text = |i: usize| format!("Running runner{i} ran {} the runs of w{} 東京", "x".repeat(i % 20), i * 7);
        let alone: Vec<Vec<(String, u32)>> = (0..400)
            .map(|i| {
                let mut v = Vocab::default();
                let t = v.terms_of(&text(i)).unwrap();
                terms(&v, &t)
            })
            .collect();
        // Four threads at once, each one batch over the same texts, with the table started over
        // now and then (as a full table does): every passage keeps its terms.
        let threads: Vec<_> = (0..4)
            .map(|k| {
                std::thread::spawn(move || {
                    let mut v = Vocab::default();
                    let mut out = Vec::new();
                    for i in 0..400 {
                        if k == 0 && i % 50 == 0 {
                            *TABLE.write().unwrap() = Some(Table::new());
                        }
                        let t = v.terms_of(&text(i)).unwrap();
                        out.push(terms(&v, &t));
                    }
                    out
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), alone);
        }
    }
}
