//! The hybrid `query` of `note_list`: a token channel (BM25 over the full-text tokenizer's terms of
//! each note's key and value) and a trigram channel (the share of the query's character trigrams
//! found in the note, so partial words, identifiers and typos still match), fused by reciprocal
//! rank (k = 60). What each channel reads of a note is `search_text.rs`.
//!
//! Scoring only ever sees notes the caller may read after the filters, and its statistics (note
//! count, document frequency, average length) are taken over the visible notes that match the
//! query in either channel, so nothing invisible influences a rank, and the index (`index.rs`)
//! and a scan of texts (for `as_of` reads and queries under three characters) rank alike. Ties
//! keep the candidates' order, so results are deterministic.

use super::search_text::SearchText;
use crate::knowledge::RRF_K;
use crate::text::{fold_text, tokens};
use std::collections::BTreeSet;

/// BM25 parameters (the usual ones).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A note enters the trigram channel when it holds at least this share of the query's trigrams.
const MIN_TRIGRAM_SHARE: f64 = 0.5;
/// The fewest of `total` query trigrams a note must hold to enter the trigram channel.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small counts
pub(crate) fn min_grams(total: usize) -> usize {
    ((total as f64 * MIN_TRIGRAM_SHARE).ceil() as usize).max(1)
}

/// Trigrams are taken from this many leading characters of a note's text (bounds index writes).
pub(crate) const GRAM_CHARS: usize = 8192;

/// A query, analysed once.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    /// Distinct index terms, in first-seen order.
    pub terms: Vec<String>,
    /// Distinct folded character trigrams.
    pub grams: BTreeSet<String>,
    /// The folded query when it is too short for trigrams (matched as a substring).
    pub short: Option<String>,
}

impl Query {
    pub(crate) fn new(text: &str) -> Query {
        let mut terms: Vec<String> = Vec::new();
        for t in tokens(text) {
            if !terms.contains(&t.term) {
                terms.push(t.term);
            }
        }
        let lower = fold_text(text.trim());
        let grams = grams(&lower);
        let short = (grams.is_empty() && !lower.is_empty()).then_some(lower);
        Query { terms, grams, short }
    }
}

/// The trigrams of a text (folded as names are, `fold_text`: case, accents, NFC/NFD; first
/// `GRAM_CHARS` characters); none holds NUL.
pub(crate) fn grams(text: &str) -> BTreeSet<String> {
    let chars: Vec<char> = fold_text(text).chars().take(GRAM_CHARS).collect();
    chars.windows(3).filter(|w| !w.contains(&'\0')).map(|w| w.iter().collect()).collect()
}

/// The trigrams of a text as `grams` cuts them, each packed in a `u64` (`pack_gram`), sorted
/// and distinct: a write cuts them for the old and the new version of its note and stores only
/// the difference, and numbers spare that the allocation of a string per trigram.
pub(crate) fn packed_grams(text: &str) -> Vec<u64> {
    let chars: Vec<char> = fold_text(text).chars().take(GRAM_CHARS).collect();
    let mut packed: Vec<u64> =
        chars.windows(3).filter(|w| !w.contains(&'\0')).map(|w| pack_gram([w[0], w[1], w[2]])).collect();
    packed.sort_unstable();
    packed.dedup();
    packed
}

/// A trigram as a number: its chars' code points (21 bits each) from the high end, so numeric
/// order is the order of the trigrams' UTF-8 strings.
fn pack_gram(g: [char; 3]) -> u64 {
    (u64::from(g[0]) << 42) | (u64::from(g[1]) << 21) | u64::from(g[2])
}

/// The trigram a `pack_gram` number stands for.
pub(crate) fn unpack_gram(packed: u64) -> String {
    [packed >> 42, (packed >> 21) & 0x1f_ffff, packed & 0x1f_ffff]
        .into_iter()
        .map(|c| u32::try_from(c).ok().and_then(char::from_u32).expect("a packed trigram holds chars"))
        .collect()
}

