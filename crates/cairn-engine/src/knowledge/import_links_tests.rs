//! An imported document's passages link to every entity of the scope, those stored before the
//! import and those it stores, without reading every entity again for each call that holds a
//! document (`import_links.rs`). Pages are the store's count (`Store::pages_read`), never a clock.

use super::Partition;
use super::testing::TODAY;
use super::testing_api::{caller, export_pages, verb};
use super::trees::MENTION;
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    (dir, store)
}

/// The export of a scope holding one document that names `known` and `new`.
fn one_document(store: &Store, scope: &str, (known, new): (&str, &str)) -> Vec<Value> {
    let part = Partition::new("local", "u1", scope).unwrap();
    let content = format!("{known} met {new} at the harbour on the first day of the trip.");
    let body = json!({"content": content, "source": scope, "facts": {"entities": [{"name": known}, {"name": new}]}});
    let reply = verb(store, &caller(&part, TODAY - 60_000), "remember", &body).unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
    export_pages(store, &part, 5000).concat()
}

/// Whether some passage of `part` mentions the entity named `name`.
fn mentioned(store: &Store, part: &Partition, name: &str) -> bool {
    let (part, name) = (part.clone(), name.to_owned());
    let (found, _) = store
        .write(move |tx| {
            let Some(e) = super::forget::entity_in(tx, &part, &name)? else { return Ok(false) };
            Ok(!tx.prefix_within(MENTION, &part.key(&[&e.id.to_be_bytes()]), 10)?.unwrap_or_default().is_empty())
        })
        .unwrap();
    found
}

/// The pages the second of two imports of one document each reads, into a scope of `n` entities.
fn pages_for_a_document(n: usize) -> u64 {
    let (_dir, store) = store();
    let copy = Partition::new("local", "u1", "copy").unwrap();
    let who = caller(&copy, TODAY);
    for start in (0..n).step_by(1000) {
        let entities: Vec<Value> =
            (start..n.min(start + 1000)).map(|i| json!({"name": format!("Person {i}")})).collect();
        verb(&store, &caller(&copy, TODAY - 120_000), "remember", &json!({"facts": {"entities": entities}})).unwrap();
    }
    let first = one_document(&store, "a", ("Person 7", "Omar Quill"));
    let second = one_document(&store, "b", ("Person 9", "Lena Frost"));
    verb(&store, &who, "import", &json!({"records": first})).unwrap();
    let before = store.pages_read();
    let reply = verb(&store, &who, "import", &json!({"records": second})).unwrap();
    let pages = store.pages_read() - before;
    assert_eq!(reply["imported"]["documents"], 1, "{reply}");
    // Linked to an entity stored before and to one the import stored.
    for name in ["Person 7", "Omar Quill", "Person 9", "Lena Frost"] {
        assert!(mentioned(&store, &copy, name), "{name} is not linked");
    }
    pages
}

#[test]
fn a_document_imported_into_a_scope_of_many_entities_does_not_read_them_all() {
    let small = pages_for_a_document(200);
    let big = pages_for_a_document(4000);
    eprintln!("{small} pages at 200 entities, {big} at 4,000");
    // Read whole for each call, twenty times the entities cost many times the pages.
    assert!(big < small * 2, "{big} pages at 4,000 entities, {small} at 200");
}
