use std::collections::BTreeMap;

use proptest::prelude::*;

use super::keys::{decode_doc, part_prefix};
use super::*;
use crate::text::tokens;
use crate::{Store, StoreOptions};

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions { cache_bytes: 1 << 20, checkpoint_bytes: 1 << 20, ..StoreOptions::default() };
    let store = Store::open(dir.path(), opts).unwrap();
    (dir, store)
}

/// Indexes `(doc, ordinal, text)` passages into `part` in one transaction.
fn index(store: &Store, part: &[u8], passages: &[(u64, u32, &str)]) {
    let part = part.to_vec();
    let passages: Vec<(u64, u32, String)> = passages.iter().map(|&(d, o, t)| (d, o, t.to_owned())).collect();
    store
        .write(move |tx| {
            for (doc, ordinal, text) in &passages {
                index_passage(tx, &part, *doc, *ordinal, text)?;
            }
            Ok(())
        })
        .unwrap();
}

fn find(store: &Store, part: &[u8], query: &str) -> Vec<Hit> {
    search(&store.snapshot().unwrap(), part, query, 100).unwrap()
}

fn ids(hits: &[Hit]) -> Vec<(u64, u32)> {
    hits.iter().map(|h| (h.doc, h.ordinal)).collect()
}

/// Keys of the three full-text trees inside `part`.
fn keys_of(store: &Store, part: &[u8]) -> usize {
    let snap = store.snapshot().unwrap();
    let prefix = part_prefix(part).unwrap();
    [POST_TREE, DOC_TREE, STATS_TREE].iter().map(|tree| snap.prefix(tree, &prefix).unwrap().count()).sum()
}

/// Removes documents `docs` of `part` in one transaction, in one call (`remove_docs`), so their
/// shared posting chunks are rewritten together.
fn drop_docs(store: &Store, part: &[u8], docs: Vec<u64>) {
    let part = part.to_vec();
    store.write(move |tx| remove_docs(tx, &part, &docs)).unwrap();
}

/// Removes document `doc` of `part` alone; how many passages it had.
fn remove_doc(tx: &mut WriteTxn<'_>, part: &[u8], doc: u64) -> Result<u32> {
    Ok(u32::try_from(remove_docs(tx, part, &[doc])?).expect("a test document has few passages"))
}

/// The partition's (passages, tokens), when it holds any.
fn stats_of(store: &Store, part: &[u8]) -> Option<(u64, u64)> {
    let value = store.snapshot().unwrap().get(STATS_TREE, &part_prefix(part).unwrap()).unwrap()?;
    let stats = keys::decode_stats(&value).unwrap();
    Some((stats.passages, stats.tokens))
}

/// Passage records of `part`.
fn passages_of(store: &Store, part: &[u8]) -> usize {
    store.snapshot().unwrap().prefix(DOC_TREE, &part_prefix(part).unwrap()).unwrap().count()
}

#[test]
fn repeated_rare_term_outranks_common_term() {
    let (_dir, store) = open();
    index(
        &store,
        b"p",
        &[
            (1, 0, "harbour lighthouse lighthouse keeper"),
            (2, 0, "harbour keeper walked home"),
            (3, 0, "harbour keeper slept late"),
            (4, 0, "harbour keeper cooked dinner"),
        ],
    );
    let hits = find(&store, b"p", "lighthouse harbour");
    assert_eq!(hits[0].doc, 1);
    assert_eq!(hits[0].matched, vec!["lighthous".to_owned(), "harbour".to_owned()]);
    assert_eq!(hits.len(), 4);
    assert!(hits[0].score > hits[1].score);
    // Passages 2–4 score alike on `harbour` alone: ties go to (doc, ordinal) ascending.
    assert_eq!(ids(&hits[1..]), vec![(2, 0), (3, 0), (4, 0)]);
    assert_eq!(hits[1].matched, vec!["harbour".to_owned()]);
}

#[test]
fn shorter_passage_wins_at_equal_frequency() {
    let (_dir, store) = open();
    index(&store, b"p", &[(1, 0, "glacier moraine valley river meadow forest"), (2, 0, "glacier moraine")]);
    let hits = find(&store, b"p", "glacier");
    assert_eq!(ids(&hits), vec![(2, 0), (1, 0)]);
    assert!(hits[0].score > hits[1].score);
}

#[test]
fn duplicate_query_terms_count_once_and_empty_queries_find_nothing() {
    let (_dir, store) = open();
    index(&store, b"p", &[(1, 0, "orchid greenhouse"), (2, 0, "tomato greenhouse")]);
    assert_eq!(find(&store, b"p", "orchid orchid Orchids"), find(&store, b"p", "orchid"));
    assert!(find(&store, b"p", "the of and").is_empty());
    assert!(find(&store, b"p", "").is_empty());
    assert!(find(&store, b"other", "orchid").is_empty());
    assert!(search(&store.snapshot().unwrap(), b"p", "orchid", 0).unwrap().is_empty());
    assert_eq!(search(&store.snapshot().unwrap(), b"p", "greenhouse", 1).unwrap().len(), 1);
}

#[test]
fn reindexing_replaces_the_passage() {
    let (_dir, store) = open();
    index(&store, b"p", &[(1, 0, "copper kettle"), (2, 0, "iron kettle")]);
    let before = (find(&store, b"p", "kettle copper"), stats_of(&store, b"p"), passages_of(&store, b"p"));
    index(&store, b"p", &[(1, 0, "copper kettle")]);
    assert_eq!(before, (find(&store, b"p", "kettle copper"), stats_of(&store, b"p"), passages_of(&store, b"p")));
    index(&store, b"p", &[(1, 0, "silver spoon")]);
    assert!(find(&store, b"p", "copper").is_empty());
    assert_eq!(ids(&find(&store, b"p", "kettle")), vec![(2, 0)]);
    assert_eq!(ids(&find(&store, b"p", "spoon")), vec![(1, 0)]);
    // Still two passages; "copper kettle" → "silver spoon" keeps two tokens.
    assert_eq!(stats_of(&store, b"p"), before.1);
}

#[test]
fn passages_tokenized_ahead_on_other_threads_index_as_added_ones() {
    let texts = ["Copper kettles boil", "the iron kettle rusts", "kettle kettle copper", "東京 copper"];
    let (_a, added) = open();
    let (_b, ahead) = open();
    let rows: Vec<(u64, u32, &str)> = texts.iter().enumerate().map(|(i, t)| (i as u64 + 1, 0, *t)).collect();
    index(&added, b"p", &rows);
    // Tokenized by four threads (one batch handed from thread to thread), filed as fresh places.
    let mut batch = Indexer::new(b"p").unwrap();
    let mut tokenized = Vec::new();
    for text in texts {
        let (b, t) = std::thread::spawn(move || {
            let t = batch.tokenize(text).unwrap();
            (batch, t)
        })
        .join()
        .unwrap();
        batch = b;
        tokenized.push(t);
    }
    ahead
        .write(move |tx| {
            for (i, t) in tokenized.into_iter().enumerate() {
                batch.add_tokenized(i as u64 + 1, 0, t, true);
            }
            batch.finish(tx)
        })
        .unwrap();
    for query in ["kettle", "copper", "iron rust", "東京", "boiling kettles"] {
        assert_eq!(find(&added, b"p", query), find(&ahead, b"p", query), "{query}");
    }
    assert_eq!(stats_of(&added, b"p"), stats_of(&ahead, b"p"));
}