/// What the channels need to know of one note.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Features {
    /// Occurrences of each query term, in `Query::terms` order.
    pub tf: Counts,
    /// Terms in the note.
    pub len: u32,
    /// Query trigrams the note holds.
    pub grams: u32,
    /// Whether a short query occurs in the note's text.
    pub substring: bool,
}

/// Per-term counts, inline for up to `INLINE` terms (a query's usual size), so that each of the
/// thousands of candidates a common word yields costs no allocation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Counts {
    Inline([u32; INLINE], u8),
    Heap(Vec<u32>),
}

const INLINE: usize = 4;

impl Counts {
    /// `n` zeros.
    pub(crate) fn zeros(n: usize) -> Counts {
        match u8::try_from(n) {
            Ok(len) if n <= INLINE => Counts::Inline([0; INLINE], len),
            _ => Counts::Heap(vec![0; n]),
        }
    }
}

impl Default for Counts {
    fn default() -> Self {
        Counts::zeros(0)
    }
}

impl std::ops::Deref for Counts {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        match self {
            Counts::Inline(counts, len) => &counts[..usize::from(*len)],
            Counts::Heap(counts) => counts,
        }
    }
}

impl std::ops::DerefMut for Counts {
    fn deref_mut(&mut self) -> &mut [u32] {
        match self {
            Counts::Inline(counts, len) => &mut counts[..usize::from(*len)],
            Counts::Heap(counts) => counts,
        }
    }
}

/// The features of a note's search text for `query`, read from the text itself.
pub(crate) fn features(query: &Query, note: &SearchText) -> Features {
    let SearchText { text, terms } = note;
    let mut tf = Counts::zeros(query.terms.len());
    for (count, t) in tf.iter_mut().zip(&query.terms) {
        *count = u32::try_from(terms.iter().filter(|d| *d == t).count()).unwrap_or(u32::MAX);
    }
    let have = grams(text);
    Features {
        tf,
        len: u32::try_from(terms.len()).unwrap_or(u32::MAX),
        grams: u32::try_from(query.grams.iter().filter(|g| have.contains(*g)).count()).unwrap_or(u32::MAX),
        substring: query.short.as_ref().is_some_and(|s| fold_text(text).contains(s.as_str())),
    }
}

/// One match: which candidate, its 1-based rank in each channel that found it, and its fused score.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ranked {
    pub index: usize,
    /// 1-based rank in the token and in the trigram channel; 0 where the channel did not find it.
    pub by_channel: [usize; 2],
    pub score: f64,
}

