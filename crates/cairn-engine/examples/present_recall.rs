//! The cost of a present-time read of a subject whose fact was ended and restored many times:
//! `Ann status S(i % 7)` related with `replaces` `n` times (one call a day, so each call ends the
//! live status and restores an earlier one, which keeps its earlier life as a copy), then
//! `memory_recall {subject: "Ann"}` and `memory_context` on her status, each timed `reads` times
//! after each mark. A measurement, not a test:
//! `cargo run -p cairn-engine --release --example present_recall [marks,..] [reads]`.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/calls.rs"]
mod calls;

use cairn_engine::{Store, StoreOptions};
use calls::{caller, knowledge_json, timed};
use serde_json::{Value, json};

const T0: i64 = 1_700_000_000_000;
const DAY: i64 = 86_400_000;

/// The reply of `verb` on `body` at `now`.
fn call_json(store: &Store, now: i64, verb: &str, body: &Value) -> Value {
    knowledge_json(store, &caller("bench", now), verb, body)
}

#[allow(clippy::print_stdout, reason = "a measurement script that reports on stdout")]
fn main() {
    let marks: Vec<usize> = std::env::args()
        .nth(1)
        .map_or_else(|| vec![250, 1_000, 2_000], |a| a.split(',').map(|m| m.parse().unwrap()).collect());
    let reads = std::env::args().nth(2).map_or(20, |r| r.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let mut done = 0;
    for &mark in &marks {
        for i in done..mark {
            let body = json!({"from": "Ann", "to": format!("S{}", i % 7), "type": "status", "replaces": true});
            call_json(&store, T0 + i64::try_from(i).unwrap() * DAY, "relate", &body);
        }
        done = mark;
        let now = T0 + i64::try_from(mark).unwrap() * DAY;
        let (recall, _) = timed(reads, |_| {
            let reply = call_json(&store, now, "recall", &json!({"subject": "Ann"}));
            assert_eq!(reply["facts"].as_array().map(Vec::len), Some(1), "{reply}");
        });
        let (context, _) = timed(reads, |_| {
            let reply = call_json(&store, now, "context", &json!({"question": "What is Ann's status?"}));
            assert_eq!(reply["coverage"]["facts"], json!(1), "{reply}");
        });
        println!("n={mark:>6}  recall {recall:>10.2?}  context {context:>10.2?}");
    }
}
