//! The hybrid `query` of `note_list`: a token channel (BM25 over the full-text tokenizer's terms of
//! each note's key and value) and a trigram channel (the share of the query's character trigrams
//! found in the note, so partial words, identifiers and typos still match), fused by reciprocal
//! rank (k = 60). Scoring runs over the notes the caller may see after the filters, so nothing
//! invisible influences a rank. Ties keep the candidates' order, so results are deterministic.

use crate::knowledge::RRF_K;
use crate::text::tokens;
use std::collections::{HashMap, HashSet};

/// BM25 parameters (the usual ones).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A note enters the trigram channel when it holds at least this share of the query's trigrams.
const MIN_TRIGRAM_SHARE: f64 = 0.5;

/// One match: which candidate, its 1-based rank in each channel that found it, and its fused score.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ranked {
    pub index: usize,
    pub ranks: Vec<(&'static str, usize)>,
    pub score: f64,
}

/// The candidates (`texts`) that match `query`, best first.
#[allow(clippy::cast_precision_loss)] // ranks are at most the number of notes, far below 2^52
pub(crate) fn rank(query: &str, texts: &[String]) -> Vec<Ranked> {
    let mut fused: HashMap<usize, Ranked> = HashMap::new();
    for (channel, scores) in [("token", bm25(query, texts)), ("trigram", trigram(query, texts))] {
        let mut hits: Vec<(usize, f64)> = scores.into_iter().enumerate().filter(|(_, s)| *s > 0.0).collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (pos, (index, _)) in hits.into_iter().enumerate() {
            let entry = fused.entry(index).or_insert(Ranked { index, ranks: Vec::new(), score: 0.0 });
            entry.ranks.push((channel, pos + 1));
            entry.score += 1.0 / (RRF_K + (pos + 1) as f64);
        }
    }
    let mut out: Vec<Ranked> = fused.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    out
}

#[allow(clippy::cast_precision_loss)] // counts of notes and terms are far below 2^52
fn bm25(query: &str, texts: &[String]) -> Vec<f64> {
    let terms: HashSet<String> = tokens(query).into_iter().map(|t| t.term).collect();
    if terms.is_empty() {
        return vec![0.0; texts.len()];
    }
    let docs: Vec<Vec<String>> = texts.iter().map(|t| tokens(t).into_iter().map(|t| t.term).collect()).collect();
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let df: HashMap<&str, f64> =
        terms.iter().map(|t| (t.as_str(), docs.iter().filter(|d| d.iter().any(|w| w == t)).count() as f64)).collect();
    docs.iter()
        .map(|doc| {
            let len = doc.len() as f64;
            terms
                .iter()
                .map(|t| {
                    let tf = doc.iter().filter(|w| *w == t).count() as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let d = df[t.as_str()];
                    let idf = ((n - d + 0.5) / (d + 0.5) + 1.0).ln();
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg.max(1.0)))
                })
                .sum()
        })
        .collect()
}

fn grams(text: &str) -> HashSet<Vec<char>> {
    let chars: Vec<char> = text.to_lowercase().chars().collect();
    chars.windows(3).map(<[char]>::to_vec).collect()
}

#[allow(clippy::cast_precision_loss)] // trigram counts are small
fn trigram(query: &str, texts: &[String]) -> Vec<f64> {
    let q = query.trim().to_lowercase();
    if q.chars().count() < 3 {
        // Too short for trigrams: a plain substring test.
        return texts.iter().map(|t| if !q.is_empty() && t.to_lowercase().contains(&q) { 1.0 } else { 0.0 }).collect();
    }
    let wanted = grams(&q);
    texts
        .iter()
        .map(|t| {
            let have = grams(t);
            let share = wanted.iter().filter(|g| have.contains(*g)).count() as f64 / wanted.len() as f64;
            if share >= MIN_TRIGRAM_SHARE { share } else { 0.0 }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn both_channels_find_and_fuse() {
        let docs = texts(&["editor theme dark mode", "deploy target staging", "editor font size"]);
        let ranked = rank("dark theme", &docs);
        assert_eq!(ranked[0].index, 0);
        assert_eq!(ranked[0].ranks, vec![("token", 1), ("trigram", 1)]);
        assert!((ranked[0].score - 2.0 / 61.0).abs() < 1e-12);
        assert!(ranked.iter().all(|r| r.index != 1), "no channel matches the deploy note");
    }

    #[test]
    fn trigrams_catch_partial_words_that_tokens_miss() {
        let docs = texts(&["featureFlagRollout enabled", "unrelated"]);
        let ranked = rank("FlagRoll", &docs);
        assert_eq!(ranked.len(), 1);
        assert_eq!(ranked[0].ranks, vec![("trigram", 1)]);
    }

    #[test]
    fn an_empty_query_matches_nothing() {
        assert!(rank("", &texts(&["a"])).is_empty());
        assert!(rank("the", &texts(&["the end"])).iter().all(|r| r.ranks.iter().all(|(c, _)| *c == "trigram")));
    }
}
