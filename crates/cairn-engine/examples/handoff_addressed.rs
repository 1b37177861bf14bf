//! The cost of `handoff_resume {}` (the capsules addressed to the caller, newest first) as an agent's
//! received handoffs pile up: `n` capsules addressed to one agent (a tenth of them expired by the
//! time of the reads, each task holding ten), then the first page and a page deep behind a cursor,
//! read `reads` times each. A measurement, not a test:
//! `cargo run -p cairn-engine --release --example handoff_addressed [n] [reads]`.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/calls.rs"]
mod calls;

use cairn_engine::knowledge::Partition;
use cairn_engine::knowledge::api::Caller;
use cairn_engine::{Store, StoreOptions};
use calls::{call_json, caller, timed};
use serde_json::json;
use std::time::Instant;

const T0: i64 = 1_700_000_000_000;
/// Writers: their writes share commits, so filling the store takes seconds, not a sync each.
const THREADS: usize = 8;

#[allow(clippy::print_stdout, reason = "a measurement script that reports on stdout")]
fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let n = args.first().copied().unwrap_or(20_000);
    let reads = args.get(1).copied().unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let store = store.clone();
            s.spawn(move || {
                for i in (t..n).step_by(THREADS) {
                    let at = T0 + i64::try_from(i).unwrap();
                    let mut body = json!({"taskId": format!("T{}", i / 10), "summary": format!("capsule {i}: the next steps are in the plan"), "to": "claude"});
                    if i % 10 == 3 {
                        body["expiresAt"] = json!(cairn_engine::notes::iso_ms(at + 1_000));
                    }
                    call_json(&store, &caller("codex", at), "handoff_create", &body);
                }
            });
        }
    });
    println!("{n} capsules addressed to one agent written in {:.1?}", started.elapsed());
    let now = T0 + i64::try_from(n).unwrap() + 10_000;
    let me = caller("claude", now);
    // The first read may build what the store lacks; it is not one of the timed reads.
    let first = call_json(&store, &me, "handoff_resume", &json!({}));
    assert_eq!(first["handoffs"].as_array().unwrap().len(), 20, "{first}");
    let (median, best) = timed(reads, |_| {
        call_json(&store, &me, "handoff_resume", &json!({}));
    });
    println!("handoff_resume {{}} first page (20): median {median:.2?}, best {best:.2?}");
    let mut cursor = first["nextCursor"].as_str().unwrap().to_owned();
    for _ in 0..200 {
        let page = call_json(&store, &me, "handoff_resume", &json!({"cursor": cursor, "limit": 50}));
        page["nextCursor"].as_str().unwrap().clone_into(&mut cursor);
    }
    let (median, best) = timed(reads, |_| {
        call_json(&store, &me, "handoff_resume", &json!({"cursor": cursor, "limit": 20}));
    });
    println!("handoff_resume {{cursor}} a page 10,000 capsules deep: median {median:.2?}, best {best:.2?}");
    let elsewhere = caller("claude", now);
    let other = Caller { part: Partition::new("local", "u1", "other").unwrap(), ..elsewhere };
    let (median, best) = timed(reads, |_| {
        call_json(&store, &other, "handoff_resume", &json!({}));
    });
    println!("handoff_resume {{}} in an empty scope (elsewhere counts them): median {median:.2?}, best {best:.2?}");
}
