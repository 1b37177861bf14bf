//! Full-text search: a BM25 inverted index over passages, kept in three trees of the store and
//! written in the caller's transaction, so the index never disagrees with the passages it covers.
//! A partition is an opaque byte prefix built by the caller (tenant, user, scope); nothing is ever
//! read or counted across partitions. `docs/design/fts.md` gives the layout and the decisions.

mod keys;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use crate::text::tokens;
use crate::{Error, Result, Snapshot, WriteTxn};

pub use keys::{DOC_TREE, MAX_PART_LEN, MAX_TERM_BYTES, POST_TREE, STATS_TREE};
use keys::{
    clean_term, decode_doc, decode_posting, decode_stats, doc_key, doc_prefix, encode_doc, encode_posting,
    encode_stats, key_tail, part_prefix, post_key, prefix_end, term_prefix,
};

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

/// The passages of `part` that hold every index term of `text`, seen from inside a write
/// transaction (its own writes included), in (doc, ordinal) order. Used to find every passage
/// naming something, linked or not, before it is forgotten.
pub fn passages_with_all_terms(tx: &mut WriteTxn<'_>, part: &[u8], text: &str) -> Result<Vec<(u64, u32)>> {
    let prefix = part_prefix(part)?;
    let mut terms: Vec<String> =
        tokens(text).into_iter().filter_map(|t| clean_term(&t.term).map(str::to_owned)).collect();
    terms.sort();
    terms.dedup();
    let mut found: Option<Vec<(u64, u32)>> = None;
    for term in terms {
        let mut here = Vec::new();
        for (key, _) in tx.prefix(POST_TREE, &term_prefix(&prefix, &term))? {
            here.push(key_tail(&key)?);
        }
        found = Some(match found {
            None => here,
            Some(before) => before.into_iter().filter(|p| here.binary_search(p).is_ok()).collect(),
        });
    }
    Ok(found.unwrap_or_default())
}

/// Indexes passage `ordinal` of `doc` in partition `part`, replacing what was indexed there before.
/// A passage without terms is still counted (it adds to the partition's passage count).
pub fn index_passage(tx: &mut WriteTxn<'_>, part: &[u8], doc: u64, ordinal: u32, text: &str) -> Result<()> {
    let prefix = part_prefix(part)?;
    let old = take_passage(tx, &prefix, doc, ordinal)?;
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    let all = tokens(text);
    for token in &all {
        if let Some(term) = clean_term(&token.term) {
            *counts.entry(term).or_default() += 1;
        }
    }
    let len = u32::try_from(counts.values().map(|&tf| u64::from(tf)).sum::<u64>())
        .map_err(|_| Error::InvalidArgument("passage has more than u32::MAX tokens".into()))?;
    for (term, &tf) in &counts {
        tx.put(POST_TREE, &post_key(&prefix, term, doc, ordinal), &encode_posting(tf, len))?;
    }
    let terms: Vec<&str> = counts.keys().copied().collect();
    tx.put(DOC_TREE, &doc_key(&prefix, doc, ordinal), &encode_doc(len, &terms))?;
    let (passages, total) = old.map_or((0, 0), |len| (1, u64::from(len)));
    adjust_stats(tx, &prefix, (1, u64::from(len)), (passages, total))
}