/// Every entry of the three full-text trees inside `part`.
fn entries_of(store: &Store, part: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let snap = store.snapshot().unwrap();
    let prefix = part_prefix(part).unwrap();
    [POST_TREE, DOC_TREE, STATS_TREE]
        .iter()
        .flat_map(|tree| snap.prefix(tree, &prefix).unwrap().map(Result::unwrap).collect::<Vec<_>>())
        .collect()
}

/// Indexes `places` (`(local doc, ordinal, text)`) as fresh places of docs `base + local doc`
/// in one batch, laid out ahead (`prepare`) or not; with `skip`, the passages of that local doc
/// are tokenized and laid out but not added (a document stored before). Returns whether
/// `finish` took the layout.
fn index_ahead(store: &Store, base: u64, places: &[(u64, u32, &str)], prepare: bool, skip: Option<u64>) -> bool {
    let mut batch = Indexer::new(b"p").unwrap();
    let tokenized: Vec<Tokenized> = places.iter().map(|(_, _, t)| batch.tokenize(t).unwrap()).collect();
    if prepare {
        let laid: Vec<(u64, u32, &Tokenized)> =
            places.iter().zip(&tokenized).map(|(&(doc, ordinal, _), t)| (doc, ordinal, t)).collect();
        batch.prepare(&laid);
    }
    let places: Vec<(u64, u32)> = places.iter().map(|&(doc, ordinal, _)| (doc, ordinal)).collect();
    let (took, _) = store
        .write(move |tx| {
            for ((doc, ordinal), t) in places.into_iter().zip(tokenized) {
                if Some(doc) != skip {
                    batch.add_tokenized(base + doc, ordinal, t, true);
                }
            }
            let took = batch.prepared_base() == Some(base);
            batch.finish(tx)?;
            Ok(took)
        })
        .unwrap();
    took
}

#[test]
fn a_segment_laid_out_before_the_transaction_is_the_one_built_in_it() {
    let places = [
        (0, 0, "Copper kettles boil over the amber fire"),
        (0, 1, "the iron kettle rusts"),
        (1, 0, "kettle kettle copper heron"),
        (2, 0, "東京 copper falcon"),
        (2, 1, "amber falcon and amber heron"),
        (3, 0, "owls"),
    ];
    let queries = ["kettle", "copper", "iron rust", "東京", "amber heron", "falcon owl"];
    // Docs 40.. take one byte as a first delta, as local docs 0.. do: the bytes are the same.
    for (base, same_bytes) in [(40_u64, true), (1 << 40, false)] {
        let (_a, built) = open();
        let (_b, laid) = open();
        for store in [&built, &laid] {
            index(store, b"p", &[(1, 0, "an older copper kettle"), (2, 0, "an older amber owl")]);
        }
        assert!(!index_ahead(&built, base, &places, false, None));
        assert!(index_ahead(&laid, base, &places, true, None), "the layout is taken");
        for query in queries {
            assert_eq!(find(&built, b"p", query), find(&laid, b"p", query), "{query}");
        }
        assert_eq!(stats_of(&built, b"p"), stats_of(&laid, b"p"));
        if same_bytes {
            assert_eq!(entries_of(&built, b"p"), entries_of(&laid, b"p"));
        }
        // Removal reads the records the layout wrote.
        for store in [&built, &laid] {
            store.write(move |tx| remove_doc(tx, b"p", base + 2)).unwrap();
        }
        assert_eq!(find(&built, b"p", "falcon"), find(&laid, b"p", "falcon"));
        assert!(find(&laid, b"p", "falcon").is_empty());
    }
    // A document left out (stored before): the layout no longer matches, the batch is built in
    // the transaction, and the result is the same.
    let (_a, built) = open();
    let (_b, laid) = open();
    assert!(!index_ahead(&built, 7, &places, false, Some(1)));
    assert!(!index_ahead(&laid, 7, &places, true, Some(1)), "a layout of other passages is not taken");
    for query in queries {
        assert_eq!(find(&built, b"p", query), find(&laid, b"p", query), "{query}");
    }
    assert_eq!(entries_of(&built, b"p"), entries_of(&laid, b"p"));
}

#[test]
fn removing_passages_docs_and_partitions_leaves_no_key() {
    let (_dir, store) = open();
    index(&store, b"p", &[(1, 0, "amber falcon"), (1, 1, "amber heron"), (2, 0, "amber owl")]);
    index(&store, b"q", &[(1, 0, "amber falcon")]);
    let q_keys = keys_of(&store, b"q");

    let (removed, _) = store.write(|tx| remove_passage(tx, b"p", 1, 1)).unwrap();
    assert!(removed);
    let (again, _) = store.write(|tx| remove_passage(tx, b"p", 1, 1)).unwrap();
    assert!(!again);
    assert!(find(&store, b"p", "heron").is_empty());
    assert_eq!(ids(&find(&store, b"p", "amber")), vec![(1, 0), (2, 0)]);

    let (count, _) = store.write(|tx| remove_doc(tx, b"p", 1)).unwrap();
    assert_eq!(count, 1);
    assert_eq!(ids(&find(&store, b"p", "amber falcon heron owl")), vec![(2, 0)]);
    let snap = store.snapshot().unwrap();
    let prefix = part_prefix(b"p").unwrap();
    assert_eq!(snap.prefix(DOC_TREE, &keys::doc_prefix(&prefix, 1)).unwrap().count(), 0);
    let falcon = snap.prefix(POST_TREE, &prefix).unwrap().filter(|e| e.as_ref().unwrap().0.ends_with(b"falcon\0"));
    assert_eq!(falcon.count(), 0);

    let (removed, _) = store.write(|tx| remove_passage(tx, b"p", 2, 0)).unwrap();
    assert!(removed);
    assert_eq!(keys_of(&store, b"p"), 0, "the last passage takes the totals with it");

    index(&store, b"p", &[(5, 0, "amber wolf"), (5, 1, "grey wolf"), (6, 0, "")]);
    let (count, _) = store.write(|tx| remove_partition(tx, b"p")).unwrap();
    assert_eq!(count, 3);
    assert_eq!(keys_of(&store, b"p"), 0);
    assert!(find(&store, b"p", "wolf amber").is_empty());
    let (count, _) = store.write(|tx| remove_partition(tx, b"p")).unwrap();
    assert_eq!(count, 0);

    assert_eq!(keys_of(&store, b"q"), q_keys, "the other partition is untouched");
    assert_eq!(ids(&find(&store, b"q", "falcon")), vec![(1, 0)]);
}

