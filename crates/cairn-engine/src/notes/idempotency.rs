//! `idempotencyKey` (DESIGN.md §2), one rule for every notes write that takes it (`note_write`,
//! `handoff_create`): the key is the calling agent's own, scoped to (partition, agent, key). The
//! same key with the same request gets the first receipt back, marked `replayed: true`, and
//! stores nothing; with another request it is `IDEMPOTENCY_CONFLICT`. A request is compared as
//! understood (defaults applied, spellings recomposed), never as spelled. Records are stored, so a
//! retry after a restart still replays, for the store's window (`idempotency_window.rs`); they
//! go then, or before with what they wrote (a note forget, a handoff forget) or the whole scope.

use super::fields::{Fields, printable, short_name};
use super::idempotency_upgrade::time_of;
use super::idempotency_window::{IDEM_AT, at_key, decode, live, recorded_at};
use super::{Outcome, refuse};
use crate::error::Result;
use crate::knowledge::api::Caller;
use crate::write::WriteTxn;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// `part | agent \0 | idempotency key` → `{hash, receipt, at}`: the first receipt of a retried
/// write and when it was made (the caller's `now`, ms).
pub(crate) const IDEM: &str = "n.idem";

/// A write's `idempotencyKey` and the hashes a retry is compared by.
pub(super) struct Idempotency {
    key: String,
    /// The request as understood: defaults applied, spellings recomposed, so a retry that spells
    /// a default out is the same request. The node's policy (`allowPrivate`) is not part of it.
    hash: String,
    /// The body as sent, as note records written before were hashed: such a record still matches.
    as_sent: String,
}

impl Idempotency {
    /// The `idempotencyKey` field of a write, checked as every stored name (1–256 bytes, not
    /// blank, no NUL, printable); `None` when absent.
    pub(super) fn field(f: &mut Fields) -> Outcome<Option<String>> {
        let key = f.string("idempotencyKey")?;
        if let Some(k) = &key {
            short_name("idempotencyKey", k)?;
            printable("idempotencyKey", k)?;
        }
        Ok(key)
    }

    /// The idempotency of a request with `key`, `understood` as the verb reads it and `input` as sent.
    pub(super) fn new(key: String, understood: &Value, input: &Value) -> Idempotency {
        Idempotency { key, hash: body_hash(understood), as_sent: body_hash(input) }
    }

    fn record_key(&self, caller: &Caller) -> Vec<u8> {
        caller.part.key(&[caller.agent.as_bytes(), b"\0", self.key.as_bytes()])
    }

    /// What a retry gets: `Some` with the first receipt (marked `replayed: true`) or the conflict,
    /// `None` when the key is new or its record older than `window` ms. Read in the write's
    /// transaction, before anything is written.
    pub(super) fn replay(&self, tx: &mut WriteTxn<'_>, caller: &Caller, window: i64) -> Result<Option<Outcome<Value>>> {
        let key = self.record_key(caller);
        let Some(stored) = tx.get(IDEM, &key)? else { return Ok(None) };
        let stored = decode(&stored)?;
        if !live(time_of(tx, &caller.part, &key, &stored, caller.now)?, caller.now, window) {
            return Ok(None);
        }
        if [&self.hash, &self.as_sent].iter().any(|h| stored["hash"].as_str() == Some(h.as_str())) {
            let mut receipt = stored["receipt"].clone();
            // Else the caller cannot tell a replay, which stored nothing, from a first write.
            receipt["replayed"] = json!(true);
            return Ok(Some(Ok(receipt)));
        }
        // What the key's first request did: a model that changed its request and retried with
        // the key could not tell whether anything was written (found playing two agents).
        let receipt = &stored["receipt"];
        let applied = match (receipt["key"].as_str(), receipt["taskId"].as_str()) {
            (Some(key), _) => format!("version {} of note {key:?}", receipt["version"]),
            (None, Some(task)) => format!("handoff {} on task {task:?}", receipt["id"].as_str().unwrap_or_default()),
            (None, None) => "what details.receipt says".to_owned(),
        };
        Ok(Some(Err(refuse(
            "IDEMPOTENCY_CONFLICT",
            format!(
                "idempotencyKey {:?} was used with a different request, which wrote {applied}; this one wrote \
                 nothing: send it with a new idempotencyKey",
                self.key
            ),
            vec![json!({ "field": "idempotencyKey", "receipt": receipt })],
        ))))
    }

    /// Keeps `receipt` for the retries of this request, in the write's transaction, in place of
    /// an expired record of the key.
    pub(super) fn remember(&self, tx: &mut WriteTxn<'_>, caller: &Caller, receipt: &Value) -> Result<()> {
        let key = self.record_key(caller);
        if let Some(expired) = tx.get(IDEM, &key)?
            && let Some(at) = recorded_at(&decode(&expired)?)
        {
            tx.erase(IDEM_AT, &at_key(&caller.part, &key, at))?;
        }
        let stored = json!({ "hash": self.hash, "receipt": receipt, "at": caller.now });
        tx.put(IDEM, &key, &serde_json::to_vec(&stored).expect("JSON serialises"))?;
        tx.put(IDEM_AT, &at_key(&caller.part, &key, caller.now), &[])
    }
}

/// Removes the idempotency records of `part` whose receipt `gone` picks (given the writing agent
/// and the receipt), with their index entries: a retried write would otherwise answer with what
/// was forgotten. The scope's records are read one at a time (one is kept per idempotent write
/// for the window) and only the keys to delete are held.
pub(super) fn forget_receipts(
    tx: &mut WriteTxn<'_>,
    part: &crate::knowledge::Partition,
    gone: impl Fn(&[u8], &Value) -> bool,
) -> Result<()> {
    let mut doomed = Vec::new();
    tx.scan_prefix(IDEM, part.prefix(), |k, v| {
        let stored = decode(v)?;
        let writer = k[part.prefix().len()..].split(|b| *b == 0).next().unwrap_or_default();
        if gone(writer, &stored["receipt"]) {
            doomed.push((k.to_vec(), recorded_at(&stored)));
        }
        Ok(())
    })?;
    for (k, at) in doomed {
        if let Some(at) = at {
            tx.erase(IDEM_AT, &at_key(part, &k, at))?;
        }
        tx.erase(IDEM, &k)?;
    }
    Ok(())
}

/// sha256 of the request with object keys sorted, so a retry that reorders keys is the same body.
fn body_hash(v: &Value) -> String {
    fn canonical(v: &Value, out: &mut Vec<u8>) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push(b'{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend(serde_json::to_vec(k).expect("a string serialises"));
                    out.push(b':');
                    canonical(&m[k], out);
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    canonical(item, out);
                }
                out.push(b']');
            }
            leaf => out.extend(serde_json::to_vec(leaf).expect("JSON serialises")),
        }
    }
    let mut bytes = Vec::new();
    canonical(v, &mut bytes);
    Sha256::digest(&bytes).iter().fold(String::with_capacity(64), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}
