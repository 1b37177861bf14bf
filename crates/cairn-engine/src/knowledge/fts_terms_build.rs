//! Re-indexing the full text of a store whose passages were indexed by an older tokenizer: each
//! partition's full-text index is replaced by one built from its passages (`PSG`, sliced from
//! their documents) by the tokenizer of now, in one transaction, then the marker (the empty key of
//! `FTS_TERMS`) names that tokenizer. Run before a verb (`knowledge::api::call`), as the tally's
//! build is. Queries are tokenized as passages are, so an index of older terms misses what a
//! query now asks for: since identifiers are cut into parts (`text::ident_parts`), "retry policy"
//! looks for `retri` and `polici`, which a passage saying `retryPolicy` holds only once re-indexed.
//!
//! Writers index with the tokenizer of now whether or not the marker is there. A store's first
//! passage marks it (`mark_first`, in the passage's own transaction), as the notes index is marked
//! by the first note: a fresh store never pays a re-index, and a read after its first write
//! writes nothing.

use super::docs::{Document, PassageSpan};
use super::part::Partition;
use super::records::decode;
use super::trees::{DOC, FTS_TERMS, PSG};
use crate::error::{Error, Result};
use crate::fts;
use crate::store::Store;
use crate::text::{Heading, heading_path, headings, with_headings};
use crate::write::WriteTxn;

/// The tokenizer the index holds the terms of: 2 since identifiers give their parts too, 3 since
/// a passage is indexed under the titles of the markdown headings above it
/// (`text::Passage::index_text`). A store without the marker was indexed by tokenizer 1.
pub(crate) const TOKENIZER: &[u8] = &[3];

/// Re-indexes the store's passages unless the marker names `TOKENIZER`; a store without passages
/// is left as it is (a read on it never writes).
pub(crate) fn upgrade(store: &Store) -> Result<()> {
    // Once it names the tokenizer of now it always will: remembered as `build_once` does.
    if store.marked(FTS_TERMS) {
        return Ok(());
    }
    let snap = store.snapshot()?;
    if snap.get(FTS_TERMS, &[])?.as_deref() == Some(TOKENIZER) {
        store.mark(FTS_TERMS);
        return Ok(());
    }
    if snap.prefix(PSG, &[])?.next().is_none() {
        return Ok(());
    }
    store.write(|tx| {
        // Another call may have re-indexed it between the snapshot and this transaction.
        if tx.get(FTS_TERMS, &[])?.as_deref() == Some(TOKENIZER) {
            return Ok(());
        }
        build(tx)
    })?;
    Ok(())
}

/// Marks the store as indexed by `TOKENIZER` when it holds no passage yet and no marker: called
/// before a document's passages are put, so the first of a fresh store marks it. A store of
/// older passages is re-indexed (`upgrade`) before any verb writes, so it is marked by then.
pub(crate) fn mark_first(tx: &mut WriteTxn<'_>) -> Result<()> {
    if tx.get(FTS_TERMS, &[])?.is_none() && tx.first_with_prefix(PSG, &[])?.is_none() {
        tx.put(FTS_TERMS, &[], TOKENIZER)?;
    }
    Ok(())
}

/// A partition's passages: (doc id, ordinal, span), in key order.
type Passages = Vec<(u64, u32, PassageSpan)>;

/// Replaces the full-text index of every partition holding passages by one built from them, and
/// marks it.
pub(crate) fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
    let bad = || Error::corrupt(None, "a passage key is malformed");
    let mut parts: Vec<(Partition, Passages)> = Vec::new();
    tx.scan_prefix(PSG, &[], |key, value| {
        if !parts.last().is_some_and(|(p, _)| key.starts_with(p.prefix())) {
            parts.push((Partition::of_key(key)?, Vec::new()));
        }
        let (part, list) = parts.last_mut().expect("pushed above");
        let tail = &key[part.prefix().len()..];
        let doc = u64::from_be_bytes(tail.get(..8).ok_or_else(bad)?.try_into().expect("8 bytes"));
        let ordinal = u32::from_be_bytes(tail.get(8..12).ok_or_else(bad)?.try_into().expect("4 bytes"));
        list.push((doc, ordinal, decode(value, "passage")?));
        Ok(())
    })?;
    for (part, passages) in &parts {
        reindex(tx, part, passages)?;
    }
    tx.put(FTS_TERMS, &[], TOKENIZER)
}