#[test]
fn partitions_never_see_each_other() {
    // "a" and "ab" would share a key prefix without the length prefix.
    let (_dir, store) = open();
    index(&store, b"a", &[(1, 0, "walnut bread")]);
    index(&store, b"ab", &[(2, 0, "walnut walnut cake"), (3, 0, "rye bread"), (4, 0, "bread")]);
    assert_eq!(ids(&find(&store, b"a", "walnut bread cake rye")), vec![(1, 0)]);
    assert_eq!(ids(&find(&store, b"ab", "walnut")), vec![(2, 0)]);

    // Scores in "a" are those of a store holding "a" alone: no totals leak across.
    let (_dir2, alone) = open();
    index(&alone, b"a", &[(1, 0, "walnut bread")]);
    assert_eq!(find(&store, b"a", "walnut bread"), find(&alone, b"a", "walnut bread"));
    assert_eq!(stats_of(&store, b"a"), stats_of(&alone, b"a"));

    let (count, _) = store.write(|tx| remove_partition(tx, b"a")).unwrap();
    assert_eq!(count, 1);
    // Three passages, one totals entry and the chunks of one segment (its four terms' blocks
    // spread by hash), all still there.
    let snap = store.snapshot().unwrap();
    let chunks = snap.prefix(POST_TREE, &part_prefix(b"ab").unwrap()).unwrap().count();
    assert!((1..=4).contains(&chunks), "{chunks} chunks");
    assert_eq!(keys_of(&store, b"ab"), 3 + chunks + 1);
    assert_eq!(ids(&find(&store, b"ab", "walnut bread cake rye")).len(), 3);
}

#[test]
fn cjk_query_finds_cjk_text() {
    let (_dir, store) = open();
    index(
        &store,
        b"p",
        &[(1, 0, "私は東京都に住んでいます。"), (2, 0, "大阪は京都に近い。"), (3, 0, "Tokyo is large.")],
    );
    let hits = find(&store, b"p", "東京");
    assert_eq!(ids(&hits), vec![(1, 0)]);
    assert_eq!(hits[0].matched, vec!["東京".to_owned()]);
    // Both hold 京都; the shorter passage ranks first.
    assert_eq!(ids(&find(&store, b"p", "京都")), vec![(2, 0), (1, 0)]);
}

#[test]
fn oversized_partition_is_refused() {
    let (_dir, store) = open();
    let part = vec![b'x'; MAX_PART_LEN + 1];
    let err = store.write(move |tx| index_passage(tx, &part, 1, 0, "text")).unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}

#[test]
fn long_terms_are_cut_alike_on_both_sides() {
    let (_dir, store) = open();
    let word = "ж".repeat(500);
    index(&store, b"p", &[(1, 0, word.as_str())]);
    let hits = find(&store, b"p", &word);
    assert_eq!(ids(&hits), vec![(1, 0)]);
    assert!(hits[0].matched[0].len() <= MAX_TERM_BYTES);
}

/// A passage record of the layout before chunks: its distinct terms.
fn legacy_doc(batch: u64, len: u32, terms: &[&str]) -> Vec<u8> {
    let mut out = [&batch.to_le_bytes()[..], &len.to_le_bytes(), &(terms.len() as u32).to_le_bytes()].concat();
    for term in terms {
        out.extend_from_slice(&(term.len() as u16).to_le_bytes());
        out.extend_from_slice(term.as_bytes());
    }
    out
}

/// Totals of the layout before chunks: 9 bytes a segment.
fn legacy_stats(passages: u64, tokens: u64, next_batch: u64, segments: &[(u64, u8)]) -> Vec<u8> {
    let mut out = [&passages.to_le_bytes()[..], &tokens.to_le_bytes(), &next_batch.to_le_bytes()].concat();
    out.extend_from_slice(&(segments.len() as u32).to_le_bytes());
    for (first, level) in segments {
        out.extend_from_slice(&first.to_le_bytes());
        out.push(*level);
    }
    out
}

#[test]
fn passage_records_decode_and_reject_garbage() {
    let value = keys::encode_doc(9, 3, &[2, 7]);
    let want = keys::PassageRecord { batch: 9, len: 3, hashes: vec![2, 7], terms: Vec::new() };
    assert_eq!(decode_doc(&value).unwrap(), want);
    for cut in 0..value.len() {
        assert!(decode_doc(&value[..cut]).is_err());
    }
    assert!(decode_doc(&[value.as_slice(), &[0]].concat()).is_err());
    assert!(decode_doc(&keys::encode_doc(9, 3, &[7, 2])).is_err(), "hashes out of order");
    // A record of the layout before chunks: its terms, and their hashes.
    let old = legacy_doc(9, 3, &["a", "bc"]);
    let mut hashes = vec![keys::term_hash(b"a"), keys::term_hash(b"bc")];
    hashes.sort_unstable();
    let want = keys::PassageRecord { batch: 9, len: 3, hashes, terms: vec!["a".to_owned(), "bc".to_owned()] };
    assert_eq!(decode_doc(&old).unwrap(), want);
    for cut in 0..old.len() {
        assert!(decode_doc(&old[..cut]).is_err());
    }
    assert!(keys::decode_stats(&[0; 27]).is_err());
    let segments =
        vec![keys::Segment { first: 0, level: 1, buckets: 3 }, keys::Segment { first: 8, level: 0, buckets: 0 }];
    let stats = keys::Stats { passages: 1, tokens: 2, next_batch: 9, segments, merge: None };
    let bytes = keys::encode_stats(&stats);
    assert_eq!(keys::decode_stats(&bytes).unwrap(), stats);
    for cut in 0..bytes.len() {
        assert!(keys::decode_stats(&bytes[..cut]).is_err());
    }
    // Totals of the layout before chunks decode with every segment one block per term.
    let old = keys::decode_stats(&legacy_stats(1, 2, 9, &[(0, 1), (8, 0)])).unwrap();
    assert_eq!(old.segments.iter().map(|s| (s.first, s.level, s.buckets)).collect::<Vec<_>>(), [(0, 1, 0), (8, 0, 0)]);
    // Segments out of order, or one at or past the next batch, are damage.
    let mut swapped = stats.clone();
    swapped.segments.reverse();
    assert!(keys::decode_stats(&keys::encode_stats(&swapped)).is_err());
    let past = keys::Stats { next_batch: 8, ..stats.clone() };
    assert!(keys::decode_stats(&keys::encode_stats(&past)).is_err());
    assert_eq!(stats.segment_at(7).unwrap(), 0);
    assert_eq!(stats.segment_at(8).unwrap(), 1);
    assert!(stats.segment_at(9).is_err());
    assert_eq!(keys::prefix_end(&[1, 0xFF]), Some(vec![2]));
    assert_eq!(keys::prefix_end(&[0xFF, 0xFF]), None);
}

