//! The cost of reading an entity whose attribute was re-set many times: "Ann"'s `mood` written
//! `n` times (one `remember` each, as an agent keeping it current does), beside a note she wrote,
//! then `recall {subject: Ann}`, a `context` question about her and the first page of `export`,
//! each timed `reads` times (median and fastest, µs). A measurement, not a test:
//! `cargo run -p cairn-engine --release --example entity_attributes [n] [reads]`.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/calls.rs"]
mod calls;

use cairn_engine::{Store, StoreOptions};
use calls::{caller, knowledge_json, timed};
use serde_json::{Value, json};
use std::time::Duration;

const T0: i64 = 1_700_000_000_000;

/// The reply of `verb` on `body` at `now`, as the agent keeping Ann current.
fn call_json(store: &Store, now: i64, verb: &str, body: &Value) -> Value {
    knowledge_json(store, &caller("claude", now), verb, body)
}

/// The median and the fastest of `reads` calls of `verb` on `body`.
fn timed_calls(store: &Store, now: i64, reads: usize, verb: &str, body: &Value) -> (Duration, Duration) {
    timed(reads, |_| {
        call_json(store, now, verb, body);
    })
}

#[allow(clippy::print_stdout, reason = "a measurement script that reports on stdout")]
fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let n = args.first().copied().unwrap_or(2_000);
    let reads = args.get(1).copied().unwrap_or(30);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let note = json!({"content": "Ann wrote the design notes for the storage engine.",
        "facts": {"entities": [{"name": "Ann", "type": "person"}]}});
    call_json(&store, T0, "remember", &note);
    for i in 0..n {
        let body = json!({"facts": {"entities": [{"name": "Ann", "attributes": {"mood": format!("mood {i}")}}]}});
        call_json(&store, T0 + 1 + i64::try_from(i).unwrap(), "remember", &body);
    }
    let now = T0 + i64::try_from(n).unwrap() + 10_000;
    let recall = json!({"subject": "Ann"});
    let shown = call_json(&store, now, "recall", &recall);
    assert_eq!(shown["subject"]["attributes"]["mood"], json!(format!("mood {}", n - 1)), "{shown}");
    let (recall, recall_min) = timed_calls(&store, now, reads, "recall", &recall);
    let context = json!({"question": "what did Ann write about the storage engine?"});
    let (context, context_min) = timed_calls(&store, now, reads, "context", &context);
    let (export, export_min) = timed_calls(&store, now, reads, "export", &json!({"limit": 50}));
    let us = |d: Duration| d.as_micros();
    println!(
        "n={n:>6}  recall {:>8} µs (min {:>8})  context {:>8} µs (min {:>8})  export first page {:>8} µs (min {:>8})",
        us(recall),
        us(recall_min),
        us(context),
        us(context_min),
        us(export),
        us(export_min)
    );
}
