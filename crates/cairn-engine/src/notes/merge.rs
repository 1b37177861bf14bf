//! The deep merge of `writeMode: merge` (rules in docs/design/notes.md). It is RFC 7396 JSON Merge
//! Patch: an object patch merges key by key into an object (a missing or non-object target counts
//! as `{}`); `null` under a key removes that key; any other patch value (array, string, number,
//! boolean) replaces what was there. Objects are `serde_json` maps, ordered by key, so the result
//! does not depend on the order keys were sent in.

use serde_json::{Map, Value};

/// `target` with `patch` merged in.
#[must_use]
pub fn merge(target: &Value, patch: &Value) -> Value {
    let Value::Object(changes) = patch else { return patch.clone() };
    let mut out = match target {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    for (k, v) in changes {
        if v.is_null() {
            out.remove(k);
        } else {
            let merged = merge(out.get(k).unwrap_or(&Value::Null), v);
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn objects_merge_deeply_and_the_rest_replaces() {
        let target = json!({"a": {"b": 1, "c": [1, 2]}, "d": "x", "e": 1});
        let patch = json!({"a": {"c": [3], "f": true}, "d": null, "g": {"h": null, "i": 2}});
        assert_eq!(merge(&target, &patch), json!({"a": {"b": 1, "c": [3], "f": true}, "e": 1, "g": {"i": 2}}));
        assert_eq!(merge(&json!({"a": 1}), &json!([1])), json!([1]), "a non-object patch replaces");
        assert_eq!(merge(&json!("s"), &json!({"a": 1})), json!({"a": 1}), "a non-object target counts as {{}}");
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-5i64..5).prop_map(|n| json!(n)),
            "[a-c]{0,2}".prop_map(Value::String),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map("[a-d]", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The same value without any `null` under an object key (a patch that deletes nothing).
    fn without_nulls(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect(),
            ),
            other => other.clone(),
        }
    }

    /// Whether `q` only merges objects into objects of `p` (or into keys `p` leaves alone).
    fn composable(p: &Value, q: &Value) -> bool {
        let Value::Object(qm) = q else { return true };
        let Value::Object(pm) = p else { return false };
        qm.iter().all(|(k, qv)| !qv.is_object() || pm.get(k).is_none_or(|pv| composable(pv, qv)))
    }

    #[test]
    fn not_associative_in_general() {
        // `p` sets `a` to a scalar; `q` then merges an object into it. Applied in turn, the
        // scalar is gone before `q` arrives; merged first, `t`'s object under `a` survives.
        let (t, p, q) = (json!({"a": {"x": 1}}), json!({"a": 5}), json!({"a": {"y": 2}}));
        assert_eq!(merge(&merge(&t, &p), &q), json!({"a": {"y": 2}}));
        assert_eq!(merge(&t, &merge(&p, &q)), json!({"a": {"x": 1, "y": 2}}));
    }

    proptest! {
        #[test]
        fn merging_the_same_patch_twice_changes_nothing_more(t in value(), p in value()) {
            let once = merge(&t, &p);
            prop_assert_eq!(merge(&once, &p), once);
        }

        #[test]
        fn merge_is_deterministic_whatever_the_key_order(t in value(), p in value()) {
            // Rebuild the patch with its keys inserted in reverse order.
            fn reversed(v: &Value) -> Value {
                match v {
                    Value::Object(m) => Value::Object(m.iter().rev().map(|(k, v)| (k.clone(), reversed(v))).collect()),
                    other => other.clone(),
                }
            }
            let a = serde_json::to_vec(&merge(&t, &p)).unwrap();
            let b = serde_json::to_vec(&merge(&t, &reversed(&p))).unwrap();
            prop_assert_eq!(a, b);
        }

        #[test]
        fn patches_compose_where_the_shapes_agree(t in value(), p in value(), q in value()) {
            // Two merges in turn equal one merge of the patches merged together, when the second
            // patch deletes nothing and never merges an object into something `p` replaced with a
            // non-object (see `not_associative_in_general`).
            let q = without_nulls(&q);
            if composable(&p, &q) {
                prop_assert_eq!(merge(&merge(&t, &p), &q), merge(&t, &merge(&p, &q)));
            }
        }

        #[test]
        fn a_merge_result_holds_no_null_under_a_patched_key(t in value(), p in value()) {
            if let (Value::Object(out), Value::Object(patch)) = (merge(&t, &p), &p) {
                for k in patch.keys() {
                    prop_assert!(out.get(k).is_none_or(|v| !v.is_null()));
                }
            }
        }
    }
}
