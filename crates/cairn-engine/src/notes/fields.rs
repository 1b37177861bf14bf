//! Reading a request body field by field, so every refusal names the field it is about (serde's
//! own messages name a line and column, not the field), and an unknown field is refused rather
//! than silently ignored (a typo such as `expectedVerison` must not turn a CAS write into a blind one).

use super::record::check_key;
use super::{Fail, Outcome, invalid};
use serde_json::{Map, Value};
use unicode_normalization::{UnicodeNormalization, is_nfc};

/// `name` recomposed (NFC): note keys and task ids name one note or task however they are
/// spelled, as users, scopes and agents do (`José` with a precomposed `é` and with `e` + U+0301
/// is one name), so two agents cannot create look-alike twins under `expectedVersion: 0`.
pub(crate) fn nfc(name: String) -> String {
    if is_nfc(&name) { name } else { name.nfc().collect() }
}

/// The fields of one request object, taken one by one; `finish` refuses whatever is left.
pub(crate) struct Fields {
    map: Map<String, Value>,
    /// A dotted prefix for nested objects (`fact.`).
    prefix: String,
}

impl Fields {
    /// The top-level object of `body` (an empty body is `{}`).
    pub(crate) fn parse(body: &[u8]) -> Outcome<Fields> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Fields { map: Map::new(), prefix: String::new() });
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => Ok(Fields { map, prefix: String::new() }),
            Ok(_) => Err(invalid("body", "must be a JSON object")),
            Err(e) => Err(invalid("body", format_args!("is not JSON: {e}"))),
        }
    }

    /// The whole request as sent (for idempotency hashes and event patches).
    pub(crate) fn as_value(&self) -> Value {
        Value::Object(self.map.clone())
    }

    fn path(&self, field: &str) -> String {
        format!("{}{field}", self.prefix)
    }

    /// The raw value of `field`, `null` included.
    pub(crate) fn raw(&mut self, field: &str) -> Option<Value> {
        self.map.remove(field)
    }

    /// `field`, with `null` read as absent.
    fn take(&mut self, field: &str) -> Option<Value> {
        self.map.remove(field).filter(|v| !v.is_null())
    }

    pub(crate) fn string(&mut self, field: &str) -> Outcome<Option<String>> {
        match self.take(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(&self.path(field), "must be a string")),
        }
    }

    /// A string that names a note or task (`key`, `taskId`), recomposed (`nfc`).
    pub(crate) fn name(&mut self, field: &str) -> Outcome<Option<String>> {
        Ok(self.string(field)?.map(nfc))
    }

    pub(crate) fn bool(&mut self, field: &str) -> Outcome<Option<bool>> {
        match self.take(field) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(_) => Err(invalid(&self.path(field), "must be true or false")),
        }
    }

    /// A non-negative integer (JSON number).
    pub(crate) fn u64(&mut self, field: &str) -> Outcome<Option<u64>> {
        match self.take(field) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| invalid(&self.path(field), "must be a non-negative integer")),
        }
    }

    /// An integer (JSON number), e.g. `as_of` in milliseconds.
    pub(crate) fn i64(&mut self, field: &str) -> Outcome<Option<i64>> {
        match self.take(field) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| invalid(&self.path(field), "must be an integer")),
        }
    }

    pub(crate) fn f64(&mut self, field: &str) -> Outcome<Option<f64>> {
        match self.take(field) {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| invalid(&self.path(field), "must be a number")),
        }
    }

    /// A nested object, read the same way.
    pub(crate) fn object(&mut self, field: &str) -> Outcome<Option<Fields>> {
        match self.take(field) {
            None => Ok(None),
            Some(Value::Object(map)) => Ok(Some(Fields { map, prefix: format!("{}.", self.path(field)) })),
            Some(_) => Err(invalid(&self.path(field), "must be an object")),
        }
    }

    /// Refuses the first field nobody asked for.
    pub(crate) fn finish(self) -> Outcome<()> {
        match self.map.keys().next() {
            Some(k) => Err(invalid(&self.path(k), "is not a field of this request")),
            None => Ok(()),
        }
    }
}