#[test]
fn a_partition_of_the_layout_before_chunks_is_searched_merged_and_emptied() {
    let (_dir, store) = open();
    let part: &[u8] = b"old";
    let prefix = part_prefix(part).unwrap();
    // Two old segments (batches 0 and 1), one block per term, written as the layout before did.
    let old: Vec<(u64, u64, u32, &str)> =
        vec![(0, 1, 0, "apple river"), (0, 2, 0, "river stone stone"), (1, 3, 0, "apple frost")];
    let mut model = Model::new();
    let p = prefix.clone();
    let rows = old.clone();
    store
        .write(move |tx| {
            let mut blocks: BTreeMap<(u64, String), Vec<block::Posting>> = BTreeMap::new();
            let mut total = 0;
            for (batch, doc, ordinal, text) in &rows {
                let terms: Vec<String> = tokens(text).into_iter().map(|t| t.term).collect();
                let len = terms.len() as u32;
                total += u64::from(len);
                let mut distinct = terms.clone();
                distinct.sort();
                distinct.dedup();
                for term in &distinct {
                    let tf = terms.iter().filter(|t| *t == term).count() as u32;
                    blocks.entry((*batch, term.clone())).or_default().push(block::Posting {
                        doc: *doc,
                        ordinal: *ordinal,
                        tf,
                        len,
                    });
                }
                let names: Vec<&str> = distinct.iter().map(String::as_str).collect();
                tx.put(DOC_TREE, &keys::doc_key(&p, *doc, *ordinal), &legacy_doc(*batch, len, &names))?;
            }
            for ((batch, term), postings) in &blocks {
                tx.put(POST_TREE, &keys::post_key(&p, *batch, term.as_bytes()), &block::encode(postings))?;
            }
            tx.put(STATS_TREE, &p, &legacy_stats(rows.len() as u64, total, 2, &[(0, 0), (1, 0)]))
        })
        .unwrap();
    for (_, doc, ordinal, text) in &old {
        model.insert((0, *doc, *ordinal), (*text).to_owned());
    }
    let check = |model: &Model| {
        let snap = store.snapshot().unwrap();
        for query in ["apple", "river", "stone", "frost", "apple river frost"] {
            let got = search(&snap, part, query, 100).unwrap();
            let want = brute_force(model, 0, query);
            assert_eq!(ids(&got), want.iter().map(|(at, _)| *at).collect::<Vec<_>>(), "query {query}");
        }
    };
    check(&model);
    // Removing from an old segment, then adding batches until the old segments are merged.
    assert!(store.write(move |tx| remove_passage(tx, part, 2, 0)).unwrap().0);
    model.remove(&(0, 2, 0));
    check(&model);
    for i in 0..FANOUT as u64 {
        let text = format!("river {}", WORDS[i as usize % WORDS.len()]);
        model.insert((0, 10 + i, 0), text.clone());
        store.write(move |tx| index_passage(tx, part, 10 + i, 0, &text)).unwrap();
        check(&model);
    }
    assert_eq!(segments_of(&store, part)[0], (0, 1), "the old segments were merged");
    // An old record whose passage now sits in a chunked segment is removed through its terms' hashes.
    assert!(store.write(move |tx| remove_passage(tx, part, 1, 0)).unwrap().0);
    model.remove(&(0, 1, 0));
    check(&model);
    let docs: Vec<u64> = model.keys().map(|&(_, d, _)| d).collect();
    drop_docs(&store, part, docs);
    assert_eq!(keys_of(&store, part), 0);
}

// --- property: the index agrees with brute-force BM25 over a model of the live passages ---

const WORDS: &[&str] = &["apple", "river", "stone", "cloud", "maple", "tiger", "ocean", "glass", "ember", "frost"];
const PARTS: &[&[u8]] = &[b"t\0u\0s1\0", b"t\0u\0s1\0x"];

#[derive(Debug, Clone)]
enum Op {
    Index {
        part: usize,
        doc: u64,
        ordinal: u32,
        words: Vec<usize>,
    },
    /// Several passages through one `Indexer` (one block per term), places possibly repeated.
    IndexBatch {
        part: usize,
        passages: Vec<(u64, u32, Vec<usize>)>,
    },
    RemovePassage {
        part: usize,
        doc: u64,
        ordinal: u32,
    },
    RemoveDoc {
        part: usize,
        doc: u64,
    },
    RemovePartition {
        part: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let part = 0..PARTS.len();
    prop_oneof![
        6 => (part.clone(), 0..4u64, 0..3u32, proptest::collection::vec(0..WORDS.len(), 0..8))
            .prop_map(|(part, doc, ordinal, words)| Op::Index { part, doc, ordinal, words }),
        3 => (part.clone(), proptest::collection::vec((0..4u64, 0..3u32, proptest::collection::vec(0..WORDS.len(), 0..8)), 1..6))
            .prop_map(|(part, passages)| Op::IndexBatch { part, passages }),
        2 => (part.clone(), 0..4u64, 0..3u32).prop_map(|(part, doc, ordinal)| Op::RemovePassage { part, doc, ordinal }),
        1 => (part.clone(), 0..4u64).prop_map(|(part, doc)| Op::RemoveDoc { part, doc }),
        1 => part.prop_map(|part| Op::RemovePartition { part }),
    ]
}

type Model = BTreeMap<(usize, u64, u32), String>;

/// BM25 computed from scratch over the model's live passages of `part`.
// Precision: the model's counts are tiny.
#[allow(clippy::cast_precision_loss)]
fn brute_force(model: &Model, part: usize, query: &str) -> Vec<((u64, u32), f64)> {
    let mut terms: Vec<String> = Vec::new();
    for t in tokens(query) {
        if !terms.contains(&t.term) {
            terms.push(t.term);
        }
    }
    let live: Vec<((u64, u32), Vec<String>)> = model
        .iter()
        .filter(|((p, _, _), _)| *p == part)
        .map(|(&(_, d, o), text)| ((d, o), tokens(text).into_iter().map(|t| t.term).collect()))
        .collect();
    let n = live.len() as f64;
    let avg = if live.is_empty() { 0.0 } else { live.iter().map(|(_, t)| t.len() as f64).sum::<f64>() / n };
    let mut out = Vec::new();
    for (at, words) in &live {
        let mut score = 0.0;
        let mut any = false;
        for term in &terms {
            let tf = words.iter().filter(|w| *w == term).count() as f64;
            if tf == 0.0 {
                continue;
            }
            any = true;
            let df = live.iter().filter(|(_, w)| w.contains(term)).count() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let len = words.len() as f64;
            score += idf * tf * (1.2 + 1.0) / (tf + 1.2 * (1.0 - 0.75 + 0.75 * (len / avg)));
        }
        if any {
            out.push((*at, score));
        }
    }
    out.sort_by(|(a, sa), (b, sb)| sb.total_cmp(sa).then(a.cmp(b)));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn search_agrees_with_brute_force(ops in proptest::collection::vec(op(), 1..24)) {
        let (_dir, store) = open();
        let mut model = Model::new();
        for op in ops {
            match op.clone() {
                Op::Index { part, doc, ordinal, words } => {
                    let text = words.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" ");
                    model.insert((part, doc, ordinal), text.clone());
                    store.write(move |tx| index_passage(tx, PARTS[part], doc, ordinal, &text)).unwrap();
                }
                Op::IndexBatch { part, passages } => {
                    let texts: Vec<(u64, u32, String)> = passages
                        .iter()
                        .map(|(d, o, words)| (*d, *o, words.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" ")))
                        .collect();
                    for (d, o, text) in &texts {
                        model.insert((part, *d, *o), text.clone());
                    }
                    store
                        .write(move |tx| {
                            let mut batch = Indexer::new(PARTS[part])?;
                            for (d, o, text) in &texts {
                                batch.add(*d, *o, text)?;
                            }
                            batch.finish(tx)
                        })
                        .unwrap();
                }
                Op::RemovePassage { part, doc, ordinal } => {
                    let was = model.remove(&(part, doc, ordinal)).is_some();
                    let (removed, _) = store.write(move |tx| remove_passage(tx, PARTS[part], doc, ordinal)).unwrap();
                    prop_assert_eq!(removed, was);
                }
                Op::RemoveDoc { part, doc } => {
                    let before = model.len();
                    model.retain(|&(p, d, _), _| (p, d) != (part, doc));
                    let (removed, _) = store.write(move |tx| remove_doc(tx, PARTS[part], doc)).unwrap();
                    prop_assert_eq!(removed as usize, before - model.len());
                }
                Op::RemovePartition { part } => {
                    let before = model.len();
                    model.retain(|&(p, _, _), _| p != part);
                    let (removed, _) = store.write(move |tx| remove_partition(tx, PARTS[part])).unwrap();
                    prop_assert_eq!(removed as usize, before - model.len());
                }
            }
        }
        let snap = store.snapshot().unwrap();
        let mut queries: Vec<String> = WORDS.iter().map(|w| (*w).to_owned()).collect();
        queries.push("apple river river frost".to_owned());
        queries.push("stone ocean glass maple".to_owned());
        for (part, bytes) in PARTS.iter().enumerate() {
            let live = model.keys().filter(|(p, _, _)| *p == part).count();
            prop_assert_eq!(snap.prefix(DOC_TREE, &part_prefix(bytes).unwrap()).unwrap().count(), live);
            if live == 0 {
                prop_assert_eq!(keys_of(&store, bytes), 0);
            }
            for query in &queries {
                let got = search(&snap, bytes, query, 100).unwrap();
                let want = brute_force(&model, part, query);
                prop_assert_eq!(ids(&got), want.iter().map(|(at, _)| *at).collect::<Vec<_>>(), "query {}", query);
                for (hit, (_, score)) in got.iter().zip(&want) {
                    prop_assert!((f64::from(hit.score) - score).abs() < 1e-4, "query {}: {} vs {}", query, hit.score, score);
                }
            }
        }
    }
}

