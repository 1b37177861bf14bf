//! The attributes a reply shows of one entity or fact. An entity gathers attributes over any
//! number of writes (256 keys and 64 KiB a call), and a fact holds up to 64 KiB, so a read that
//! showed them whole grew with the data: found by an audit, a recall of an entity whose 20 writes
//! each set one 60 KB value answered 1.2 MB, and a recall of 40 facts with 60 KB attributes 2.4
//! MB. A reply shows them in key order while their JSON stays within `SHOWN_ATTRIBUTE_BYTES`; a
//! value that would pass it is left out whole (never cut; a later smaller one may still fit), and
//! `attributes_omitted` counts and names what was left. `memory_export` gives every attribute.

use serde_json::{Map, Value, json};

/// The most bytes of JSON one entity's or one fact's shown `attributes` take (about 2,000 tokens).
pub const SHOWN_ATTRIBUTE_BYTES: usize = 8 * 1024;

/// The most keys `attributes_omitted.keys` names.
const NAMED_KEYS: usize = 10;

/// `attrs` within `SHOWN_ATTRIBUTE_BYTES`, and what was left out (`None` when nothing was):
/// `{count, bytes, keys, hint}`, `keys` the first `NAMED_KEYS` of them.
#[must_use]
pub fn shown(attrs: &Map<String, Value>) -> (Map<String, Value>, Option<Value>) {
    let mut kept = Map::new();
    // `{}` and a comma between entries.
    let mut used = 2;
    let (mut left, mut left_bytes, mut keys) = (0usize, 0usize, Vec::new());
    for (k, v) in attrs {
        // `"key":value` as serde_json writes it.
        let size = serde_json::to_vec(k).map_or(0, |b| b.len()) + 1 + serde_json::to_vec(v).map_or(0, |b| b.len());
        let comma = usize::from(!kept.is_empty());
        if used + comma + size <= SHOWN_ATTRIBUTE_BYTES {
            used += comma + size;
            kept.insert(k.clone(), v.clone());
        } else {
            left += 1;
            left_bytes += size;
            if keys.len() < NAMED_KEYS {
                keys.push(k.clone());
            }
        }
    }
    let omitted = (left > 0).then(|| {
        json!({
            "count": left,
            "bytes": left_bytes,
            "keys": keys,
            "hint": format!(
                "{left} attributes ({left_bytes} bytes of JSON) left out: a reply shows at most \
                 {SHOWN_ATTRIBUTE_BYTES} bytes of one entity's or fact's attributes; memory_export gives them all"
            ),
        })
    });
    (kept, omitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_attributes_are_shown_whole() {
        let attrs: Map<String, Value> = (0..50).map(|i| (format!("k{i}"), json!(i))).collect();
        let (kept, omitted) = shown(&attrs);
        assert_eq!(kept, attrs);
        assert!(omitted.is_none());
    }

    #[test]
    fn a_large_value_is_left_out_whole_and_named_while_smaller_ones_still_fit() {
        let mut attrs = Map::new();
        attrs.insert("a".into(), json!("x".repeat(5000)));
        attrs.insert("b".into(), json!("y".repeat(60_000)));
        attrs.insert("c".into(), json!("small"));
        let (kept, omitted) = shown(&attrs);
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["a", "c"]);
        assert!(serde_json::to_vec(&kept).unwrap().len() <= SHOWN_ATTRIBUTE_BYTES);
        let omitted = omitted.unwrap();
        assert_eq!(omitted["count"], 1);
        assert_eq!(omitted["keys"], json!(["b"]));
        assert_eq!(omitted["bytes"], 60_006);
    }

    #[test]
    fn thousands_of_keys_stay_within_the_bound_and_are_counted() {
        let attrs: Map<String, Value> = (0..20_000).map(|i| (format!("key_{i:05}"), json!(format!("v{i}")))).collect();
        let (kept, omitted) = shown(&attrs);
        let bytes = serde_json::to_vec(&kept).unwrap().len();
        assert!(bytes <= SHOWN_ATTRIBUTE_BYTES && bytes > SHOWN_ATTRIBUTE_BYTES - 30, "{bytes}");
        let omitted = omitted.unwrap();
        assert_eq!(omitted["count"].as_u64().unwrap() as usize + kept.len(), 20_000);
        assert_eq!(omitted["keys"].as_array().unwrap().len(), NAMED_KEYS);
    }
}
