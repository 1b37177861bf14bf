//! Entity names: how a subject or a word of a question is matched to stored names. Exact, case- and
//! accent-folded, near spellings (edit distance scaled to length), a whole word of a longer name
//! (`Priya` → `Priya Raman`) and, for context seeds, prefixes. Short and common words match only
//! exactly or case-folded, never alone by a looser rule.

// The index's maps hash short words and bigram codes; SipHash was a tenth of building the names
// of 100k entities (profiled), FxHash is a multiply. A partition's names are its own user's, so a
// flooding key set slows only that user's index.
use rustc_hash::{FxHashMap, FxHashSet};
use std::ops::Range;

use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

use super::{is_cjk, is_stop_word};
use crate::budget::Meter;

/// The matching key of a name: compatibility-decomposed (`ﬁ` → `fi`, fullwidth → ASCII, halfwidth
/// kana → kana), lowercased (`ß` → `ss`, `ς` → `σ`, `’` → `'`), generic diacritics removed
/// (`José` → `jose`; marks that are letters of their script, such as kana voicing or Indic vowel
/// signs, are kept), recomposed (NFC), trimmed, with each run of whitespace made one space.
/// Invisible code points are read as they show (`is_invisible`): a zero-width space as a space,
/// the others not at all, so text pasted from a web page names the entity it shows.
#[must_use]
pub fn fold(name: &str) -> String {
    if name.is_ascii() {
        // Lowercased as the words are joined: one allocation, not the two of the general path
        // (a bulk load folds every fact's two ends, and fresh memory is most of what it costs).
        return join_words(name, |out, word| out.extend(word.bytes().map(|b| char::from(b.to_ascii_lowercase()))));
    }
    let shown: String = name.chars().filter(|&c| !is_invisible(c)).map(|c| if c == ZWSP { ' ' } else { c }).collect();
    join_words(&fold_text(&shown), String::push_str)
}

/// The zero-width space: a word break that shows none (Thai and Khmer text, pasted web pages).
pub(super) const ZWSP: char = '\u{200b}';

/// Default-ignorable code points (Unicode's `Default_Ignorable_Code_Point`) that names match
/// without (found by an audit: `Priya\u{200b}Raman` was a second entity that shows as the
/// first): soft hyphen, format and bidi marks, word joiner and invisible operators, BOM,
/// variation selectors and Hangul fillers. ZWSP is a word break (`ZWSP`, read as a space), and
/// ZWNJ and ZWJ are kept: some scripts and emoji sequences need them to spell a word.
#[must_use]
pub(super) fn is_invisible(c: char) -> bool {
    matches!(
        c as u32,
        0xAD | 0x34F
            | 0x61C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200E..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
    )
}

/// Whether `fold(name) == folded`, without building the fold of an ASCII name (a bulk load
/// compares every fact end's name with the entity its id maps to).
#[must_use]
pub fn folds_to(name: &str, folded: &str) -> bool {
    if !name.is_ascii() {
        return fold(name) == folded;
    }
    let mut rest = folded.as_bytes();
    for (i, word) in name.split_whitespace().enumerate() {
        if i > 0 {
            let Some((b' ', after)) = rest.split_first() else { return false };
            rest = after;
        }
        let Some((head, after)) = rest.split_at_checked(word.len()) else { return false };
        if !word.bytes().zip(head).all(|(a, &b)| a.to_ascii_lowercase() == b) {
            return false;
        }
        rest = after;
    }
    rest.is_empty()
}

/// The words of `text` (split at any whitespace), each written by `word`, one space between.
fn join_words(text: &str, word: impl Fn(&mut String, &str)) -> String {
    let mut out = String::with_capacity(text.len());
    for w in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        word(&mut out, w);
    }
    out
}

/// `fold` without its whitespace rule: every character of `text` folded, spaces and line breaks
/// kept as they are (what the notes index takes trigrams of). ASCII text is only lowercased,
/// which is all the fold does to it.
#[must_use]
pub fn fold_text(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut lower = String::with_capacity(text.len());
    for c in text.nfkd() {
        for l in c.to_lowercase() {
            match l {
                '\u{df}' => lower.push_str("ss"),
                '\u{3c2}' => lower.push('\u{3c3}'),
                '\u{2019}' => lower.push('\''),
                _ => lower.push(l),
            }
        }
    }
    // Lowercasing can itself give a combining mark (`İ` → `i` + U+0307), so decompose again.
    lower.nfkd().filter(|&c| !is_diacritic(c)).nfc().collect()
}

/// The combining marks that `fold` drops: the generic diacritic blocks (Combining Diacritical Marks
/// and its extended and supplement blocks, marks for symbols, half marks).
pub(super) fn is_diacritic(c: char) -> bool {
    matches!(c as u32, 0x300..=0x36F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// How a stored name matched a query, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchKind {
    /// The name is byte-equal to the query.
    Exact,
    /// The folded name equals the folded query (case, accents, width, whitespace differ).
    CaseFolded,
    /// The query is one whole word, or a run of whole words, of a name with more words (`Priya` →
    /// `Priya Raman`). In CJK text each Han or kana character is a word, so a run of two or more
    /// of them matches anywhere in a name (`山田` → `山田太郎`).
    WordOfName,
    /// The folded name is `distance` edits (insert, delete, substitute, swap two neighbours) from the
    /// folded query, within the allowance for the query's length (`allowed_distance`).
    Near { distance: u32 },
    /// The folded query (three or more characters) begins the folded name. Only with
    /// `LookupOptions::prefix`.
    Prefix,
}

impl MatchKind {
    /// The order of kinds, best first (smaller is better), for merging lookups of several indexes.
    #[must_use]
    pub fn rank(self) -> (u8, u32) {
        match self {
            Self::Exact => (0, 0),
            Self::CaseFolded => (1, 0),
            Self::WordOfName => (2, 0),
            Self::Near { distance } => (3, distance),
            Self::Prefix => (4, 0),
        }
    }
}

/// A stored name that matched, with how it matched and a score in `(0, 1]` that never rises down
/// the list: exact 1.0, case-folded 0.9, word of a name 0.7–0.8 (by the share of the name the query
/// covers), near 0.5 at one edit and 0.4 at two, prefix up to 0.3 (by share covered).
#[derive(Debug, Clone, PartialEq)]
pub struct NameMatch {
    pub id: u64,
    pub name: String,
    pub how: MatchKind,
    pub score: f32,
}

/// What a lookup may return: `prefix` allows `MatchKind::Prefix`; `limit` caps the list;
/// `as_name` says the caller has read the query as a name (a capitalised function word where the
/// plain word would not be capitalised: "May said what?"), so a common word may match by the
/// looser rules too. Length still decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupOptions {
    pub prefix: bool,
    pub limit: usize,
    pub as_name: bool,
}

/// How much of the index a lookup reads. `Whole` reads all its rules need, so the answer is
/// complete. `Capped` is for a hint a write pays for (`possible_duplicates`), whose cost must not
/// grow with the names stored (measured: 2.7 ms a write at 10k names like `Service 12`, 7.4 ms at
/// 30k, most of it edit distances to every name in the length window): each rule walks at most
/// `CAPPED_POSTINGS` postings, the rarest words and bigrams first, and computes at most
/// `CAPPED_DISTANCES` distances, to the names sharing the most counted bigrams. Among more names
/// than that like the query it answers some of them, not always the best ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    Whole,
    Capped,
}

/// The postings one rule of a `Capped` lookup walks.
pub const CAPPED_POSTINGS: usize = 4096;
/// The edit distances a `Capped` lookup computes.
pub const CAPPED_DISTANCES: usize = 256;

impl Effort {
    fn postings(self) -> usize {
        match self {
            Self::Whole => usize::MAX,
            Self::Capped => CAPPED_POSTINGS,
        }
    }

    fn distances(self) -> usize {
        match self {
            Self::Whole => usize::MAX,
            Self::Capped => CAPPED_DISTANCES,
        }
    }
}