/// `readableScopes`, from the node: the only scopes the caller's token may use (absent: every
/// one of its user's), which alone a reply may name as holding something for the caller
/// (`elsewhere` of `handoff_resume`, `note_list` and `history`).
pub(crate) fn readable_scopes(f: &mut Fields) -> Outcome<Option<Vec<String>>> {
    match f.raw("readableScopes") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            serde_json::from_value(v).map(Some).map_err(|_| invalid("readableScopes", "must be a list of scopes"))
        }
    }
}

/// `limit`: default 20, 1–100.
pub(crate) fn limit(f: &mut Fields) -> Outcome<usize> {
    let n = f.u64("limit")?.unwrap_or(super::DEFAULT_LIMIT);
    if n == 0 || n > super::MAX_LIMIT {
        return Err(invalid("limit", format_args!("must be 1..={}, got {n}", super::MAX_LIMIT)));
    }
    Ok(usize::try_from(n).expect("at most 100"))
}

/// Whether `value` is an agent name as tokens bind them (`AgentName` in `ts/protocol/admin.ts`):
/// a letter or digit, then up to 127 letters, digits, `.`, `_` or `-`.
pub(crate) fn is_agent_name(value: &str) -> bool {
    let mut bytes = value.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && value.len() <= 128
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// An agent name (`is_agent_name`), e.g. a handoff's addressee: anything else reaches no agent.
pub(crate) fn agent_name(field: &str, value: &str) -> Outcome<()> {
    if is_agent_name(value) {
        return Ok(());
    }
    Err(invalid(
        field,
        format_args!(
            "{value:?} is not an agent name: letters, digits, \".\", \"_\" or \"-\", at most 128 bytes, starting with a letter or digit"
        ),
    ))
}

/// A short name (task id, agent name, idempotency key): 1–256 bytes, not blank, no NUL.
pub(crate) fn short_name(field: &str, value: &str) -> Outcome<()> {
    if value.is_empty() || value.len() > 256 {
        return Err(invalid(field, format_args!("must be 1..=256 bytes, got {}", value.len())));
    }
    if value.contains('\0') {
        return Err(invalid(field, "must not contain NUL"));
    }
    // A blank task id would name a task no one can tell from another blank one (found by an
    // audit: `"   "` was taken while a blank key or summary is refused).
    if value.trim().is_empty() {
        return Err(invalid(field, "must not be blank"));
    }
    Ok(())
}

/// A name a write stores (key, task id, idempotency key): no control characters, which break its
/// keys and display (the node's schema refuses them too). Reads and forgets still take one, so a
/// note stored before this rule stays reachable.
pub(crate) fn printable(field: &str, value: &str) -> Outcome<()> {
    // Category Cc: C0, DEL and C1, as the node's schema (and `graph::has_control`) has it.
    if value.chars().any(char::is_control) {
        return Err(invalid(field, "must not contain control characters"));
    }
    Ok(())
}

/// A note key as `note_write` and import store it: not blank, 1–512 bytes without NUL, printable.
pub(crate) fn written_key(key: &str) -> Outcome<()> {
    // A blank key names nothing a reader could ask for.
    if key.trim().is_empty() {
        return Err(invalid("key", "must not be blank"));
    }
    check_key(key)?;
    printable("key", key)
}

/// A task id as a write stores it: `short_name`, printable.
pub(crate) fn written_task(field: &str, value: &str) -> Outcome<()> {
    short_name(field, value)?;
    printable(field, value)
}

/// A refusal as an import's skip reason (`field: what`): a record is checked by the rules its
/// write verb applies, and skipped with the same words.
pub(crate) fn reason(fail: Fail) -> String {
    match fail {
        Fail::Refused(r) => r.message,
        Fail::Store(e) => e.to_string(),
    }
}