impl Ranked {
    /// The channels that found the match, with its rank in each, token first.
    pub(crate) fn ranks(&self) -> impl Iterator<Item = (&'static str, usize)> + '_ {
        CHANNELS.into_iter().zip(self.by_channel).filter(|(_, r)| *r > 0)
    }
}

/// The channels' names, in `Ranked::by_channel` order.
const CHANNELS: [&str; 2] = ["token", "trigram"];

/// The matches of `fuse`: the best first, and how many there are in all.
pub(crate) struct Fused {
    /// The best `keep` matches (all, when fewer), best first.
    pub best: Vec<Ranked>,
    /// How many candidates match.
    pub total: usize,
}

/// A sort key that orders by `score` descending, then by `index` ascending: `score` is positive
/// and finite, so its bits order like its value.
fn key(score: f64, index: usize) -> u128 {
    debug_assert!(score > 0.0 && score.is_finite());
    (u128::from(!score.to_bits()) << 64) | index as u128
}

/// The candidate index in a `key`.
#[allow(clippy::cast_possible_truncation)] // the low 64 bits hold an index
fn index_of(key: u128) -> usize {
    key as u64 as usize
}

/// The candidates that match `query`, the best `keep` of them ranked, best first. Every match is
/// ranked in the trigram channel (by counting: its score takes few values), but the token
/// channel ranks only its best `token_head(keep)` at first: when no token match beyond them can
/// make the page, the rest go unsorted; else they are sorted too. Only the best `keep` are put
/// in fused order: a page needs no more.
pub(crate) fn fuse(query: &Query, docs: &[Features], keep: usize) -> Fused {
    fuse_with_head(query, docs, keep, token_head(keep)).0
}

/// How many of the token channel's best `fuse` ranks before it tries to settle the page: enough
/// that a match beyond them (whose token rank adds at most 1/(60 + head)) almost never ties a
/// page's worst, few enough that selecting and sorting them costs a fraction of a full sort.
fn token_head(keep: usize) -> usize {
    keep.saturating_mul(8).max(256)
}

/// `fuse`, ranking the token channel's best `head` first; also whether the page was settled
/// with the head alone.
#[allow(clippy::cast_precision_loss)] // counts and ranks are far below 2^52
fn fuse_with_head(query: &Query, docs: &[Features], keep: usize, head: usize) -> (Fused, bool) {
    let token_hit = |f: &Features| f.tf.iter().any(|&t| t > 0);
    let trigram_share = |f: &Features| trigram_share(query, f);
    let matching: Vec<usize> =
        (0..docs.len()).filter(|&i| token_hit(&docs[i]) || trigram_share(&docs[i]) > 0.0).collect();
    let n = matching.len() as f64;
    // Lengths are known for notes that hold a query term (the index keeps them on term postings).
    let (sum, count) = matching
        .iter()
        .filter(|&&i| token_hit(&docs[i]))
        .fold((0.0, 0.0), |(s, c), &i| (s + f64::from(docs[i].len), c + 1.0));
    let avg = (sum / f64::max(count, 1.0)).max(1.0);
    let idf: Vec<f64> = (0..query.terms.len())
        .map(|t| {
            let d = matching.iter().filter(|&&i| docs[i].tf[t] > 0).count() as f64;
            ((n - d + 0.5) / (d + 0.5) + 1.0).ln()
        })
        .collect();
    let bm25 = |f: &Features| -> f64 {
        f.tf.iter()
            .zip(&idf)
            .filter(|(tf, _)| **tf > 0)
            .map(|(&tf, &idf)| {
                let tf = f64::from(tf);
                idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * f64::from(f.len) / avg))
            })
            .sum()
    };
    // Per candidate position, its 1-based rank in each channel (0: not found there).
    let mut ranks: Vec<[u32; 2]> = vec![[0; 2]; docs.len()];
    rank_trigrams(query, docs, &matching, &mut ranks);
    let mut token: Vec<u128> =
        matching.iter().map(|&i| (i, bm25(&docs[i]))).filter(|(_, s)| *s > 0.0).map(|(i, s)| key(s, i)).collect();
    let ranked = rank_head(&mut token, head, &mut ranks);
    if ranked < token.len() {
        if let Some(best) = page_within_head(&matching, &ranks, &token[ranked..], ranked, keep) {
            return (Fused { best, total: matching.len() }, true);
        }
        token[ranked..].sort_unstable();
        set_ranks(&token[ranked..], ranked, &mut ranks);
    }
    let mut keys: Vec<u128> = matching.iter().map(|&i| key(fused(ranks[i]), i)).collect();
    (Fused { best: best_of(&mut keys, keep, &ranks), total: matching.len() }, false)
}

/// A note's trigram-channel score: the share of the query's trigrams it holds, when at least
/// `MIN_TRIGRAM_SHARE`; for a query too short for trigrams, 1 when it holds the query.
#[allow(clippy::cast_precision_loss)] // trigram counts are far below 2^52
fn trigram_share(query: &Query, f: &Features) -> f64 {
    if query.grams.is_empty() {
        if f.substring { 1.0 } else { 0.0 }
    } else {
        let share = f64::from(f.grams) / query.grams.len() as f64;
        if share >= MIN_TRIGRAM_SHARE { share } else { 0.0 }
    }
}