/// The edits a near spelling may be from a folded query of `chars` code points: none up to 3, one
/// for 4–7, two from 8.
#[must_use]
pub fn allowed_distance(chars: usize) -> u32 {
    match chars {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// The shortest prefix query, in code points.
const MIN_PREFIX: usize = 3;

/// The most words a query may have to match by a word rule (a word of a name, held, abbreviated).
/// Names run to 1 KiB (DESIGN.md §2), a few hundred words, but one written out or abbreviated
/// word by word has a handful: a longer query is no name's words, and matching it word by word
/// cost words² × stored words (found by an audit: 330 repeated words against 202 names of them
/// took 13 s). Bounded here, a word rule costs at most this many steps per stored word it reads.
const MAX_MATCH_WORDS: usize = 32;
// The places a word stands in such a query are the bits of a u64.
const _: () = assert!(MAX_MATCH_WORDS <= 64);

/// Stands for the start and the end of a name in its bigrams; above every `char`.
const EDGE: u64 = 0x11_0000;

struct Entry {
    id: u64,
    name: String,
    folded: String,
    /// Code points of `folded`.
    len: usize,
    /// Byte ranges in `folded` of its words, in order.
    words: Vec<(usize, usize)>,
    /// Distinct bigrams of `folded` with its edges marked.
    grams: usize,
}

/// The heap bytes of a `NameIndex`'s parts: each entry's strings and word ranges, and each map
/// slot's key and list (a map's table counted at one key, value and control byte a slot).
fn heap_bytes(
    entries: &[Entry],
    by_folded: &[u32],
    words: &FxHashMap<String, Vec<(u32, u32)>>,
    grams: &FxHashMap<u64, Vec<u32>>,
) -> usize {
    use std::mem::size_of;
    let entry_heap: usize = entries
        .iter()
        .map(|e| e.name.capacity() + e.folded.capacity() + e.words.capacity() * size_of::<(usize, usize)>())
        .sum();
    let word_heap: usize = words.iter().map(|(k, v)| k.capacity() + v.capacity() * size_of::<(u32, u32)>()).sum();
    let gram_heap: usize = grams.values().map(|v| v.capacity() * size_of::<u32>()).sum();
    let word_slots = words.capacity() * (size_of::<String>() + size_of::<Vec<(u32, u32)>>() + 1);
    let gram_slots = grams.capacity() * (size_of::<u64>() + size_of::<Vec<u32>>() + 1);
    std::mem::size_of_val(entries)
        + entry_heap
        + std::mem::size_of_val(by_folded)
        + word_heap
        + gram_heap
        + word_slots
        + gram_slots
}

impl Entry {
    fn word(&self, k: usize) -> &str {
        let (from, to) = self.words[k];
        &self.folded[from..to]
    }
}

/// An in-memory index over `(id, name)` pairs for `lookup` and `did_you_mean`.
///
/// Entries are kept sorted by folded length, so the names a near spelling may be are one slice, and
/// every bigram's posting list (entry numbers, ascending) is sorted by length too. A near lookup
/// counts, within that slice, the query's bigrams each name shares and computes the edit distance
/// only where the count allows it (see `near`).
pub struct NameIndex {
    entries: Vec<Entry>,
    /// Entry numbers sorted by folded name: equal and prefix ranges.
    by_folded: Vec<u32>,
    /// Word → (entry, position of the word in the entry's words).
    words: FxHashMap<String, Vec<(u32, u32)>>,
    /// Bigram (two code points, or an edge and one) → entries holding it, ascending.
    grams: FxHashMap<u64, Vec<u32>>,
    /// Heap bytes the above hold, estimated once built (`heap_bytes`).
    bytes: usize,
}

impl NameIndex {
    /// Indexes `names`. Duplicate names (same or different ids) are kept; each matches on its own.
    pub fn new<'a>(names: impl IntoIterator<Item = (u64, &'a str)>) -> Self {
        let mut entries: Vec<Entry> = names
            .into_iter()
            .map(|(id, name)| {
                let folded = fold(name);
                let words = word_ranges(&folded);
                let chars: Vec<char> = folded.chars().collect();
                let grams = bigrams(&chars).len();
                Entry { id, name: name.to_owned(), folded, len: chars.len(), words, grams }
            })
            .collect();
        entries.sort_by(|a, b| (a.len, &a.folded, a.id, &a.name).cmp(&(b.len, &b.folded, b.id, &b.name)));
        let mut words: FxHashMap<String, Vec<(u32, u32)>> = FxHashMap::default();
        let mut grams: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        for (e, entry) in entries.iter().enumerate() {
            let e = to_u32(e);
            for k in 0..entry.words.len() {
                words.entry(entry.word(k).to_owned()).or_default().push((e, to_u32(k)));
            }
            let chars: Vec<char> = entry.folded.chars().collect();
            for g in bigrams(&chars) {
                grams.entry(g).or_default().push(e);
            }
        }
        let mut by_folded: Vec<u32> = (0..to_u32(entries.len())).collect();
        by_folded.sort_by(|&a, &b| entries[a as usize].folded.cmp(&entries[b as usize].folded).then(a.cmp(&b)));
        let bytes = heap_bytes(&entries, &by_folded, &words, &grams);
        Self { entries, by_folded, words, grams, bytes }
    }

    /// The heap bytes the index holds, about: what a cache of indexes counts against its budget.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Every indexed name with its entity id (duplicates kept), in no particular order.
    pub fn names(&self) -> impl Iterator<Item = (u64, &str)> {
        self.entries.iter().map(|e| (e.id, e.name.as_str()))
    }

    /// The stored names matching `query`, best first: exact, case-folded, word of a longer name,
    /// near (fewer edits first), prefix; within a kind, shorter names first, then by name and id.
    /// A query that is a stop word, only stop words, or shorter than 3 code points (2 when it holds
    /// CJK) gets only exact and case-folded matches.
    #[must_use]
    pub fn lookup(&self, query: &str, opts: LookupOptions) -> Vec<NameMatch> {
        self.lookup_with(query, opts, Effort::Whole)
    }

    /// `lookup` reading as much of the index as `effort` allows: exact and case-folded matches
    /// are always all found.
    #[must_use]
    pub fn lookup_with(&self, query: &str, opts: LookupOptions, effort: Effort) -> Vec<NameMatch> {
        self.lookup_metered(query, opts, &mut Meter::default(), effort)
    }

    /// `lookup_with`, its steps counted on `meter`: out of time, it stops with a partial answer.
    fn lookup_metered(&self, query: &str, opts: LookupOptions, meter: &mut Meter, effort: Effort) -> Vec<NameMatch> {
        if opts.limit == 0 {
            return Vec::new();
        }
        let folded = fold(query);
        let qwords: Vec<&str> = word_ranges(&folded).into_iter().map(|(from, to)| &folded[from..to]).collect();
        let qlen = folded.chars().count();
        let mut hits: Vec<(MatchKind, u32)> = Vec::new();
        let mut seen: FxHashSet<u32> = FxHashSet::default();

        let start = self.by_folded.partition_point(|&e| self.entries[e as usize].folded.as_str() < folded.as_str());
        for &e in &self.by_folded[start..] {
            let entry = &self.entries[e as usize];
            if entry.folded != folded {
                break;
            }
            let kind = if entry.name == query { MatchKind::Exact } else { MatchKind::CaseFolded };
            hits.push((kind, e));
            seen.insert(e);
        }

        if is_significant(&folded, qlen, qwords.iter().copied(), opts.as_name) {
            for e in self.word_of_name(&qwords, meter, effort) {
                if seen.insert(e) {
                    hits.push((MatchKind::WordOfName, e));
                }
            }
            let chars: Vec<char> = folded.chars().collect();
            for (e, distance) in self.near(&chars, allowed_distance(qlen), meter, effort) {
                if seen.insert(e) {
                    hits.push((MatchKind::Near { distance }, e));
                }
            }
            if opts.prefix && qlen >= MIN_PREFIX {
                for &e in &self.by_folded[start..] {
                    if !self.entries[e as usize].folded.starts_with(folded.as_str()) {
                        break;
                    }
                    if seen.insert(e) {
                        hits.push((MatchKind::Prefix, e));
                    }
                }
            }
        }

        let order = |&(ka, a): &(MatchKind, u32), &(kb, b): &(MatchKind, u32)| {
            let (a, b) = (&self.entries[a as usize], &self.entries[b as usize]);
            (ka.rank(), a.len, &a.name, a.id).cmp(&(kb.rank(), b.len, &b.name, b.id))
        };
        if hits.len() > opts.limit {
            // The order is total (ids break ties), so selecting first keeps the same best `limit`.
            hits.select_nth_unstable_by(opts.limit - 1, order);
            hits.truncate(opts.limit);
        }
        hits.sort_by(order);
        hits.into_iter()
            .map(|(how, e)| {
                let entry = &self.entries[e as usize];
                NameMatch { id: entry.id, name: entry.name.clone(), how, score: score(how, qlen, entry.len) }
            })
            .collect()
    }

    /// Up to `n` distinct stored names spelled like `query`, for "did you mean": near spellings
    /// first, then names it begins; none for a short or common word.
    #[must_use]
    pub fn did_you_mean(&self, query: &str, n: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for hit in self.lookup(query, LookupOptions { prefix: true, limit: usize::MAX, as_name: false }) {
            if out.len() == n {
                break;
            }
            if matches!(hit.how, MatchKind::Near { .. } | MatchKind::Prefix) && !out.contains(&hit.name) {
                out.push(hit.name);
            }
        }
        out
    }

    /// Stored names that `query` holds or abbreviates word by word, which `lookup` does not
    /// match: a name whose words all stand in a row in a query of more words (`Dr. Priya Raman`
    /// and `Priya Raman Iyer` hold `Priya Raman`, `Acme Robotics Inc` holds `Acme Robotics`), or
    /// one with a run of words that the query's words begin, in order, with at least one word
    /// whole and not common (`Priya R.` → `Priya Raman`). A stored name of only short or common
    /// words is never held. Longer names first (they cover more of the query), at most `limit`.
    #[must_use]
    pub fn held_or_abbreviated(&self, query: &str, limit: usize) -> Vec<(u64, String)> {
        self.held_or_abbreviated_with(query, limit, Effort::Whole)
    }

    /// `held_or_abbreviated` reading as much of the index as `effort` allows.
    #[must_use]
    pub fn held_or_abbreviated_with(&self, query: &str, limit: usize, effort: Effort) -> Vec<(u64, String)> {
        self.held_or_abbreviated_metered(query, limit, &mut Meter::default(), effort)
    }

    /// `held_or_abbreviated_with`, its steps counted on `meter`: out of time, it stops with a
    /// partial answer. Each distinct query word's postings are walked once, rarest word first,
    /// for every place it stands in the query; an alignment of an entry with the query is
    /// compared once for an abbreviation, and once for each of its words the query holds for a
    /// held name (fewer than `MAX_MATCH_WORDS`).
    fn held_or_abbreviated_metered(
        &self,
        query: &str,
        limit: usize,
        meter: &mut Meter,
        effort: Effort,
    ) -> Vec<(u64, String)> {
        let folded = fold(query);
        let qwords: Vec<&str> = word_ranges(&folded).into_iter().map(|(from, to)| &folded[from..to]).collect();
        // Held needs more query words than the name has, abbreviated at least two.
        if !(2..=MAX_MATCH_WORDS).contains(&qwords.len()) {
            return Vec::new();
        }
        let (mut found, mut seen): (Vec<u32>, FxHashSet<u32>) = (Vec::new(), FxHashSet::default());
        // The alignments of one entry already compared, as bits, for a word standing in several
        // places (`tried_for` says which entry); one place gives every posting its own alignment.
        let (mut tried, mut tried_for): (Vec<u64>, Option<u32>) = (Vec::new(), None);
        // The set found is the same in any order of the words; rarest first, a capped walk reads
        // the words that name fewest entries whole.
        let mut distinct: Vec<(&str, &[(u32, u32)])> = Vec::new();
        for (j, w) in qwords.iter().enumerate() {
            if let Some(postings) = self.words.get(*w)
                && !qwords[..j].contains(w)
            {
                distinct.push((*w, postings));
            }
        }
        distinct.sort_by_key(|(_, postings)| postings.len());
        let mut budget = effort.postings();
        'words: for (w, postings) in distinct {
            let postings = &postings[..postings.len().min(budget)];
            budget -= postings.len();
            let places = qwords.iter().enumerate().filter(|(_, q)| **q == w).fold(0_u64, |m, (k, _)| m | (1 << k));
            let abbreviates = !is_common_word(w);
            for &(e, pos) in postings {
                if !meter.tick(1) {
                    break 'words;
                }
                if seen.contains(&e) {
                    continue;
                }
                let entry = &self.entries[e as usize];
                let n = entry.words.len();
                let mut hit = false;
                // Held: the name's words stand in a row in the query, this one where it stands in
                // the name. Any of its words finds it, so a capped walk of the rarest finds it too.
                if n < qwords.len() {
                    let starts = bits(places).filter_map(|k| k.checked_sub(pos as usize));
                    hit = starts.filter(|&at| at + n <= qwords.len()).any(|at| {
                        meter.tick(n);
                        (0..n).all(|k| entry.word(k) == qwords[at + k])
                    }) && is_significant(&entry.folded, entry.len, (0..n).map(|k| entry.word(k)), false);
                }
                // Abbreviated: the query's words begin the name's words from the one this stands at.
                if !hit && abbreviates && n >= qwords.len() {
                    let several = places.count_ones() > 1;
                    if several && tried_for != Some(e) {
                        tried.clear();
                        tried.resize(n.div_ceil(64), 0);
                        tried_for = Some(e);
                    }
                    hit = bits(places).filter_map(|at| (pos as usize).checked_sub(at)).any(|first| {
                        if first + qwords.len() > n || several && !first_try(&mut tried, first) {
                            return false;
                        }
                        meter.tick(qwords.len());
                        qwords.iter().enumerate().all(|(k, q)| entry.word(first + k).starts_with(q))
                    });
                }
                if hit && seen.insert(e) {
                    found.push(e);
                }
            }
        }
        let mut out: Vec<&Entry> = found.into_iter().map(|e| &self.entries[e as usize]).collect();
        out.sort_by(|a, b| (b.len, &a.name, a.id).cmp(&(a.len, &b.name, b.id)));
        out.into_iter().take(limit).map(|e| (e.id, e.name.clone())).collect()
    }

    /// Entries with more words than `qwords` that hold them as a contiguous run.
    /// The stored names holding `query` as whole words (`WordOfName`), however short or common it
    /// is, shorter names first, at most `limit`: candidates to offer when a short subject names
    /// nothing by itself ("Bo" → "Bo Lee"), never a match to answer with.
    #[must_use]
    pub fn names_with_word(&self, query: &str, limit: usize) -> Vec<NameMatch> {
        let folded = fold(query);
        let qwords: Vec<&str> = word_ranges(&folded).into_iter().map(|(from, to)| &folded[from..to]).collect();
        let qlen = folded.chars().count();
        let mut found: Vec<&Entry> = self
            .word_of_name(&qwords, &mut Meter::default(), Effort::Whole)
            .into_iter()
            .map(|e| &self.entries[e as usize])
            .collect();
        found.sort_by(|a, b| (a.len, &a.name, a.id).cmp(&(b.len, &b.name, b.id)));
        found.truncate(limit);
        found
            .into_iter()
            .map(|entry| NameMatch {
                id: entry.id,
                name: entry.name.clone(),
                how: MatchKind::WordOfName,
                score: score(MatchKind::WordOfName, qlen, entry.len),
            })
            .collect()
    }

    /// Entries with more words than `qwords` that hold them as a run, each once. Out of time
    /// (`meter`), it stops with a partial answer; `effort` may cap the postings walked, which are
    /// in entry order: the shortest names, those a lookup ranks first, are read.
    fn word_of_name(&self, qwords: &[&str], meter: &mut Meter, effort: Effort) -> Vec<u32> {
        if qwords.len() > MAX_MATCH_WORDS {
            return Vec::new();
        }
        // Walk the postings of the rarest query word; a word missing from the index rules all out.
        let mut rarest: Option<(usize, &Vec<(u32, u32)>)> = None;
        for (j, w) in qwords.iter().enumerate() {
            let Some(postings) = self.words.get(*w) else { return Vec::new() };
            if rarest.is_none_or(|(_, p)| postings.len() < p.len()) {
                rarest = Some((j, postings));
            }
        }
        let Some((j, postings)) = rarest else { return Vec::new() };
        let mut out: Vec<u32> = Vec::new();
        for &(e, pos) in postings.iter().take(effort.postings()) {
            if !meter.tick(1) {
                break;
            }
            // An entry's postings are in a row: once it holds the run, the rest are skipped.
            if out.last() == Some(&e) {
                continue;
            }
            let entry = &self.entries[e as usize];
            let Some(first) = (pos as usize).checked_sub(j) else { continue };
            if qwords.len() < entry.words.len() && first + qwords.len() <= entry.words.len() {
                meter.tick(qwords.len());
                if qwords.iter().enumerate().all(|(k, w)| entry.word(first + k) == *w) {
                    out.push(e);
                }
            }
        }
        out
    }

    /// Entries within `max` edits of `query` (folded, as code points), other than equal ones, with
    /// their distance.
    ///
    /// Filter: a name within `max` edits has folded length within `max` of the query's, and shares at
    /// least `max(distinct bigrams of either) − 3·max` distinct edge-marked bigrams with it, since one
    /// edit (a swap included) touches at most three bigrams. Only names passing both get the
    /// (bounded) distance computed; when the query's bound is not positive every name in the length
    /// window does (under a `Capped` effort, the first `CAPPED_DISTANCES` of them).
    /// Out of time (`meter`), it stops with a partial answer.
    fn near(&self, query: &[char], max: u32, meter: &mut Meter, effort: Effort) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        if max == 0 {
            return out;
        }
        let slack = max as usize;
        let lo = self.entries.partition_point(|e| e.len + slack < query.len());
        let hi = self.entries.partition_point(|e| e.len <= query.len() + slack);
        let qgrams = bigrams(query);
        let cut = 3 * slack;
        let candidates = if qgrams.len() <= cut {
            (lo..hi).take(effort.distances()).collect()
        } else if effort == Effort::Whole {
            self.sharing_enough(&qgrams, lo..hi, cut, meter)
        } else {
            self.sharing_most(&qgrams, lo..hi, cut, meter)
        };
        let mut rows = Rows::default();
        let mut name: Vec<char> = Vec::new();
        for e in candidates {
            name.clear();
            name.extend(self.entries[e].folded.chars());
            if let Some(d) = osa_within(query, &name, slack, &mut rows)
                && d > 0
            {
                out.push((to_u32(e), to_u32(d)));
            }
            // The distance's band is about the name's length × (2·max + 1) cells.
            if !meter.tick(name.len() * (2 * slack + 1)) {
                break;
            }
        }
        out
    }

    /// The entries of `window` sharing at least `max(qgrams, their bigrams) − cut` of `qgrams`,
    /// in order (see `near`); none out of time.
    fn sharing_enough(&self, qgrams: &[u64], window: Range<usize>, cut: usize, meter: &mut Meter) -> Vec<usize> {
        let mut shared = vec![0_u32; window.len()];
        for g in qgrams {
            let postings = self.in_window(*g, &window);
            for &e in postings {
                shared[e as usize - window.start] += 1;
            }
            if !meter.tick(postings.len()) {
                return Vec::new();
            }
        }
        let passes = |(k, count): (usize, &u32)| {
            let e = window.start + k;
            (*count as usize + cut >= qgrams.len().max(self.entries[e].grams)).then_some(e)
        };
        shared.iter().enumerate().filter_map(passes).collect()
    }

    /// `sharing_enough` for a `Capped` effort, its cost bounded whatever the window holds: the
    /// bigrams are counted rarest first while their postings fit in `CAPPED_POSTINGS`, an entry
    /// passes if the bigrams left uncounted could make up what it lacks, and of those passing the
    /// `CAPPED_DISTANCES` sharing the most counted bigrams are kept (then the first in order). An
    /// entry sharing no counted bigram is not read. With every bigram counted and few passing,
    /// the answer is `sharing_enough`'s (an entry sharing none never passes: `qgrams` > `cut`).
    fn sharing_most(&self, qgrams: &[u64], window: Range<usize>, cut: usize, meter: &mut Meter) -> Vec<usize> {
        let mut lists: Vec<&[u32]> = qgrams.iter().map(|g| self.in_window(*g, &window)).collect();
        lists.sort_by_key(|postings| postings.len());
        let mut shared: FxHashMap<u32, u32> = FxHashMap::default();
        let (mut walked, mut uncounted) = (0, 0);
        for postings in lists {
            if walked + postings.len() > CAPPED_POSTINGS {
                uncounted += 1;
                continue;
            }
            walked += postings.len();
            for &e in postings {
                *shared.entry(e).or_default() += 1;
            }
            if !meter.tick(postings.len()) {
                return Vec::new();
            }
        }
        let mut passing: Vec<(u32, u32)> = shared
            .into_iter()
            .filter(|&(e, count)| count as usize + uncounted + cut >= qgrams.len().max(self.entries[e as usize].grams))
            .collect();
        if passing.len() > CAPPED_DISTANCES {
            passing.select_nth_unstable_by(CAPPED_DISTANCES - 1, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            passing.truncate(CAPPED_DISTANCES);
        }
        let mut out: Vec<usize> = passing.into_iter().map(|(e, _)| e as usize).collect();
        out.sort_unstable();
        out
    }

    /// The postings of bigram `g` within `window` (entry numbers, ascending).
    fn in_window(&self, g: u64, window: &Range<usize>) -> &[u32] {
        let Some(postings) = self.grams.get(&g) else { return &[] };
        let from = postings.partition_point(|&e| (e as usize) < window.start);
        let to = postings.partition_point(|&e| (e as usize) < window.end);
        &postings[from..to]
    }
}