/// The partition's segments as (first batch, level).
fn segments_of(store: &Store, part: &[u8]) -> Vec<(u64, u8)> {
    let value = store.snapshot().unwrap().get(STATS_TREE, &part_prefix(part).unwrap()).unwrap().unwrap();
    keys::decode_stats(&value).unwrap().segments.iter().map(|s| (s.first, s.level)).collect()
}

/// Indexes `texts` (doc, ordinal, text) in one transaction and records them in `model`.
fn index_batch(store: &Store, part: &'static [u8], model: &mut Model, texts: Vec<(u64, u32, String)>) {
    for (d, o, text) in &texts {
        model.insert((0, *d, *o), text.clone());
    }
    store
        .write(move |tx| {
            let mut index = Indexer::new(part)?;
            for (d, o, text) in &texts {
                index.add(*d, *o, text)?;
            }
            index.finish(tx)
        })
        .unwrap();
}

#[test]
fn segments_merge_by_level_and_search_stays_exact() {
    let (_dir, store) = open();
    let part: &[u8] = b"t\0u\0s1\0";
    let mut model = Model::new();
    let mut seed: u64 = 7;
    let mut draw = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    // 75 batches: levels 2, 1 and 0 at the end (64 + 8 + 3). Places repeat (re-indexing moves a
    // passage out of a merged segment) and removals reach into merged segments.
    let total = FANOUT * FANOUT + FANOUT + 3;
    for batch in 0..total {
        let mut texts = Vec::new();
        for _ in 0..=draw(3) {
            let words: Vec<&str> = (0..=draw(6)).map(|_| WORDS[draw(WORDS.len() as u64) as usize]).collect();
            texts.push((draw(40), draw(3) as u32, words.join(" ")));
        }
        index_batch(&store, part, &mut model, texts);
        if batch % 5 == 4 {
            let (doc, ordinal) = (draw(40), draw(3) as u32);
            let was = model.remove(&(0, doc, ordinal)).is_some();
            assert_eq!(store.write(move |tx| remove_passage(tx, part, doc, ordinal)).unwrap().0, was);
        }
    }
    let levels: Vec<u8> = segments_of(&store, part).iter().map(|s| s.1).collect();
    assert_eq!(levels, [2, 1, 0, 0, 0]);
    let snap = store.snapshot().unwrap();
    let mut queries: Vec<String> = WORDS.iter().map(|w| (*w).to_owned()).collect();
    queries.push("apple river frost".to_owned());
    for query in &queries {
        let got = search(&snap, part, query, 1000).unwrap();
        let want = brute_force(&model, 0, query);
        assert_eq!(ids(&got), want.iter().map(|(at, _)| *at).collect::<Vec<_>>(), "query {query}");
        for (hit, (_, score)) in got.iter().zip(&want) {
            assert!((f64::from(hit.score) - score).abs() < 1e-4, "query {query}: {} vs {score}", hit.score);
        }
        if let [term] = tokens(query).as_slice() {
            assert_eq!(doc_freq(&snap, part, &term.term, usize::MAX).unwrap(), want.len(), "df of {query}");
        }
    }
    // Removing every document empties all three trees, merged segments included.
    let docs: Vec<u64> = model.keys().map(|&(_, d, _)| d).collect();
    drop_docs(&store, part, docs);
    assert_eq!(keys_of(&store, part), 0);
}

/// Spreads the newest segment of `part` over `buckets` chunks, as a build before bucket counts
/// were powers of two could have.
fn rebucket(store: &Store, part: &[u8], buckets: u32) {
    let part = part.to_vec();
    store
        .write(move |tx| {
            let prefix = part_prefix(&part)?;
            let mut stats = read_stats(tx, &prefix)?;
            let seg = stats.segments.last_mut().unwrap();
            let mut all: Vec<(Vec<u8>, u64, Vec<u8>)> = Vec::new();
            for (key, value) in tx.prefix(POST_TREE, &keys::segment_prefix(&prefix, seg.first))? {
                for e in block::chunk_entries(&value)? {
                    all.push((e.term.to_vec(), e.last, e.block.to_vec()));
                }
                tx.delete(POST_TREE, &key)?;
            }
            all.sort();
            seg.buckets = buckets;
            for bucket in 0..buckets {
                let mine: Vec<_> = all.iter().filter(|(t, _, _)| seg.bucket(keys::term_hash(t)) == bucket).collect();
                if !mine.is_empty() {
                    let entries = mine.iter().map(|(term, last, block)| block::Entry { term, last: *last, block });
                    tx.put(POST_TREE, &keys::chunk_key(&prefix, seg.first, bucket), &block::encode_chunk(entries))?;
                }
            }
            write_stats(tx, &prefix, &stats)
        })
        .unwrap();
}

