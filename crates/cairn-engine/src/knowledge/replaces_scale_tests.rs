//! `replaces` reads the subject's own edges of its type, from its adjacency list of that type
//! (`graph::every_edge_of_type`), never the scope's: ending Priya's job reads as many pages when
//! the scope holds 20,000 other facts (other subjects' `works_at`, at the employer she moves to,
//! facts of that type to Priya, her facts of other types, either way) as at 2,000. Pages are the
//! store's count (`Store::pages_read`), never a clock. The subject's own history of the type is
//! read whole, ended edges too: the adjacency keys hold no interval, so which ones the assertion
//! ends or restores is known only from their records.

use crate::knowledge::testing::{call, caller, counted};
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

/// A store where Priya worked at Initech, then Acme (`replaces`), and `filler` facts not hers of
/// that type, a quarter of each kind.
fn scope(filler: usize) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint while the reads are counted: its pages are not theirs.
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    for (to, replaces) in [("Initech", false), ("Acme", true)] {
        let body = json!({"from": "Priya", "to": to, "type": "works_at", "replaces": replaces});
        let reply = call(&store, &caller(1), "relate", &body).unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
    }
    let relations: Vec<Value> = (0..filler)
        .map(|i| match i % 4 {
            // Globex, where Priya moves, is stored already: a new end is compared with the scope's
            // names (`possible_duplicates`), a read of its own.
            0 => json!({"source": format!("Other {i}"), "target": "Globex", "type": "works_at"}),
            1 => json!({"source": format!("Contractor {i}"), "target": "Priya", "type": "works_at"}),
            2 => json!({"source": "Priya", "target": format!("Friend {i}"), "type": "knows"}),
            _ => json!({"source": format!("Fan {i}"), "target": "Priya", "type": "follows"}),
        })
        .collect();
    for batch in relations.chunks(crate::knowledge::limits::MAX_RELATIONS) {
        let reply = call(&store, &caller(2), "remember", &json!({"facts": {"relations": batch}})).unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
    }
    (dir, store)
}

/// The objects of a reply's `key` list of facts.
fn objects(reply: &Value, key: &str) -> Vec<String> {
    reply[key].as_array().unwrap().iter().map(|f| f["object"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn replaces_reads_the_subject_s_edges_of_its_type_not_the_scope_s() {
    let (_small_dir, small) = scope(2_000);
    let (_big_dir, big) = scope(20_000);
    // Each call, what it ends and what it restores.
    let calls =
        [("ends the job", "Globex", ["Acme"], None), ("restores the one before", "Acme", ["Globex"], Some("Acme"))];
    let mut costly = Vec::new();
    for (what, to, ended, restored) in calls {
        let body = json!({"from": "Priya", "to": to, "type": "works_at", "replaces": true});
        let (small_reply, small_pages) = counted(&small, "relate", &body);
        let (reply, big_pages) = counted(&big, "relate", &body);
        eprintln!("{what}: {small_pages} pages at 2,000 facts, {big_pages} at 20,000");
        for reply in [&small_reply, &reply] {
            assert_eq!(reply["fact"]["object"], to, "{what}: {reply}");
            assert_eq!(objects(reply, "ended"), ended, "{what}: {reply}");
            assert_eq!(objects(reply, "restored"), Vec::from_iter(restored), "{what}: {reply}");
        }
        // Ten times the facts deepen a tree or two, a page more per lookup; reading a list of the
        // scope, or all of Priya's, would cost pages in proportion to it.
        if big_pages * 2 > small_pages * 3 || big_pages >= 300 {
            costly.push(format!("{what}: {big_pages} pages, {small_pages} at 2,000"));
        }
    }
    assert_eq!(costly, Vec::<String>::new());
}