/// Whether a folded query may match by the looser rules (word of a name, near, prefix): at least 3
/// code points (2 if it holds CJK), with a word that is not a common word (`is_common_word`),
/// unless the caller read it `as_name`.
fn is_significant<'a>(folded: &str, len: usize, mut words: impl Iterator<Item = &'a str>, as_name: bool) -> bool {
    let min = if folded.chars().any(is_cjk) { 2 } else { 3 };
    len >= min && (as_name || words.any(|w| !is_common_word(w)))
}

/// The set bits of `mask`, lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let at = mask.trailing_zeros();
        mask &= mask.wrapping_sub(1);
        (at < 64).then_some(at as usize)
    })
}

/// Marks bit `at` of `set`; whether it was clear.
fn first_try(set: &mut [u64], at: usize) -> bool {
    let (word, bit) = (at / 64, 1_u64 << (at % 64));
    let fresh = set[word] & bit == 0;
    set[word] |= bit;
    fresh
}

/// Short everyday English words that begin or end many names ("New York", "Old Trafford", "Big
/// Ben", "North Sea"): in a question they are almost always the plain word ("the new manager"), so
/// alone they never name anything by a loose rule. Sorted, for binary search.
const COMMON_WORDS: &[&str] = &[
    "all", "any", "bad", "best", "big", "black", "blue", "east", "few", "first", "free", "full", "gold", "good",
    "great", "green", "high", "just", "last", "late", "left", "less", "little", "long", "low", "main", "many", "more",
    "most", "much", "new", "next", "north", "now", "old", "one", "only", "open", "other", "own", "real", "red",
    "right", "same", "small", "some", "south", "top", "true", "two", "very", "west", "white", "whole", "young",
];