#[test]
fn segments_of_any_bucket_count_merge_with_the_others() {
    let (_dir, store) = open();
    let part: &[u8] = b"t\0u\0s2\0";
    let mut model = Model::new();
    // `FANOUT` batches, the first spread over 3 buckets (not a power of two), the others over
    // powers of two: the merge takes the map of terms, not the nested classes, and nothing is lost.
    for batch in 0..FANOUT as u64 {
        let texts: Vec<(u64, u32, String)> = (0..4_u64)
            .map(|i| {
                let words: Vec<&str> =
                    (0..5).map(|k| WORDS[((batch * 7 + i * 3 + k) % WORDS.len() as u64) as usize]).collect();
                (batch * 4 + i, 0, words.join(" "))
            })
            .collect();
        index_batch(&store, part, &mut model, texts);
        if batch == 0 {
            rebucket(&store, part, 3);
        }
    }
    assert_eq!(segments_of(&store, part), [(0, 1)], "the batches were merged");
    let snap = store.snapshot().unwrap();
    for query in WORDS {
        let got = search(&snap, part, query, 1000).unwrap();
        let want = brute_force(&model, 0, query);
        assert_eq!(ids(&got), want.iter().map(|(at, _)| *at).collect::<Vec<_>>(), "query {query}");
    }
}

#[test]
fn bucket_counts_are_powers_of_two_near_the_chunk_size() {
    use merge::{CHUNK_BYTES, bucket_count};
    assert_eq!(bucket_count(0), 1);
    assert_eq!(bucket_count(CHUNK_BYTES * 5), 8, "6 lies as near 4 as 8: a tie goes up");
    assert_eq!(bucket_count(CHUNK_BYTES * 49), 64);
    assert_eq!(bucket_count(CHUNK_BYTES * 40), 32);
    assert_eq!(bucket_count(usize::MAX / 2), 1 << 16);
    assert!((0..5000).map(|k| bucket_count(k * 97)).all(u32::is_power_of_two));
}

// --- incremental merges: a merge spans several indexing calls; readers and removals agree at every step ---

/// A vocabulary of made-up words (no stop words, each its own stem).
fn vocab_word(n: u64) -> String {
    // Digits before letters: a letter before a digit would cut it into parts (`text::ident_parts`).
    format!("{n}wq")
}

/// The partition's totals.
fn totals(store: &Store, part: &[u8]) -> Option<Stats> {
    let value = store.snapshot().unwrap().get(STATS_TREE, &part_prefix(part).unwrap()).unwrap()?;
    Some(keys::decode_stats(&value).unwrap())
}

/// The merge in progress in `part`, if any.
fn merge_of(store: &Store, part: &[u8]) -> Option<keys::Merge> {
    totals(store, part).and_then(|s| s.merge)
}

/// Checks `search` (order and scores), `doc_freq` and `passages_with_all_terms` against the model
/// for every word of the vocabulary `0..words` and a few multi-word queries.
fn agree(store: &Store, part: &'static [u8], model: &Model, words: u64) {
    let snap = store.snapshot().unwrap();
    let mut queries: Vec<String> = (0..words).map(vocab_word).collect();
    queries.push(format!("{} {} {}", vocab_word(1), vocab_word(2), vocab_word(3)));
    queries.push(format!("{} {}", vocab_word(0), vocab_word(words - 1)));
    for query in &queries {
        let got = search(&snap, part, query, 10_000).unwrap();
        let want = brute_force(model, 0, query);
        assert_eq!(ids(&got), want.iter().map(|(at, _)| *at).collect::<Vec<_>>(), "query {query}");
        for (hit, (_, score)) in got.iter().zip(&want) {
            assert!((f64::from(hit.score) - score).abs() < 1e-4, "query {query}: {} vs {score}", hit.score);
        }
        let terms: Vec<String> = tokens(query).into_iter().map(|t| t.term).collect();
        if let [term] = terms.as_slice() {
            assert_eq!(doc_freq(&snap, part, term, usize::MAX).unwrap(), want.len(), "df of {query}");
        }
        let mut all: Vec<(u64, u32)> = model
            .iter()
            .filter(|(_, text)| {
                let have: Vec<String> = tokens(text).into_iter().map(|t| t.term).collect();
                terms.iter().all(|t| have.contains(t))
            })
            .map(|(&(_, d, o), _)| (d, o))
            .collect();
        all.sort_unstable();
        let q = query.clone();
        let (found, _) = store.write(move |tx| passages_with_all_terms(tx, part, &q)).unwrap();
        assert_eq!(found, all, "passages with all of {query}");
    }
    assert!(totals(store, part).is_none_or(|s| s.passages == model.len() as u64));
}

/// `count` passages of `per` words drawn from `0..words`, at docs from `doc`.
fn random_texts(
    draw: &mut impl FnMut(u64) -> u64,
    doc: u64,
    count: u64,
    per: u64,
    words: u64,
) -> Vec<(u64, u32, String)> {
    (0..count)
        .map(|i| {
            let text: Vec<String> = (0..per).map(|_| vocab_word(draw(words))).collect();
            (doc + i, 0, text.join(" "))
        })
        .collect()
}

fn drawer(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    }
}