/// Removes passage `ordinal` of `doc` from partition `part`; `false` when it was not indexed.
pub fn remove_passage(tx: &mut WriteTxn<'_>, part: &[u8], doc: u64, ordinal: u32) -> Result<bool> {
    let prefix = part_prefix(part)?;
    match take_passage(tx, &prefix, doc, ordinal)? {
        Some(len) => {
            adjust_stats(tx, &prefix, (0, 0), (1, u64::from(len)))?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Removes every passage of `doc` from partition `part`; returns how many there were.
pub fn remove_doc(tx: &mut WriteTxn<'_>, part: &[u8], doc: u64) -> Result<u32> {
    let prefix = part_prefix(part)?;
    let entries = scan(tx, DOC_TREE, &doc_prefix(&prefix, doc))?;
    let mut removed: u32 = 0;
    let mut total: u64 = 0;
    for (key, value) in entries {
        let (_, ordinal) = key_tail(&key)?;
        total += u64::from(drop_passage(tx, &prefix, doc, ordinal, &value)?);
        removed += 1;
    }
    if removed > 0 {
        adjust_stats(tx, &prefix, (0, 0), (u64::from(removed), total))?;
    }
    Ok(removed)
}

/// Removes everything of partition `part`: postings, passages and totals. Returns the number of
/// passages it held.
pub fn remove_partition(tx: &mut WriteTxn<'_>, part: &[u8]) -> Result<u64> {
    let prefix = part_prefix(part)?;
    let mut passages: u64 = 0;
    for tree in [POST_TREE, DOC_TREE, STATS_TREE] {
        for (key, _) in scan(tx, tree, &prefix)? {
            tx.delete(tree, &key)?;
            if tree == DOC_TREE {
                passages += 1;
            }
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
    let terms = query_terms(query);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let Some(stats) = snap.get(STATS_TREE, &prefix)? else {
        return Ok(Vec::new());
    };
    let (n, total) = decode_stats(&stats)?;
    // Precision: counts above 2^53 are far beyond any store.
    #[allow(clippy::cast_precision_loss)]
    let (n, avg_len) = (n as f64, if n == 0 { 0.0 } else { total as f64 / n as f64 });
    let mut scores: HashMap<(u64, u32), (f64, Vec<usize>)> = HashMap::new();
    for (i, term) in terms.iter().enumerate() {
        let mut postings = Vec::new();
        for entry in snap.prefix(POST_TREE, &term_prefix(&prefix, term))? {
            let (key, value) = entry?;
            postings.push((key_tail(&key)?, decode_posting(&value)?));
        }
        // Precision: a term is in fewer than 2^53 passages.
        #[allow(clippy::cast_precision_loss)]
        let df = postings.len() as f64;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for (at, (tf, len)) in postings {
            let tf = f64::from(tf);
            let norm = if avg_len > 0.0 { f64::from(len) / avg_len } else { 0.0 };
            let slot = scores.entry(at).or_default();
            slot.0 += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * norm));
            slot.1.push(i);
        }
    }
    let mut ranked: Vec<_> = scores.into_iter().collect();
    ranked.sort_by(|(a, (sa, _)), (b, (sb, _))| sb.total_cmp(sa).then(a.cmp(b)));
    ranked.truncate(k);
    Ok(ranked
        .into_iter()
        .map(|((doc, ordinal), (score, found))| Hit {
            doc,
            ordinal,
            // Scores are reported as f32; ranking used the f64 sum.
            score: score as f32,
            matched: found.into_iter().map(|i| terms[i].clone()).collect(),
        })
        .collect())
}

/// The distinct index terms of `query`, in order of first occurrence.
/// In how many passages of `part` the index term `term` occurs, counting at most `cap`: enough to
/// tell a rare word from a common one without reading a common word's every posting.
pub fn doc_freq(snap: &Snapshot, part: &[u8], term: &str, cap: usize) -> Result<usize> {
    let prefix = part_prefix(part)?;
    let mut n = 0;
    for entry in snap.prefix(POST_TREE, &term_prefix(&prefix, term))?.take(cap) {
        entry?;
        n += 1;
    }
    Ok(n)
}

/// The number of passages indexed in `part`.
pub fn passage_count(snap: &Snapshot, part: &[u8]) -> Result<u64> {
    let prefix = part_prefix(part)?;
    Ok(match snap.get(STATS_TREE, &prefix)? {
        Some(stats) => decode_stats(&stats)?.0,
        None => 0,
    })
}

fn query_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in tokens(query) {
        if let Some(term) = clean_term(&token.term)
            && !out.iter().any(|t| t == term)
        {
            out.push(term.to_owned());
        }
    }
    out
}

/// Deletes a passage's postings and record; its token count, or `None` when it was not indexed.
/// The partition's totals are left to the caller.
fn take_passage(tx: &mut WriteTxn<'_>, prefix: &[u8], doc: u64, ordinal: u32) -> Result<Option<u32>> {
    match tx.get(DOC_TREE, &doc_key(prefix, doc, ordinal))? {
        Some(value) => Ok(Some(drop_passage(tx, prefix, doc, ordinal, &value)?)),
        None => Ok(None),
    }
}

/// Deletes the postings named by a passage record `value`, then the record; its token count.
fn drop_passage(tx: &mut WriteTxn<'_>, prefix: &[u8], doc: u64, ordinal: u32, value: &[u8]) -> Result<u32> {
    let (len, terms) = decode_doc(value)?;
    for term in &terms {
        tx.delete(POST_TREE, &post_key(prefix, term, doc, ordinal))?;
    }
    tx.delete(DOC_TREE, &doc_key(prefix, doc, ordinal))?;
    Ok(len)
}

/// Adds `add` and subtracts `sub` (passages, tokens) from the partition's totals; deletes the
/// totals when no passage is left, so an emptied partition leaves no key.
fn adjust_stats(tx: &mut WriteTxn<'_>, prefix: &[u8], add: (u64, u64), sub: (u64, u64)) -> Result<()> {
    let (passages, total) = match tx.get(STATS_TREE, prefix)? {
        Some(value) => decode_stats(&value)?,
        None => (0, 0),
    };
    let underflow = || Error::corrupt(None, "full-text totals are smaller than the passages they count");
    let passages = (passages + add.0).checked_sub(sub.0).ok_or_else(underflow)?;
    let total = (total + add.1).checked_sub(sub.1).ok_or_else(underflow)?;
    if passages == 0 {
        tx.delete(STATS_TREE, prefix)?;
    } else {
        tx.put(STATS_TREE, prefix, &encode_stats(passages, total))?;
    }
    Ok(())
}

/// Every entry of `tree` whose key starts with `prefix`, as this transaction sees it.
fn scan(tx: &mut WriteTxn<'_>, tree: &str, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let end = prefix_end(prefix);
    let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    tx.range(tree, Bound::Included(prefix), end)
}