/// Ranks the trigram channel into `ranks[..][1]` without sorting: a note's share is its count
/// of query trigrams over the query's (or its substring flag), so counts order notes exactly as
/// shares do (distinct counts below 2^52 give distinct quotients), and notes of one count keep
/// candidate order, as ties do. Each count's notes then take consecutive ranks after those of
/// every higher count.
fn rank_trigrams(query: &Query, docs: &[Features], matching: &[usize], ranks: &mut [[u32; 2]]) {
    let level = |f: &Features| {
        if trigram_share(query, f) == 0.0 {
            0
        } else if query.grams.is_empty() {
            1
        } else {
            f.grams as usize
        }
    };
    let levels: Vec<usize> = matching.iter().map(|&i| level(&docs[i])).collect();
    let mut next = vec![0u32; levels.iter().max().map_or(0, |m| m + 1)];
    for &l in &levels {
        next[l] += 1;
    }
    // From the highest count down, the rank its first note takes (level 0 is outside).
    let mut rank = 1;
    for l in (1..next.len()).rev() {
        let notes = next[l];
        next[l] = rank;
        rank += notes;
    }
    for (&i, &l) in matching.iter().zip(&levels) {
        if l > 0 {
            ranks[i][1] = next[l];
            next[l] += 1;
        }
    }
}

/// Puts the best `head` of the token channel's `keys` first, in order, ranks them into
/// `ranks[..][0]`, and marks the rest `UNRANKED`; returns how many it ranked.
fn rank_head(keys: &mut [u128], head: usize, ranks: &mut [[u32; 2]]) -> usize {
    if head < keys.len() {
        keys.select_nth_unstable(head);
        keys[..head].sort_unstable();
        for &k in &keys[head..] {
            ranks[index_of(k)][0] = UNRANKED;
        }
    } else {
        keys.sort_unstable();
    }
    let ranked = head.min(keys.len());
    set_ranks(&keys[..ranked], 0, ranks);
    ranked
}

/// A token match's rank while it is not yet known (it is past the ranked head).
const UNRANKED: u32 = u32::MAX;

/// Gives the notes of `sorted` (token keys) the token ranks after `before`.
fn set_ranks(sorted: &[u128], before: usize, ranks: &mut [[u32; 2]]) {
    for (pos, &k) in sorted.iter().enumerate() {
        ranks[index_of(k)][0] = u32::try_from(before + pos + 1).unwrap_or(u32::MAX);
    }
}

/// The page when it can be settled with the token channel ranked only to `ranked`: the best
/// `keep` of the notes whose fused score is known, when every token match past the head
/// (`rest`), whose rank is at least `ranked + 1`, scores below the page's worst even at that
/// rank (so it sorts after it, ties included). `None` when that cannot be shown.
fn page_within_head(
    matching: &[usize],
    ranks: &[[u32; 2]],
    rest: &[u128],
    ranked: usize,
    keep: usize,
) -> Option<Vec<Ranked>> {
    let mut keys: Vec<u128> =
        matching.iter().filter(|&&i| ranks[i][0] != UNRANKED).map(|&i| key(fused(ranks[i]), i)).collect();
    if keys.len() < keep {
        return None;
    }
    let best = best_of(&mut keys, keep, ranks);
    let best_trigram = rest.iter().map(|&k| rrf(ranks[index_of(k)][1])).fold(0.0, f64::max);
    let bound = 0.0 + rrf(u32::try_from(ranked + 1).unwrap_or(u32::MAX)) + best_trigram;
    best.last().is_none_or(|worst| bound < worst.score).then_some(best)
}

/// The best `keep` of fused `keys` (notes' `key`s by fused score), best first.
fn best_of(keys: &mut Vec<u128>, keep: usize, ranks: &[[u32; 2]]) -> Vec<Ranked> {
    if keep < keys.len() {
        keys.select_nth_unstable(keep);
        keys.truncate(keep);
    }
    keys.sort_unstable();
    keys.iter()
        .map(|&k| {
            let index = index_of(k);
            Ranked { index, by_channel: ranks[index].map(|r| r as usize), score: fused(ranks[index]) }
        })
        .collect()
}