/// Drops `part`'s full-text index and indexes `passages` again, as one batch.
fn reindex(tx: &mut WriteTxn<'_>, part: &Partition, passages: &Passages) -> Result<()> {
    fts::remove_partition(tx, part.raw())?;
    let mut index = fts::Indexer::new(part.raw())?;
    // The document being read, and the byte offset of each of its code points (passages are
    // code-point spans; slicing each by counting from the start would be quadratic in a long one).
    let mut current: Option<(u64, Document, Vec<usize>, Vec<Heading>)> = None;
    for &(doc, ordinal, span) in passages {
        if current.as_ref().is_none_or(|(id, ..)| *id != doc) {
            current = match tx.get(DOC, &part.key(&[&doc.to_be_bytes()]))? {
                Some(value) => {
                    let d: Document = decode(&value, "document")?;
                    let bounds = d.text.char_indices().map(|(b, _)| b).chain([d.text.len()]).collect();
                    let all = headings(&d.text);
                    Some((doc, d, bounds, all))
                }
                // A passage of no document finds no text: nothing to index.
                None => None,
            };
        }
        let Some((_, d, bounds, all)) = &current else { continue };
        let (Some(&from), Some(&to)) = (bounds.get(span.start), bounds.get(span.end)) else { continue };
        if from > to {
            continue;
        }
        // The partition's index was dropped above: every place is fresh.
        // Read under its headings, as `remember` indexed it.
        let path = heading_path(all, span.start, span.end);
        let terms = index.tokenize(&with_headings(&path, &d.text[from..to]))?;
        index.add_tokenized(doc, ordinal, terms, true);
    }
    index.finish(tx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::docs::passage_text;
    use crate::knowledge::testing::fresh;
    use crate::knowledge::testing_api::{caller, verb};
    use crate::store::StoreOptions;
    use crate::text::word_tokens;
    use serde_json::json;

    fn found(store: &Store, part: &Partition, query: &str) -> usize {
        fts::search(&store.snapshot().unwrap(), part.raw(), query, 10).unwrap().len()
    }

    fn marker(store: &Store) -> Option<Vec<u8>> {
        store.snapshot().unwrap().get(FTS_TERMS, &[]).unwrap()
    }

    /// Rewrites `part`'s full-text index as tokenizer 1 wrote it (one term a word, no parts:
    /// `word_tokens`), without the marker: the layout of a store written before.
    fn index_as_tokenizer_1(store: &Store, part: &Partition) {
        let part = part.clone();
        store
            .write(move |tx| {
                let mut places = Vec::new();
                for key in tx.prefix_keys(PSG, part.prefix())? {
                    let tail = &key[part.prefix().len()..];
                    places.push((
                        u64::from_be_bytes(tail[..8].try_into().unwrap()),
                        u32::from_be_bytes(tail[8..].try_into().unwrap()),
                    ));
                }
                fts::remove_partition(tx, part.raw())?;
                let mut index = fts::Indexer::new(part.raw())?;
                for (doc, ordinal) in places {
                    let text = passage_text(tx, &part, doc, ordinal)?.expect("a stored passage");
                    let terms: Vec<String> = word_tokens(&text).into_iter().map(|t| t.term).collect();
                    index.add_terms(doc, ordinal, &terms.iter().map(String::as_str).collect::<Vec<_>>());
                }
                index.finish(tx)?;
                tx.delete(FTS_TERMS, &[])?;
                Ok(())
            })
            .unwrap();
        store.forget_marks();
    }

    #[test]
    fn a_fresh_store_is_marked_by_its_first_passage_and_one_of_tokenizer_1_is_reindexed_after_reopening() {
        let (dir, store, part) = fresh();
        let who = caller(&part, 1_000);
        assert_eq!(verb(&store, &who, "status", &json!({})).map(|_| ()), Ok(()));
        assert_eq!(marker(&store), None, "a store without passages is not written by a read");
        let txn = |store: &Store| store.snapshot().unwrap().txn();
        let before = txn(&store);
        let remembered = ["Set retryPolicy in config.ts to back off.", "MAX_RETRY_COUNT caps the attempts."];
        verb(&store, &who, "remember", &json!({"content": remembered[0]})).unwrap();
        // A fresh store's first passage marks it, in its own transaction: nothing is re-indexed.
        assert_eq!((txn(&store), marker(&store).as_deref()), (before + 1, Some(TOKENIZER)));
        verb(&store, &who, "remember", &json!({"content": remembered[1]})).unwrap();
        let written = txn(&store);
        verb(&store, &who, "status", &json!({})).unwrap();
        assert_eq!(txn(&store), written, "a read after the first writes writes nothing");
        assert_eq!(found(&store, &part, "policy"), 1);

        index_as_tokenizer_1(&store, &part);
        let passages = fts::passage_count(&store.snapshot().unwrap(), part.raw()).unwrap();
        assert_eq!(passages, 2);
        // Both passages say "retry" (`retryPolicy`, `MAX_RETRY_COUNT`), one each "policy",
        // "config" and "count".
        let wanted = [("retry policy", 2), ("policy", 1), ("config", 1), ("count", 1), ("retryPolicy", 2)];
        for (query, _) in wanted {
            assert_eq!(
                found(&store, &part, query),
                usize::from(query == "retryPolicy"),
                "the old index holds no parts: {query}"
            );
        }
        drop(store);

        let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
        verb(&store, &who, "status", &json!({})).unwrap();
        assert_eq!(marker(&store).as_deref(), Some(TOKENIZER));
        for (query, n) in wanted {
            assert_eq!(found(&store, &part, query), n, "{query}");
        }
        assert_eq!(fts::passage_count(&store.snapshot().unwrap(), part.raw()).unwrap(), passages);
    }
}
