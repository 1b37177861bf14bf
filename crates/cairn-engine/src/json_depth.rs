//! How deep caller JSON may nest. A stored value is read back inside larger documents (its
//! history event, an export page, an import body), & to read past 128
//! levels: a note nested 126 deep was stored, then broke its history, its forget and the audit.
//! Free JSON a caller sends (a note's value, attributes, handoff items) is held to
//! `MAX_JSON_DEPTH`, far below that, so every document holding it stays readable.

use serde_json::{Map, Value};

/// Deepest nesting of free JSON a caller may store: `{"a": {"b": 1}}` is 2 deep, a scalar 0.
pub const MAX_JSON_DEPTH: usize = 32;

/// The nesting depth of `value` (objects and arrays), found without recursion.
#[must_use]
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, d)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        deepest = deepest.max(d + 1);
        stack.extend(children.map(|c| (c, d + 1)));
    }
    deepest
}

/// A refusal naming `field` when `value` nests deeper than `MAX_JSON_DEPTH`.
pub fn check(field: &str, value: &Value) -> Result<(), String> {
    within(field, depth(value))
}

/// `check` for an object given as its map (attributes).
pub fn check_map(field: &str, map: &Map<String, Value>) -> Result<(), String> {
    within(field, 1 + map.values().map(depth).max().unwrap_or(0))
}

fn within(field: &str, d: usize) -> Result<(), String> {
    if d > MAX_JSON_DEPTH {
        return Err(format!("{field}: nests {d} levels deep; at most {MAX_JSON_DEPTH}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn depth_counts_arrays_and_objects_only() {
        assert_eq!(depth(&json!(1)), 0);
        assert_eq!(depth(&json!([])), 1);
        assert_eq!(depth(&json!({"a": [1, {"b": null}], "c": 2})), 3);
        let mut deep = json!(0);
        for _ in 0..200 {
            deep = json!([deep]);
        }
        assert_eq!(depth(&deep), 200);
        assert!(check("value", &deep).unwrap_err().starts_with("value: nests 200 levels deep"));
    }
}
