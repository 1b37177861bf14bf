//! `forget {source}` of a small source reads pages by what the source holds, not by what its
//! scope holds (found by a review: the forget read every document record of the scope, texts
//! included, every relation and every entity event, so a source of three documents in a scope
//! of 100k cost the scope whole). Pages are the store's count (`Store::pages_read`), never a
//! clock; the time is printed for the record only.

use crate::knowledge::testing::{call, caller, counted};
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

const LABELS: usize = 50;

fn ok(reply: &Value) -> &Value {
    assert!(reply.get("error").is_none(), "{reply}");
    reply
}

/// A scope of `docs` documents from `LABELS` labels, two facts a document asserted under the
/// same labels, then source `tiny`: three documents (one stating two facts) and a fact
/// asserted under it; another label states one of its facts too.
fn scope(docs: usize) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint while the reads are counted: its pages are not theirs.
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    let run = |verb: &str, body: Value| ok(&call(&store, &caller(2), verb, &body).unwrap()).clone();
    for i in 0..docs {
        // About 600 bytes, as a short memo is.
        let line = format!("Person {} met Person {} in City {}. ", i % 997, (i + 1) % 997, i % 31);
        let content = format!("Report {i}: {}", line.repeat(600 / line.len()));
        run("remember", json!({"content": content, "source": format!("feed {}", i % LABELS)}));
    }
    for label in 0..LABELS {
        let relations: Vec<Value> = (0..docs * 2 / LABELS)
            .map(|i| json!({"source": format!("Person {}", (i * LABELS + label) % 997), "target": format!("Company {i}"), "type": "works_at"}))
            .collect();
        for batch in relations.chunks(crate::knowledge::limits::MAX_RELATIONS) {
            run("remember", json!({"facts": {"relations": batch}, "source": format!("feed {label}")}));
        }
    }
    for i in 0..3 {
        run("remember", json!({"content": format!("Tiny memo {i} on Ada Byrne."), "source": "tiny"}));
    }
    let stated = json!({"relations": [{"source": "Ada Byrne", "target": "Tiny Co", "type": "works_at"},
                                      {"source": "Ada Byrne", "target": "Small Co", "type": "advises"}]});
    run("remember", json!({"content": "Tiny memo 3: Ada Byrne works at Tiny Co.", "source": "tiny", "facts": stated}));
    run("relate", json!({"from": "Ada Byrne", "to": "Grace Hall", "type": "knows", "source": "tiny"}));
    run("relate", json!({"from": "Ada Byrne", "to": "Tiny Co", "type": "works_at", "source": "feed 0"}));
    (dir, store)
}

#[test]
fn forgetting_a_small_source_reads_no_more_pages_in_a_scope_ten_times_larger() {
    let mut pages = Vec::new();
    for docs in [500, 5_000] {
        let (_dir, store) = scope(docs);
        let started = std::time::Instant::now();
        let (reply, read) = counted(&store, "forget", &json!({"source": "tiny"}));
        let took = started.elapsed();
        assert_eq!(reply["forgotten"]["documents"], 4, "{reply}");
        assert_eq!(reply["forgotten"]["facts"], 2, "{reply}");
        assert_eq!(reply["kept"][1]["count"], 1, "{reply}");
        eprintln!("forget a source of 4 documents in a scope of {docs}: {read} pages, {took:?}");
        pages.push(read);
    }
    // 379 and 497 pages. Reading the scope's documents, relations and entity events cost about
    // one page for every two documents it gained (3,563 and 5,645).
    assert!(pages[1] - pages[0] < 450, "{pages:?}: less than a page for every ten documents added");
}