#[test]
fn a_merge_spans_several_index_calls_and_readers_agree_at_every_step() {
    let (_dir, store) = open();
    let part: &'static [u8] = b"t\0u\0m1\0";
    let mut model = Model::new();
    let mut draw = drawer(11);
    let (mut longest, mut run, mut merges) = (0, 0, 0);
    for batch in 0..(2 * FANOUT as u64 + 10) {
        let texts = random_texts(&mut draw, batch * 6, 6, 10, 60);
        index_batch(&store, part, &mut model, texts);
        match merge_of(&store, part) {
            Some(m) => {
                assert!(m.done > 0 && m.done < m.classes, "{m:?}");
                run += 1;
                longest = longest.max(run);
            }
            None if run > 0 => (run, merges) = (0, merges + 1),
            None => {}
        }
        agree(&store, part, &model, 60);
    }
    assert!(longest >= 3, "a merge spanned {longest} calls");
    assert_eq!(merges, 2, "both level-1 merges finished");
    let levels: Vec<u8> = segments_of(&store, part).iter().map(|s| s.1).collect();
    assert_eq!(levels, [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn removals_and_reindexing_mid_merge_find_postings_in_done_and_undone_classes() {
    let (_dir, store) = open();
    let part: &'static [u8] = b"t\0u\0m2\0";
    let mut model = Model::new();
    let mut draw = drawer(5);
    for batch in 0..FANOUT as u64 {
        let texts = random_texts(&mut draw, batch * 6, 6, 10, 60);
        index_batch(&store, part, &mut model, texts);
    }
    let m = merge_of(&store, part).expect("the merge is under way");
    assert!(m.done > 0 && m.done < m.classes);
    // Passages of the inputs holding a term of a class done and one of a class not done: their
    // postings are in the output's chunks and in the inputs' at once.
    let split: Vec<(u64, u32)> = model
        .iter()
        .filter(|(_, text)| {
            let done: Vec<bool> = tokens(text).iter().map(|t| m.is_done(keys::term_hash(t.term.as_bytes()))).collect();
            done.contains(&true) && done.contains(&false)
        })
        .map(|(&(_, d, o), _)| (d, o))
        .collect();
    assert!(split.len() > 20, "{} passages span both", split.len());
    // A passage, a whole document and a place re-indexed (its new batch advances the merge).
    let (doc, ordinal) = split[0];
    model.remove(&(0, doc, ordinal));
    assert!(store.write(move |tx| remove_passage(tx, part, doc, ordinal)).unwrap().0);
    assert_eq!(merge_of(&store, part), Some(m), "removal leaves the merge where it was");
    agree(&store, part, &model, 60);
    let doc = split[5].0;
    model.retain(|&(_, d, _), _| d != doc);
    assert_eq!(store.write(move |tx| remove_doc(tx, part, doc)).unwrap().0, 1);
    agree(&store, part, &model, 60);
    let texts = vec![(split[9].0, 0, format!("{} {}", vocab_word(0), vocab_word(61))), (1000, 0, vocab_word(2))];
    index_batch(&store, part, &mut model, texts);
    agree(&store, part, &model, 62);
    // Keep indexing (re-indexing places of the inputs too) and removing until the merge is done.
    let mut calls = 0;
    while merge_of(&store, part).is_some() {
        let (doc, ordinal) = split[20 + calls];
        let texts = vec![(doc, ordinal, format!("{} {}", vocab_word(3), vocab_word(calls as u64)))];
        index_batch(&store, part, &mut model, texts);
        let (doc, ordinal) = split[10 + calls];
        if model.remove(&(0, doc, ordinal)).is_some() {
            assert!(store.write(move |tx| remove_passage(tx, part, doc, ordinal)).unwrap().0);
        }
        agree(&store, part, &model, 62);
        calls += 1;
    }
    assert!(calls >= 1);
    assert_eq!(segments_of(&store, part)[0].1, 1, "the inputs became one segment of level 1");
    let docs: Vec<u64> = model.keys().map(|&(_, d, _)| d).collect();
    drop_docs(&store, part, docs);
    assert_eq!(keys_of(&store, part), 0);
}

#[test]
fn a_partition_emptied_mid_merge_leaves_no_key_and_starts_over() {
    let (_dir, store) = open();
    let part: &'static [u8] = b"t\0u\0m3\0";
    let mut model = Model::new();
    let mut draw = drawer(9);
    for batch in 0..FANOUT as u64 {
        index_batch(&store, part, &mut model, random_texts(&mut draw, batch * 6, 6, 10, 60));
    }
    assert!(merge_of(&store, part).is_some());
    let docs: Vec<u64> = model.keys().map(|&(_, d, _)| d).collect();
    model.clear();
    drop_docs(&store, part, docs);
    assert_eq!(keys_of(&store, part), 0, "the chunks of done and undone classes are all gone");
    index_batch(&store, part, &mut model, random_texts(&mut draw, 500, 3, 5, 60));
    agree(&store, part, &model, 60);
}

/// Every posting chunk of `part`.
fn post_entries(store: &Store, part: &[u8]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let snap = store.snapshot().unwrap();
    snap.prefix(POST_TREE, &part_prefix(part).unwrap()).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_call_rewrites_a_bounded_share_of_a_large_merge() {
    let (_dir, store) = open();
    let part: &'static [u8] = b"t\0u\0m4\0";
    let prefix = part_prefix(part).unwrap();
    let mut model = Model::new();
    let mut draw = drawer(3);
    // Batches of unequal sizes (so merges re-bucket small inputs too), to a level-2 merge.
    let (mut most, mut level2_bytes, mut level2_calls) = (0, 0, 0);
    let mut batch = 0;
    while totals(&store, part).is_none_or(|s| s.segments[0].level < 2) {
        let before = post_entries(&store, part);
        let new = keys::segment_prefix(&prefix, totals(&store, part).map_or(0, |s| s.next_batch));
        let count = if batch % 7 == 3 { 1 } else { 8 };
        index_batch(&store, part, &mut model, random_texts(&mut draw, batch * 8, count, 12, 400));
        let after = post_entries(&store, part);
        // Bytes of chunks erased or written by the call's merging (the batch's own segment aside).
        let mut changed = 0;
        for (key, value) in &before {
            if after.get(key) != Some(value) {
                changed += key.len() + value.len();
            }
        }
        for (key, value) in &after {
            if !key.starts_with(&new) && before.get(key) != Some(value) {
                changed += key.len() + value.len();
            }
        }
        most = most.max(changed);
        if let Some(m) = merge_of(&store, part)
            && totals(&store, part).unwrap().segments[m.start as usize].level == 1
        {
            level2_calls += 1;
            level2_bytes = level2_bytes.max(before.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>());
        }
        batch += 1;
    }
    let bound = 6 * merge::MERGE_STEP_BYTES;
    assert!(most <= bound, "a call changed {most} bytes of postings");
    assert!(level2_bytes > 4 * bound, "the level-2 merge took {level2_bytes} bytes in all");
    assert!(level2_calls >= 10, "it spanned {level2_calls} calls");
    agree(&store, part, &model, 40);
}

#[test]
fn totals_with_a_merge_in_progress_round_trip_and_refuse_damage() {
    let seg = |first, buckets| keys::Segment { first, level: 1, buckets };
    let segments = vec![keys::Segment { first: 0, level: 2, buckets: 64 }, seg(16, 8), seg(20, 16), seg(24, 4)];
    let merge = keys::Merge { start: 1, inputs: 2, classes: 8, out_buckets: 16, done: 3 };
    let stats = Stats { passages: 10, tokens: 90, next_batch: 30, segments, merge: Some(merge) };
    let bytes = keys::encode_stats(&stats);
    assert_eq!(bytes.len(), 28 + 13 * 4 + 20);
    assert_eq!(keys::decode_stats(&bytes).unwrap(), stats);
    for cut in 0..bytes.len() {
        assert!(keys::decode_stats(&bytes[..cut]).is_err());
    }
    // The decoder before incremental merges took `count & !HASHED` segments of 13 bytes: with
    // the MERGING bit the length cannot match, so it refused such totals as malformed.
    let count = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
    assert_ne!(28 + 13 * u64::from(count & !keys::HASHED), bytes.len() as u64);
    // Totals without a merge are byte for byte what they were.
    let idle = Stats { merge: None, ..stats.clone() };
    assert_eq!(u32::from_le_bytes(keys::encode_stats(&idle)[24..28].try_into().unwrap()), 4 | keys::HASHED);
    let unsound = [
        keys::Merge { done: 8, ..merge },        // every class done is never stored
        keys::Merge { out_buckets: 0, ..merge }, // a class done without an output count
        keys::Merge { done: 0, ..merge },        // an output count before class 0
        keys::Merge { out_buckets: 4, ..merge }, // fewer output buckets than classes
        keys::Merge { classes: 6, ..merge },     // not a power of two
        keys::Merge { classes: 16, ..merge },    // an input of 8 buckets with a class done
        keys::Merge { start: 3, ..merge },       // inputs past the segments
        keys::Merge { start: 0, ..merge },       // inputs of two levels
        keys::Merge { inputs: 1, ..merge },      // a merge of one
    ];
    for m in unsound {
        let bad = Stats { merge: Some(m), ..stats.clone() };
        assert!(keys::decode_stats(&keys::encode_stats(&bad)).is_err(), "{m:?}");
    }
    // Before class 0, inputs may have fewer buckets than the classes (they are re-bucketed first).
    let early = Stats { merge: Some(keys::Merge { classes: 16, out_buckets: 0, done: 0, ..merge }), ..stats.clone() };
    assert_eq!(keys::decode_stats(&keys::encode_stats(&early)).unwrap(), early);
    // The merge bit without the chunked layout is damage.
    let mut legacy = bytes.clone();
    legacy[24..28].copy_from_slice(&(4 | keys::MERGING).to_le_bytes());
    assert!(keys::decode_stats(&legacy).is_err());
}

#[derive(Debug, Clone)]
enum MergeOp {
    Batch(Vec<(u64, u32, Vec<u64>)>),
    RemovePassage(u64, u32),
    RemoveDoc(u64),
    Search(Vec<u64>),
}

fn merge_op() -> impl Strategy<Value = MergeOp> {
    let words = proptest::collection::vec(0..30_u64, 0..10);
    prop_oneof![
        6 => proptest::collection::vec((0..24_u64, 0..3_u32, words.clone()), 1..8).prop_map(MergeOp::Batch),
        2 => (0..24_u64, 0..3_u32).prop_map(|(d, o)| MergeOp::RemovePassage(d, o)),
        1 => (0..24_u64).prop_map(MergeOp::RemoveDoc),
        2 => proptest::collection::vec(0..30_u64, 1..4).prop_map(MergeOp::Search),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn search_agrees_with_brute_force_through_incremental_merges(ops in proptest::collection::vec(merge_op(), 1..90)) {
        let (_dir, store) = open();
        let part: &'static [u8] = b"t\0u\0mp\0";
        let mut model = Model::new();
        let text = |words: &[u64]| words.iter().map(|&w| vocab_word(w)).collect::<Vec<_>>().join(" ");
        for op in ops {
            match op {
                MergeOp::Batch(passages) => {
                    let texts = passages.iter().map(|(d, o, words)| (*d, *o, text(words))).collect();
                    index_batch(&store, part, &mut model, texts);
                }
                MergeOp::RemovePassage(doc, ordinal) => {
                    let was = model.remove(&(0, doc, ordinal)).is_some();
                    prop_assert_eq!(store.write(move |tx| remove_passage(tx, part, doc, ordinal)).unwrap().0, was);
                }
                MergeOp::RemoveDoc(doc) => {
                    let before = model.len();
                    model.retain(|&(_, d, _), _| d != doc);
                    let (removed, _) = store.write(move |tx| remove_doc(tx, part, doc)).unwrap();
                    prop_assert_eq!(removed as usize, before - model.len());
                }
                MergeOp::Search(words) => {
                    let query = text(&words);
                    let got = search(&store.snapshot().unwrap(), part, &query, 1000).unwrap();
                    let want = brute_force(&model, 0, &query);
                    prop_assert_eq!(ids(&got), want.iter().map(|(at, _)| *at).collect::<Vec<_>>(), "query {}", query);
                    for (hit, (_, score)) in got.iter().zip(&want) {
                        prop_assert!((f64::from(hit.score) - score).abs() < 1e-4, "query {}: {} vs {}", query, hit.score, score);
                    }
                }
            }
            // The totals always decode (a merge in progress included), and count the live passages.
            prop_assert_eq!(totals(&store, part).map_or(0, |s| s.passages), model.len() as u64);
            if model.is_empty() {
                prop_assert_eq!(keys_of(&store, part), 0);
            }
        }
        agree(&store, part, &model, 30);
    }
}

#[test]
fn accents_and_nfd_find_passages_indexed_before_terms_were_folded() {
    let (_dir, store) = open();
    let part: &[u8] = b"p";
    // Passage (1, 0) as the tokenizer wrote "Café naïve résumé" before it folded (lowercased,
    // stemmed, accents kept); (2, 0) and (3, 0) by the tokenizer now.
    store
        .write(move |tx| {
            let mut batch = Indexer::new(part)?;
            batch.add_terms(1, 0, &["caf\u{e9}", "na\u{ef}v", "r\u{e9}sum\u{e9}"]);
            batch.finish(tx)
        })
        .unwrap();
    index(&store, part, &[(2, 0, "Cafe\u{301} na\u{ef}ve"), (3, 0, "cafe naive resume, the lighthouse")]);
    // The new passages hold one term for every spelling.
    let found = |query: &str| {
        let mut at = ids(&find(&store, part, query));
        at.sort_unstable();
        at
    };
    for query in ["cafe", "CAFE", "caf\u{e9}", "Cafe\u{301}"] {
        let at = found(query);
        assert!(at.contains(&(2, 0)) && at.contains(&(3, 0)), "{query}");
    }
    // An accented or NFD query also finds the old passage, under its unfolded terms; an
    // accent-less one cannot (nothing says which accented spellings an old passage holds).
    assert_eq!(found("Caf\u{e9}"), [(1, 0), (2, 0), (3, 0)]);
    assert_eq!(found("re\u{301}sume\u{301} nai\u{308}ve"), [(1, 0), (2, 0), (3, 0)]);
    assert_eq!(found("cafe"), [(2, 0), (3, 0)]);
    let hits = find(&store, part, "R\u{c9}SUM\u{c9}");
    assert_eq!(ids(&hits), [(1, 0), (3, 0)], "the shorter passage first");
    assert_eq!(hits[0].matched, ["resum"], "reported as the term now");
    // The forget path's look-up sees the old passage, and removing it leaves none of its keys.
    let all = store.write(move |tx| passages_with_all_terms(tx, part, "Caf\u{e9} na\u{ef}ve")).unwrap().0;
    assert_eq!(all, [(1, 0), (2, 0), (3, 0)]);
    assert_eq!(store.write(move |tx| remove_doc(tx, part, 1)).unwrap().0, 1);
    assert_eq!(found("Caf\u{e9}"), [(2, 0), (3, 0)]);
    store.write(move |tx| Ok((remove_doc(tx, part, 2)?, remove_doc(tx, part, 3)?))).unwrap();
    assert_eq!(keys_of(&store, part), 0);
}

/// Passages removed together in one call, more than one run of `DROP_RUN` (across segments, a
/// passage named twice, one never indexed), and documents the same way: the index agrees with a
/// model of what is left, and an emptied partition leaves no key.
#[test]
fn passages_removed_together_across_runs_leave_what_one_at_a_time_would() {
    let (_dir, store) = open();
    let part: &'static [u8] = b"t\0u\0bulk\0";
    let mut model = Model::new();
    let mut draw = drawer(21);
    let per_batch = 2500;
    for batch in 0..4 {
        index_batch(&store, part, &mut model, random_texts(&mut draw, batch * per_batch, per_batch, 8, 40));
    }
    // Every other passage, then the first one again and one that was never indexed.
    let mut gone: Vec<(u64, u32)> = (0..4 * per_batch).step_by(2).map(|d| (d, 0)).collect();
    assert!(gone.len() > DROP_RUN);
    gone.extend([(0, 0), (99_999, 0)]);
    for &(d, o) in &gone {
        model.remove(&(0, d, o));
    }
    let (removed, _) = store.write(move |tx| remove_passages(tx, part, &gone)).unwrap();
    assert_eq!(removed, 2 * per_batch);
    agree(&store, part, &model, 40);
    let docs: Vec<u64> = model.keys().map(|&(_, d, _)| d).collect();
    let (removed, _) = store.write(move |tx| remove_docs(tx, part, &docs)).unwrap();
    assert_eq!(removed, 2 * per_batch);
    assert_eq!(keys_of(&store, part), 0);
}
