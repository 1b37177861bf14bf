//! What the examples that call verbs share: a caller in one scope, a verb of either API called
//! with a JSON body (a refusal fails the run: a measurement of refused calls would measure
//! nothing), and timed repeats.

use cairn_engine::Store;
use cairn_engine::knowledge::Partition;
use cairn_engine::knowledge::api::Caller;
use serde_json::Value;
use std::time::{Duration, Instant};

/// `agent` of user `u1` in scope `default`, at `now` (ms).
#[allow(dead_code, reason = "not every example calls as this one caller")]
pub fn caller(agent: &str, now: i64) -> Caller {
    Caller { part: Partition::new("local", "u1", "default").unwrap(), agent: agent.into(), now }
}

/// The reply of the notes verb `verb` on `body`; panics on a refusal.
#[allow(dead_code, reason = "not every example calls the notes API")]
pub fn call_json(store: &Store, caller: &Caller, verb: &str, body: &Value) -> Value {
    answered(verb, body, cairn_engine::notes::api::call(store, verb, caller, &serde_json::to_vec(body).unwrap()))
}

/// The reply of the knowledge verb `verb` on `body`; panics on a refusal.
#[allow(dead_code, reason = "not every example calls the knowledge API")]
pub fn knowledge_json(store: &Store, caller: &Caller, verb: &str, body: &Value) -> Value {
    answered(verb, body, cairn_engine::knowledge::api::call(store, verb, caller, &serde_json::to_vec(body).unwrap()))
}

fn answered(verb: &str, body: &Value, reply: cairn_engine::Result<Vec<u8>>) -> Value {
    let reply: Value = serde_json::from_slice(&reply.unwrap()).unwrap();
    assert!(reply.get("error").is_none(), "{verb} {body}: {reply}");
    reply
}

/// The median and the fastest of `reads` runs of `f`, which is given the run's index.
#[allow(dead_code, reason = "not every example times repeats this way")]
pub fn timed(reads: usize, mut f: impl FnMut(usize)) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..reads)
        .map(|r| {
            let t = Instant::now();
            f(r);
            t.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], times[0])
}