/// English function words: the closed classes (modal and auxiliary verbs, pronouns, determiners
/// and quantifiers, prepositions, conjunctions, and the wh- and deictic adverbs), listed whole
/// except where `STOP_WORDS` or `COMMON_WORDS` already hold a word. A closed class can be listed
/// completely, every member is among the most frequent English words, and none is what a
/// question asks about, so none names anything alone by a loose rule, though some are given
/// names too (`may`: May Chen; `will`, `can`). Sorted, for binary search.
const FUNCTION_WORDS: &[&str] = &[
    "about",
    "above",
    "across",
    "after",
    "against",
    "along",
    "although",
    "am",
    "among",
    "anybody",
    "anyone",
    "anything",
    "around",
    "because",
    "been",
    "before",
    "behind",
    "being",
    "below",
    "beneath",
    "beside",
    "besides",
    "between",
    "beyond",
    "both",
    "can",
    "cannot",
    "could",
    "did",
    "do",
    "does",
    "down",
    "during",
    "each",
    "either",
    "enough",
    "every",
    "everybody",
    "everyone",
    "everything",
    "except",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "inside",
    "its",
    "itself",
    "like",
    "may",
    "me",
    "might",
    "mine",
    "must",
    "my",
    "myself",
    "near",
    "neither",
    "nobody",
    "nor",
    "nothing",
    "off",
    "onto",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "outside",
    "over",
    "past",
    "per",
    "several",
    "shall",
    "she",
    "should",
    "since",
    "so",
    "somebody",
    "someone",
    "something",
    "than",
    "theirs",
    "them",
    "themselves",
    "those",
    "though",
    "through",
    "throughout",
    "till",
    "too",
    "toward",
    "towards",
    "under",
    "underneath",
    "unless",
    "until",
    "up",
    "upon",
    "us",
    "via",
    "we",
    "were",
    "what",
    "whatever",
    "when",
    "where",
    "whereas",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "within",
    "without",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Determiners: capitalised, still never a name alone ("The" is not "The Who", "Every" not
/// "Every Time"), unlike the modals and words that are also given names ("May", "Will").
const DETERMINERS: &[&str] = &["any", "each", "every", "that", "the", "these", "this", "those"];

/// Whether a capitalised common word (folded `word`) may be read as a name: a determiner never is.
#[must_use]
pub fn may_name_alone(word: &str) -> bool {
    !DETERMINERS.contains(&word)
}

/// Whether `word` is written in Title case: a capital, then a lowercase letter ("May", not
/// "MAY", whose capitals say nothing about whether it names someone).
#[must_use]
pub fn title_case(word: &str) -> bool {
    let mut rest = word.chars();
    rest.next().is_some_and(char::is_uppercase) && rest.any(char::is_lowercase)
}

/// Whether folded `word` is a stop word, a function word (`FUNCTION_WORDS`) or a short common
/// word (`COMMON_WORDS`): a word that never matches a name alone by a loose rule.
#[must_use]
pub fn is_common_word(word: &str) -> bool {
    is_stop_word(word) || FUNCTION_WORDS.binary_search(&word).is_ok() || COMMON_WORDS.binary_search(&word).is_ok()
}

fn score(how: MatchKind, query_len: usize, name_len: usize) -> f32 {
    // Lengths of names are far below 2^24, where f32 stops being exact.
    #[allow(clippy::cast_precision_loss)]
    let covered = query_len as f32 / name_len.max(1) as f32;
    match how {
        MatchKind::Exact => 1.0,
        MatchKind::CaseFolded => 0.9,
        MatchKind::WordOfName => 0.7 + 0.1 * covered.min(1.0),
        MatchKind::Near { distance } => {
            if distance <= 1 {
                0.5
            } else {
                0.4
            }
        }
        MatchKind::Prefix => 0.3 * covered.min(1.0),
    }
}

/// Byte ranges of the words of a folded name: UAX #29 word segments holding a letter or digit
/// (each Han or kana character is its own segment).
fn word_ranges(folded: &str) -> Vec<(usize, usize)> {
    folded
        .split_word_bound_indices()
        .filter(|(_, w)| w.chars().any(char::is_alphanumeric))
        .map(|(at, w)| (at, at + w.len()))
        .collect()
}

/// The distinct bigrams of `chars` with `EDGE` before and after, sorted.
fn bigrams(chars: &[char]) -> Vec<u64> {
    let mut out: Vec<u64> = std::iter::once(EDGE)
        .chain(chars.iter().map(|&c| c as u64))
        .chain(std::iter::once(EDGE))
        .collect::<Vec<u64>>()
        .windows(2)
        .map(|w| (w[0] << 21) | w[1])
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Entry numbers and distances fit u32: an index holds fewer than 2^32 names.
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).expect("fewer than 2^32 names")
}

/// Three rows of the distance table, reused across names.
#[derive(Default)]
struct Rows {
    two: Vec<usize>,
    one: Vec<usize>,
    cur: Vec<usize>,
}

/// The optimal-string-alignment distance (insert, delete, substitute, swap two neighbours) between
/// `a` and `b`, or `None` when it exceeds `max`. Only cells within `max` of the diagonal are
/// computed (any other is over `max`, stored as `max + 1`), and it stops at the first row whose
/// minimum exceeds `max`: later cells, swaps included, cost at least that minimum.
fn osa_within(a: &[char], b: &[char], max: usize, rows: &mut Rows) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let n = b.len();
    let over = max.saturating_add(1);
    let Rows { two, one, cur } = rows;
    one.clear();
    one.extend((0..=n).map(|j| if j <= max { j } else { over }));
    two.clear();
    two.resize(n + 1, over);
    cur.clear();
    cur.resize(n + 1, over);
    for i in 1..=a.len() {
        let lo = i.saturating_sub(max).max(1);
        let hi = i.saturating_add(max).min(n);
        // The cell left of the band: the first column, or outside the band (stale otherwise).
        cur[lo - 1] = if lo == 1 { i } else { over };
        let mut row_min = cur[lo - 1];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (one[j] + 1).min(cur[j - 1] + 1).min(one[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(two[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(two, one);
        std::mem::swap(one, cur);
    }
    Some(one[n]).filter(|&d| d <= max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};
    use std::collections::HashMap;

    const ALL: LookupOptions = LookupOptions { prefix: true, limit: usize::MAX, as_name: false };
    const NO_PREFIX: LookupOptions = LookupOptions { prefix: false, limit: usize::MAX, as_name: false };

    fn index(names: &[&str]) -> NameIndex {
        NameIndex::new(names.iter().enumerate().map(|(i, n)| (i as u64, *n)))
    }

    /// `(name, kind)` of every match, in order.
    fn found(idx: &NameIndex, query: &str, opts: LookupOptions) -> Vec<(String, MatchKind)> {
        idx.lookup(query, opts).into_iter().map(|m| (m.name, m.how)).collect()
    }

    fn kind_of(idx: &NameIndex, query: &str, name: &str) -> Option<MatchKind> {
        idx.lookup(query, ALL).into_iter().find(|m| m.name == name).map(|m| m.how)
    }

    fn osa(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        osa_within(&a, &b, usize::MAX, &mut Rows::default()).unwrap()
    }

    #[test]
    fn fold_normalises_space_case_width_and_accents() {
        assert_eq!(fold("  Priya \t\n RAMAN  "), "priya raman");
        assert_eq!(fold("Jos\u{e9} Nu\u{f1}ez"), "jose nunez");
        assert_eq!(fold("Jose\u{301}"), "jose");
        assert_eq!(fold("Nguy\u{1ec5}n"), "nguyen");
        assert_eq!(fold("Stra\u{df}e STRASSE"), "strasse strasse");
        assert_eq!(fold("\u{130}stanbul"), "istanbul");
        assert_eq!(fold("\u{fb01}nance \u{ff21}\u{ff22}\u{ff23}"), "finance abc");
        assert_eq!(fold("O\u{2019}Brien"), "o'brien");
        assert_eq!(
            fold("\u{39f}\u{394}\u{3a5}\u{3a3}\u{3a3}\u{395}\u{3a5}\u{3a3}"),
            fold("\u{3bf}\u{3b4}\u{3c5}\u{3c3}\u{3c3}\u{3b5}\u{3c5}\u{3c2}")
        );
        // Halfwidth kana become kana; kana voicing, Hangul syllables and emoji are kept.
        assert_eq!(fold("\u{ff76}\u{ff9e}"), "\u{30ac}");
        assert_ne!(fold("\u{304c}"), fold("\u{304b}"));
        assert_eq!(fold("\u{d55c}\u{ad6d}"), "\u{d55c}\u{ad6d}");
        assert_eq!(fold("\u{1F680} Rocket"), "\u{1F680} rocket");
        assert_eq!(fold(""), "");
        assert_eq!(fold(" \u{a0}\u{3000} "), "");
    }

    #[test]
    fn invisible_code_points_fold_as_they_show() {
        for pasted in [
            "Priya\u{200b}Raman",
            "Priya \u{200b}Raman",
            "\u{feff}Priya Raman\u{200b}",
            "Pri\u{ad}ya Ra\u{2060}man",
            "\u{200e}Priya Raman\u{200f}",
        ] {
            assert_eq!(fold(pasted), "priya raman", "{pasted:?}");
        }
        assert_eq!(fold("\u{200b}\u{feff}"), "");
        // ZWNJ and ZWJ spell words in some scripts, and join emoji: kept.
        assert_eq!(
            fold("\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{645}"),
            "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{645}"
        );
        assert_ne!(fold("\u{1F468}\u{200d}\u{1F4BB}"), fold("\u{1F468}\u{1F4BB}"));
    }

    #[test]
    fn exact_and_case_folded() {
        let idx = index(&["Priya Raman", "priya raman", "Jos\u{e9}"]);
        assert_eq!(
            found(&idx, "Priya Raman", ALL),
            [("Priya Raman".into(), MatchKind::Exact), ("priya raman".into(), MatchKind::CaseFolded)]
        );
        assert_eq!(kind_of(&idx, "  PRIYA   raman ", "Priya Raman"), Some(MatchKind::CaseFolded));
        assert_eq!(kind_of(&idx, "jose", "Jos\u{e9}"), Some(MatchKind::CaseFolded));
        assert_eq!(kind_of(&idx, "Jose\u{301}", "Jos\u{e9}"), Some(MatchKind::CaseFolded));
    }

    #[test]
    fn word_of_a_longer_name() {
        let idx = index(&["Priya Raman", "Raman Iyer", "Dr Priya Raman Iyer", "Jean-Luc Picard", "Priyanka"]);
        let got = found(&idx, "Priya", NO_PREFIX);
        assert_eq!(
            got,
            [("Priya Raman".into(), MatchKind::WordOfName), ("Dr Priya Raman Iyer".into(), MatchKind::WordOfName)]
        );
        // A run of whole words, in order.
        assert_eq!(kind_of(&idx, "raman iyer", "Dr Priya Raman Iyer"), Some(MatchKind::WordOfName));
        assert_eq!(kind_of(&idx, "Iyer Raman", "Dr Priya Raman Iyer"), None);
        assert_eq!(kind_of(&idx, "Luc", "Jean-Luc Picard"), Some(MatchKind::WordOfName));
        assert_eq!(kind_of(&idx, "Lu", "Jean-Luc Picard"), None, "two letters");
        assert_eq!(kind_of(&idx, "Picard", "Jean-Luc Picard"), Some(MatchKind::WordOfName));
        assert_eq!(kind_of(&idx, "Jean-Luc", "Jean-Luc Picard"), Some(MatchKind::WordOfName));
        // Part of a word is not a word.
        assert_eq!(kind_of(&idx, "Ram", "Priya Raman"), None);
    }

    #[test]
    fn near_spellings_scale_with_length() {
        let idx = index(&["Priya", "John", "Bob", "Alexandra Petrova", "Katherine", "Priya Raman"]);
        assert_eq!(kind_of(&idx, "Pryia", "Priya"), Some(MatchKind::Near { distance: 1 }), "swap");
        assert_eq!(kind_of(&idx, "Jonh", "John"), Some(MatchKind::Near { distance: 1 }));
        assert_eq!(kind_of(&idx, "Jon", "John"), None, "3 letters allow no edit");
        assert_eq!(kind_of(&idx, "Rob", "Bob"), None);
        assert_eq!(kind_of(&idx, "Pria", "Priya"), Some(MatchKind::Near { distance: 1 }));
        assert_eq!(kind_of(&idx, "Prria", "Priya"), None, "two edits at 5 letters");
        assert_eq!(kind_of(&idx, "Katharina", "Katherine"), Some(MatchKind::Near { distance: 2 }));
        assert_eq!(kind_of(&idx, "Aleksandra Petrova", "Alexandra Petrova"), Some(MatchKind::Near { distance: 2 }));
        assert_eq!(kind_of(&idx, "Aleksandr Petrov", "Alexandra Petrova"), None);
        assert_eq!(kind_of(&idx, "Priya Ramen", "Priya Raman"), Some(MatchKind::Near { distance: 1 }));
        assert_eq!(kind_of(&idx, "Prya Ramen", "Priya Raman"), Some(MatchKind::Near { distance: 2 }));
        assert_eq!(allowed_distance(3), 0);
        assert_eq!(allowed_distance(4), 1);
        assert_eq!(allowed_distance(7), 1);
        assert_eq!(allowed_distance(8), 2);
    }

    #[test]
    fn prefixes_only_when_asked() {
        let idx = index(&["Priyanka Shah", "Priya Raman", "Pr Group"]);
        assert_eq!(found(&idx, "Priy", NO_PREFIX), []);
        assert_eq!(
            found(&idx, "priy", ALL),
            [("Priya Raman".into(), MatchKind::Prefix), ("Priyanka Shah".into(), MatchKind::Prefix)]
        );
        assert_eq!(found(&idx, "Pr", ALL), [], "under three letters");
    }

    #[test]
    fn order_kinds_then_distance_then_length() {
        let idx = index(&[
            "Priyanka Shah",
            "Pria",
            "Priya Raman",
            "PRIYA",
            "Priya",
            "Priya Devi Raman",
            "Priyas",
            "Briya",
            "Xpriyaz",
        ]);
        let got = idx.lookup("Priya", ALL);
        let names: Vec<(&str, MatchKind)> = got.iter().map(|m| (m.name.as_str(), m.how)).collect();
        assert_eq!(
            names,
            [
                ("Priya", MatchKind::Exact),
                ("PRIYA", MatchKind::CaseFolded),
                ("Priya Raman", MatchKind::WordOfName),
                ("Priya Devi Raman", MatchKind::WordOfName),
                ("Pria", MatchKind::Near { distance: 1 }),
                ("Briya", MatchKind::Near { distance: 1 }),
                ("Priyas", MatchKind::Near { distance: 1 }),
                ("Priyanka Shah", MatchKind::Prefix),
            ]
        );
        assert!(got.windows(2).all(|w| w[0].score >= w[1].score), "{got:?}");
        assert!(got.iter().all(|m| m.score > 0.0 && m.score <= 1.0));
        assert_eq!(idx.lookup("Priya", LookupOptions { prefix: true, limit: 3, as_name: false }).len(), 3);
        assert!(idx.lookup("Priya", LookupOptions { prefix: true, limit: 0, as_name: false }).is_empty());
    }

    #[test]
    fn short_and_common_words_never_match_alone() {
        let idx = index(&["The", "The Who", "Thea", "Them", "Al", "Al Gore", "Bank of the Pines", "Ali", "New York"]);
        assert_eq!(found(&idx, "the", ALL), [("The".into(), MatchKind::CaseFolded)]);
        assert_eq!(found(&idx, "THE", ALL), [("The".into(), MatchKind::CaseFolded)]);
        assert_eq!(found(&idx, "Al", ALL), [("Al".into(), MatchKind::Exact)]);
        assert_eq!(found(&idx, "of the", ALL), []);
        assert_eq!(found(&idx, "", ALL), []);
        assert_eq!(found(&idx, "  ", ALL), []);
        assert!(idx.did_you_mean("the", 5).is_empty());
        // A stop word inside a longer query is fine.
        assert_eq!(kind_of(&idx, "of the Pines", "Bank of the Pines"), Some(MatchKind::WordOfName));
        // A short common word never names a longer name ("the new manager" is not New York).
        assert_eq!(found(&idx, "new", ALL), []);
        assert_eq!(found(&idx, "New", ALL), []);
        assert_eq!(kind_of(&idx, "York", "New York"), Some(MatchKind::WordOfName));
        assert_eq!(kind_of(&idx, "Gore", "Al Gore"), Some(MatchKind::WordOfName));
    }

    #[test]
    fn function_words_never_name_alone_unless_read_as_names() {
        let idx = index(&["May Chen", "Will Turner", "Can Yaman", "Mayfield", "Shall", "Priya Raman"]);
        for q in ["may", "May", "MAY", "can", "Can", "will", "would", "must", "might", "shall we"] {
            assert_eq!(found(&idx, q, ALL), [], "{q}");
        }
        assert!(idx.did_you_mean("may", 5).is_empty());
        // A name that is the word itself still matches it exactly or case-folded.
        assert_eq!(found(&idx, "shall", ALL), [("Shall".into(), MatchKind::CaseFolded)]);
        // Whole names and their other words are unaffected.
        assert_eq!(found(&idx, "may chen", ALL), [("May Chen".into(), MatchKind::CaseFolded)]);
        assert_eq!(kind_of(&idx, "Chen", "May Chen"), Some(MatchKind::WordOfName));
        assert_eq!(kind_of(&idx, "Priya", "Priya Raman"), Some(MatchKind::WordOfName));
        // Read as a name by the caller ("May said what?"), the word matches by the loose rules.
        let as_name = LookupOptions { as_name: true, ..ALL };
        let got: Vec<(String, MatchKind)> = idx.lookup("May", as_name).into_iter().map(|m| (m.name, m.how)).collect();
        assert_eq!(got, [("May Chen".into(), MatchKind::WordOfName), ("Mayfield".into(), MatchKind::Prefix)]);
        assert!(is_common_word("may") && is_common_word("will") && is_common_word("new") && !is_common_word("chen"));
        assert!(FUNCTION_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(FUNCTION_WORDS.iter().all(|w| !is_stop_word(w) && COMMON_WORDS.binary_search(w).is_err()));
    }

    #[test]
    fn cjk_and_emoji() {
        let idx = index(&["山田太郎", "山田", "東京タワー", "김민준 교수", "\u{1F680}", "\u{1F680} Rocket Lab"]);
        assert_eq!(kind_of(&idx, "山田", "山田太郎"), Some(MatchKind::WordOfName));
        assert_eq!(kind_of(&idx, "山田", "山田"), Some(MatchKind::Exact));
        assert_eq!(found(&idx, "山", ALL), [], "one CJK character is too short");
        assert_eq!(kind_of(&idx, "東京", "東京タワー"), Some(MatchKind::WordOfName));
        assert_eq!(kind_of(&idx, "김민준", "김민준 교수"), Some(MatchKind::WordOfName));
        assert_eq!(kind_of(&idx, "山田太朗", "山田太郎"), Some(MatchKind::Near { distance: 1 }));
        assert_eq!(kind_of(&idx, "東京ﾀﾜｰ", "東京タワー"), Some(MatchKind::CaseFolded));
        assert_eq!(found(&idx, "\u{1F680}", ALL), [("\u{1F680}".into(), MatchKind::Exact)]);
        assert_eq!(kind_of(&idx, "rocket", "\u{1F680} Rocket Lab"), Some(MatchKind::WordOfName));
        assert_eq!(
            kind_of(&idx, "\u{1F681} Rocket Lab", "\u{1F680} Rocket Lab"),
            Some(MatchKind::Near { distance: 1 })
        );
    }

    #[test]
    fn ties_are_deterministic() {
        let names = ["Sam Lee", "Sam Li", "sam lee", "Sam Lee", "Sam Low", "Samuel"];
        let a =
            NameIndex::new([(9, names[0]), (3, names[1]), (5, names[2]), (1, names[3]), (7, names[4]), (2, names[5])]);
        let b =
            NameIndex::new([(2, names[5]), (7, names[4]), (1, names[3]), (5, names[2]), (3, names[1]), (9, names[0])]);
        for q in ["Sam Lee", "sam", "Sam Loo", "sam l"] {
            assert_eq!(a.lookup(q, ALL), b.lookup(q, ALL), "{q}");
        }
        let ids: Vec<u64> = a.lookup("Sam Lee", ALL).iter().map(|m| m.id).collect();
        assert_eq!(ids[..3], [1, 9, 5], "equal names by id");
    }

    #[test]
    fn held_and_abbreviated_names() {
        let idx = index(&["Priya Raman", "Priya Shah", "Acme Robotics", "Acme", "The Who", "New York"]);
        let held = |q: &str| -> Vec<String> { idx.held_or_abbreviated(q, 5).into_iter().map(|(_, n)| n).collect() };
        assert_eq!(held("Dr. Priya Raman"), ["Priya Raman"]);
        assert_eq!(held("Priya Raman Iyer"), ["Priya Raman"]);
        assert_eq!(held("Acme Robotics Inc"), ["Acme Robotics", "Acme"]);
        assert_eq!(held("Priya R."), ["Priya Raman"]);
        assert_eq!(held("P. Raman"), ["Priya Raman"]);
        assert_eq!(held("Priya S"), ["Priya Shah"]);
        assert!(held("the new guy").is_empty(), "common words alone hold nothing: {:?}", held("the new guy"));
        assert!(held("Priya").is_empty(), "one word is lookup's (word of a name)");
        assert!(held("Raman Priya").is_empty());
        assert_eq!(idx.held_or_abbreviated("Acme Robotics Inc", 1).len(), 1);
    }

    /// `n` names of 330 words `aa` and one of their own (`… aa e7`), as an audit stored them.
    fn repeated_words(n: usize) -> NameIndex {
        let words = ["aa"; 330].join(" ");
        let names: Vec<String> = (0..n).map(|i| format!("{words} e{i}")).collect();
        NameIndex::new(names.iter().enumerate().map(|(i, n)| (i as u64, n.as_str())))
    }

    #[test]
    fn matching_repeated_words_costs_a_few_steps_per_stored_word() {
        // Found by an audit: a subject of 330 words `aa` and `nomatch`, against 202 names of
        // the same words, held the event loop for 13 s (about words² steps per stored word).
        let idx = repeated_words(300);
        let stored_words = 300 * 331;
        let most = (MAX_MATCH_WORDS as u64 + 8) * stored_words;
        for words in [330, 33, 32, 31, 8, 2] {
            let aa = ["aa"; 330][..words].join(" ");
            for query in [format!("{aa} nomatch"), aa.clone(), format!("{aa} e7"), format!("e7 {aa}")] {
                let mut meter = Meter::default();
                let held = idx.held_or_abbreviated_metered(&query, 16, &mut meter, Effort::Whole);
                let found = idx.lookup_metered(&query, ALL, &mut meter, Effort::Whole);
                assert!(
                    meter.steps() <= most,
                    "{words} words: {} steps for {stored_words} stored words",
                    meter.steps()
                );
                if query.ends_with("nomatch") {
                    assert!(held.is_empty() && found.is_empty(), "{words} words");
                }
                if query == aa {
                    // Words of every name up to the words a word rule reads; their start past that.
                    let how = if words <= MAX_MATCH_WORDS { MatchKind::WordOfName } else { MatchKind::Prefix };
                    assert!(found.len() == 300 && found.iter().all(|m| m.how == how), "{words} words");
                }
            }
        }
    }

    #[test]
    fn a_long_match_gives_way_to_its_deadline() {
        use crate::budget::within;
        use std::time::Duration;
        let idx = repeated_words(300);
        let held = format!("{} nomatch", ["aa"; 31].join(" "));
        let word_of = ["aa"; 31].join(" ");
        // In time, the answers are whole; past the deadline they are void, though no page is read.
        let ample = Duration::from_secs(600);
        assert_eq!(within(ample, || Ok(idx.held_or_abbreviated(&held, 16))).map(Result::unwrap), Some(vec![]));
        assert_eq!(within(ample, || Ok(idx.lookup(&word_of, ALL).len())).map(Result::unwrap), Some(300));
        assert!(within(Duration::ZERO, || Ok(idx.held_or_abbreviated(&held, 16))).is_none());
        assert!(within(Duration::ZERO, || Ok(idx.lookup(&word_of, ALL))).is_none());
        assert!(within(Duration::ZERO, || Ok(idx.did_you_mean(&word_of, 3))).is_none());
        assert!(within(Duration::ZERO, || Ok(idx.names_with_word(&word_of, 3))).is_none());
    }

    #[test]
    fn did_you_mean_offers_near_then_prefix() {
        let idx = index(&["Priya Raman", "Priya Ramen", "Priya Ramanathan", "Priya Raman", "Raman"]);
        assert_eq!(idx.did_you_mean("Priya Ramn", 5), ["Priya Raman", "Priya Ramen"]);
        assert_eq!(idx.did_you_mean("priya rama", 5), ["Priya Raman", "Priya Ramen", "Priya Ramanathan"]);
        assert_eq!(idx.did_you_mean("priya rama", 1), ["Priya Raman"]);
        assert!(idx.did_you_mean("Raman", 5).is_empty(), "word-of and exact are not suggestions");
        assert!(idx.did_you_mean("zzzz", 5).is_empty());
    }

    #[test]
    fn bounded_distance() {
        let mut rows = Rows::default();
        let v = |s: &str| s.chars().collect::<Vec<char>>();
        assert_eq!(osa_within(&v("kitten"), &v("sitting"), 3, &mut rows), Some(3));
        assert_eq!(osa_within(&v("kitten"), &v("sitting"), 2, &mut rows), None);
        assert_eq!(osa_within(&v("ab"), &v("ba"), 1, &mut rows), Some(1));
        assert_eq!(osa_within(&v(""), &v("ab"), 2, &mut rows), Some(2));
        assert_eq!(osa_within(&v("abc"), &v("abc"), 0, &mut rows), Some(0));
        assert_eq!(osa("ca", "abc"), 3, "optimal string alignment, not unrestricted Damerau");
    }

    /// Names from a few syllables, so that many are near one another.
    fn generated_names(n: usize, rng: &mut StdRng) -> Vec<String> {
        const SYL: &[&str] = &[
            "ka", "ri", "to", "ma", "ne", "sa", "lo", "vi", "an", "el", "or", "mi", "ra", "jo", "di", "pe", "su", "ta",
            "ly", "ben", "dor", "shi", "ya", "zu", "qu", "fen", "gar", "hol", "ix", "wen",
        ];
        let word = |rng: &mut StdRng| {
            let syllables = rng.random_range(1..=4);
            let mut w: String = (0..syllables).map(|_| SYL[rng.random_range(0..SYL.len())]).collect();
            w[..1].make_ascii_uppercase();
            w
        };
        (0..n)
            .map(|_| {
                let words = rng.random_range(1..=3);
                (0..words).map(|_| word(rng)).collect::<Vec<_>>().join(" ")
            })
            .collect()
    }

    /// Every name within the allowed distance of `query` is found by the index, at the right kind
    /// (`folded` holds the folded `names`, by id).
    fn check_near_is_complete(idx: &NameIndex, folded: &[String], query: &str) {
        let q = fold(query);
        let qwords: Vec<&str> = word_ranges(&q).into_iter().map(|(a, b)| &q[a..b]).collect();
        let qlen = q.chars().count();
        let qchars: Vec<char> = q.chars().collect();
        let got: HashMap<u64, MatchKind> = idx.lookup(query, ALL).into_iter().map(|m| (m.id, m.how)).collect();
        let max = allowed_distance(qlen) as usize;
        let mut rows = Rows::default();
        for (i, name) in folded.iter().enumerate() {
            let how = got.get(&(i as u64)).copied();
            if *name == q {
                assert!(matches!(how, Some(MatchKind::Exact | MatchKind::CaseFolded)), "{query:?} / {name:?}");
            } else if is_significant(&q, qlen, qwords.iter().copied(), false) {
                let chars: Vec<char> = name.chars().collect();
                if let Some(d) = osa_within(&qchars, &chars, max, &mut rows) {
                    assert!(
                        how == Some(MatchKind::Near { distance: to_u32(d) }) || how == Some(MatchKind::WordOfName),
                        "{query:?} / {name:?}: {how:?} at {d}"
                    );
                }
            }
            if let Some(MatchKind::Near { distance }) = how {
                assert_eq!(osa(&q, name), distance as usize);
            }
        }
    }

    #[test]
    fn scale_100k_names() {
        let mut rng = StdRng::seed_from_u64(7);
        let names = generated_names(100_000, &mut rng);
        let started = std::time::Instant::now();
        let idx = NameIndex::new(names.iter().enumerate().map(|(i, n)| (i as u64, n.as_str())));
        let built = started.elapsed();

        let mut queries: Vec<(usize, String)> = Vec::new();
        for k in 0..1_000 {
            let i = rng.random_range(0..names.len());
            let name = &names[i];
            let query = match k % 3 {
                0 => name.clone(),
                1 => {
                    // One substitution.
                    let mut chars: Vec<char> = name.to_lowercase().chars().collect();
                    let at = rng.random_range(0..chars.len());
                    chars[at] = char::from(b'a' + rng.random_range(0..26_u8));
                    chars.into_iter().collect()
                }
                _ => name.split(' ').next_back().unwrap_or(name).to_owned(),
            };
            queries.push((i, query));
        }
        let mut by_kind = [std::time::Duration::ZERO; 3];
        let started = std::time::Instant::now();
        let results: Vec<Vec<NameMatch>> = queries
            .iter()
            .enumerate()
            .map(|(k, (_, q))| {
                let one = std::time::Instant::now();
                let got = idx.lookup(q, ALL);
                by_kind[k % 3] += one.elapsed();
                got
            })
            .collect();
        let took = started.elapsed();
        let started = std::time::Instant::now();
        for (_, q) in &queries {
            assert!(idx.lookup(q, LookupOptions { prefix: true, limit: 20, as_name: false }).len() <= 20);
        }
        let took_20 = started.elapsed();
        eprintln!(
            "names: built 100,000 in {built:?}; 1,000 lookups in {took:?} ({:?} each; whole names {:?}, \
             one typo {:?}, last words {:?} each); with a limit of 20: {:?} each",
            took / 1_000,
            by_kind[0] / 334,
            by_kind[1] / 333,
            by_kind[2] / 333,
            took_20 / 1_000
        );

        for (k, ((i, query), got)) in queries.iter().zip(&results).enumerate() {
            let name = &names[*i];
            let hit = got.iter().find(|m| m.id == *i as u64).map(|m| m.how);
            match k % 3 {
                0 => {
                    assert_eq!(got[0].how, MatchKind::Exact);
                    assert_eq!(&got[0].name, name);
                    assert_eq!(hit, Some(MatchKind::Exact));
                }
                1 => {
                    let significant = fold(query).chars().count() >= 3;
                    let max = allowed_distance(fold(query).chars().count());
                    if fold(query) == fold(name) {
                        assert_eq!(hit, Some(MatchKind::CaseFolded));
                    } else if significant && max >= 1 {
                        assert!(matches!(hit, Some(MatchKind::Near { distance: 1 })), "{query} / {name}: {hit:?}");
                    }
                }
                _ => {
                    let q = fold(query);
                    if q == fold(name) {
                        assert!(matches!(hit, Some(MatchKind::Exact | MatchKind::CaseFolded)));
                    } else if q.chars().count() >= 3 && !is_common_word(&q) {
                        assert_eq!(hit, Some(MatchKind::WordOfName), "{query} / {name}");
                    }
                }
            }
        }
        let folded: Vec<String> = names.iter().map(|n| fold(n)).collect();
        for (_, query) in queries.iter().step_by(50) {
            check_near_is_complete(&idx, &folded, query);
        }
    }

    proptest! {
        #[test]
        fn every_name_finds_itself_and_lookups_never_panic(
            names in prop::collection::vec(any::<String>(), 0..12),
            query in any::<String>(),
        ) {
            let idx = NameIndex::new(names.iter().enumerate().map(|(i, n)| (i as u64, n.as_str())));
            for (i, name) in names.iter().enumerate() {
                let got = idx.lookup(name, ALL);
                prop_assert!(got.iter().any(|m| m.id == i as u64 && m.how == MatchKind::Exact));
                prop_assert_eq!(got[0].how, MatchKind::Exact);
            }
            let got = idx.lookup(&query, ALL);
            prop_assert!(got.windows(2).all(|w| w[0].how.rank() <= w[1].how.rank() && w[0].score >= w[1].score));
            let _ = idx.did_you_mean(&query, 3);
            prop_assert_eq!(fold(&fold(&query)), fold(&query));
        }

        #[test]
        fn ascii_names_fold_as_the_general_path_folds_them(name in "[ -~\t\n\x0b\x0c\r]{0,24}") {
            let general = fold_text(&name).split_whitespace().collect::<Vec<_>>().join(" ");
            prop_assert_eq!(fold(&name), general);
        }

        #[test]
        fn folds_to_says_whether_a_name_folds_to_a_key(
            name in "[ aAbB\t]{0,8}|\\PC{0,6}",
            other in "[ aAbB\t]{0,8}|\\PC{0,6}",
        ) {
            prop_assert!(folds_to(&name, &fold(&name)));
            prop_assert_eq!(folds_to(&name, &fold(&other)), fold(&name) == fold(&other));
            prop_assert_eq!(folds_to(&name, &other), fold(&name) == other);
        }

        #[test]
        fn near_matches_agree_with_a_full_scan(
            names in prop::collection::vec("[abAB ]{0,10}", 0..40),
            query in "[abAB ]{0,10}",
        ) {
            let idx = NameIndex::new(names.iter().enumerate().map(|(i, n)| (i as u64, n.as_str())));
            let folded: Vec<String> = names.iter().map(|n| fold(n)).collect();
            check_near_is_complete(&idx, &folded, &query);
        }
    }
}

#[cfg(test)]
#[path = "names_capped_tests.rs"]
mod capped_tests;