/// A note's fused score from its channel ranks (0: not found there).
fn fused(ranks: [u32; 2]) -> f64 {
    0.0 + rrf(ranks[0]) + rrf(ranks[1])
}

/// Reciprocal rank fusion's share of a 1-based rank (0: none).
fn rrf(rank: u32) -> f64 {
    if rank == 0 { 0.0 } else { 1.0 / (RRF_K + f64::from(rank)) }
}

/// `fuse` over texts (each a note holding one string), as the scan path of `note_list` does it
/// (the tests' reference).
#[cfg(test)]
pub(crate) fn rank(query: &str, texts: &[String]) -> Vec<Ranked> {
    let q = Query::new(query);
    let docs: Vec<Features> = texts.iter().map(|t| features(&q, &SearchText::of_text(t))).collect();
    fuse(&q, &docs, usize::MAX).best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn packed_trigrams_are_the_trigrams_in_order() {
        for text in ["Editor THEME dark #12", "ümlaut straße 東京タワー 🦀🦀🦀x", "a\0bcd\0e", "ab", "", "aaaaaa"]
        {
            let packed = packed_grams(text);
            let strings: Vec<String> = grams(text).into_iter().collect();
            assert_eq!(packed.iter().map(|g| unpack_gram(*g)).collect::<Vec<_>>(), strings, "{text:?}");
            assert!(packed.windows(2).all(|w| w[0] < w[1]), "sorted and distinct: {text:?}");
        }
    }

    #[test]
    fn both_channels_find_and_fuse() {
        let docs = texts(&["editor theme dark mode", "deploy target staging", "editor font size"]);
        let ranked = rank("dark theme", &docs);
        assert_eq!(ranked[0].index, 0);
        assert_eq!(ranked[0].ranks().collect::<Vec<_>>(), vec![("token", 1), ("trigram", 1)]);
        assert!((ranked[0].score - 2.0 / 61.0).abs() < 1e-12);
        assert!(ranked.iter().all(|r| r.index != 1), "no channel matches the deploy note");
    }

    #[test]
    fn trigrams_catch_partial_words_that_tokens_miss() {
        // Written without humps: a camelCase word is found by its parts (`text::ident_parts`).
        let docs = texts(&["featureflagrollout enabled", "unrelated"]);
        let ranked = rank("flagroll", &docs);
        assert_eq!(ranked.len(), 1);
        assert_eq!(ranked[0].ranks().collect::<Vec<_>>(), vec![("trigram", 1)]);
    }

    #[test]
    fn short_queries_match_as_substrings() {
        let ranked = rank("go", &texts(&["golang", "rust"]));
        assert_eq!(ranked.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn statistics_ignore_notes_that_match_nothing() {
        // Adding notes that match neither channel changes no score: what a caller cannot match
        // (or see, as the list drops invisible notes before ranking) never moves a rank.
        let few = rank("alpha beta", &texts(&["alpha one", "beta two alpha"]));
        let many = rank("alpha beta", &texts(&["alpha one", "beta two alpha", "zzz", "yyy", "xxx"]));
        assert_eq!(few, many);
    }

    /// The fusion as it was before it kept only a page in order: every match fused and sorted
    /// with comparators. `fuse` must agree with it exactly.
    #[allow(clippy::cast_precision_loss)]
    fn fuse_by_sorting_everything(query: &Query, docs: &[Features]) -> Vec<Ranked> {
        let token_hit = |f: &Features| f.tf.iter().any(|&t| t > 0);
        let trigram_share = |f: &Features| {
            if query.grams.is_empty() {
                return if f.substring { 1.0 } else { 0.0 };
            }
            let share = f64::from(f.grams) / query.grams.len() as f64;
            if share >= MIN_TRIGRAM_SHARE { share } else { 0.0 }
        };
        let matching: Vec<usize> =
            (0..docs.len()).filter(|&i| token_hit(&docs[i]) || trigram_share(&docs[i]) > 0.0).collect();
        let n = matching.len() as f64;
        let lens: Vec<f64> =
            matching.iter().filter(|&&i| token_hit(&docs[i])).map(|&i| f64::from(docs[i].len)).collect();
        let avg = (lens.iter().sum::<f64>() / (lens.len() as f64).max(1.0)).max(1.0);
        let df: Vec<f64> =
            (0..query.terms.len()).map(|t| matching.iter().filter(|&&i| docs[i].tf[t] > 0).count() as f64).collect();
        let bm25 = |f: &Features| -> f64 {
            f.tf.iter()
                .zip(&df)
                .filter(|(tf, _)| **tf > 0)
                .map(|(&tf, &d)| {
                    let tf = f64::from(tf);
                    let idf = ((n - d + 0.5) / (d + 0.5) + 1.0).ln();
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * f64::from(f.len) / avg))
                })
                .sum()
        };
        let mut fused: Vec<Option<Ranked>> = vec![None; docs.len()];
        for (channel, score) in [&bm25 as &dyn Fn(&Features) -> f64, &trigram_share].into_iter().enumerate() {
            let mut hits: Vec<(usize, f64)> =
                matching.iter().map(|&i| (i, score(&docs[i]))).filter(|(_, s)| *s > 0.0).collect();
            hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            for (pos, &(index, _)) in hits.iter().enumerate() {
                let entry = fused[index].get_or_insert(Ranked { index, by_channel: [0; 2], score: 0.0 });
                entry.by_channel[channel] = pos + 1;
                entry.score += 1.0 / (RRF_K + (pos + 1) as f64);
            }
        }
        let mut out: Vec<Ranked> = fused.into_iter().flatten().collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
        out
    }

    #[test]
    fn a_page_of_the_fusion_equals_the_head_of_the_full_ranking() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        let mut rng = StdRng::seed_from_u64(7);
        let mut settled = 0;
        for round in 0..300 {
            // Mostly word queries; now and then one too short for trigrams (a substring test).
            let words = ["alpha", "bravo", "charlie", "delta"];
            let terms = rng.random_range(1..=words.len());
            let query = Query::new(&if round % 10 == 9 { "al".to_owned() } else { words[..terms].join(" ") });
            let g = u32::try_from(query.grams.len()).unwrap();
            let n = rng.random_range(0..400);
            // Few distinct values, so that ties (which the order of candidates breaks) abound.
            let docs: Vec<Features> = (0..n)
                .map(|_| {
                    let mut tf = Counts::zeros(query.terms.len());
                    for c in tf.iter_mut() {
                        *c = if rng.random_bool(0.3) { rng.random_range(1..4) } else { 0 };
                    }
                    let (len, grams, substring) =
                        (rng.random_range(1..12), rng.random_range(0..=g), rng.random_bool(0.4));
                    Features { tf, len, grams, substring }
                })
                .collect();
            let all = fuse_by_sorting_everything(&query, &docs);
            for keep in [0, 1, 3, 10, 25, n, usize::MAX] {
                let page = fuse(&query, &docs, keep);
                assert_eq!(page.total, all.len(), "round {round}");
                assert_eq!(page.best, all[..keep.min(all.len())], "round {round}, keep {keep}");
                // Token heads short of the matches, so that pages are settled from the head or
                // not (then the rest is sorted), both of which must give the full ranking's head.
                for head in [0, 1, 5, 20, 60] {
                    let (page, within) = fuse_with_head(&query, &docs, keep, head);
                    assert_eq!(page.total, all.len(), "round {round}, head {head}");
                    assert_eq!(page.best, all[..keep.min(all.len())], "round {round}, keep {keep}, head {head}");
                    settled += usize::from(within);
                }
            }
        }
        assert!(settled > 1000, "pages settled within the head: {settled}");
    }

    #[test]
    fn an_empty_query_matches_nothing() {
        assert!(rank("", &texts(&["a"])).is_empty());
        assert!(rank("the", &texts(&["the end"])).iter().all(|r| r.ranks().all(|(c, _)| c == "trigram")));
    }
}
