//! Attribute keys as a write stores them: trimmed, since every lookup trims the key it is given
//! (found by an audit: `" title "` was stored as sent and never found again). Keys are otherwise
//! kept as sent, case included: `title` and `Title` are two keys, as in JSON
//! (knowledge-verbs.md "Attribute keys").

use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// `attrs` (the request field `field`) with every key trimmed. A key blank once trimmed, or two
/// keys of one call that trim to the same, are refused naming the key: which value was meant is
/// the caller's to say.
pub(super) fn trim_keys(field: &str, attrs: &mut Option<Map<String, Value>>) -> Result<()> {
    let Some(map) = attrs.as_mut() else { return Ok(()) };
    if map.keys().all(|k| k.trim().len() == k.len()) {
        return Ok(());
    }
    let mut trimmed = Map::new();
    for (key, value) in std::mem::take(map) {
        let bare = key.trim();
        if bare.is_empty() {
            return Err(Error::InvalidArgument(format!("{field}: an attribute key must not be blank, got {key:?}")));
        }
        if trimmed.contains_key(bare) {
            return Err(Error::InvalidArgument(format!(
                "{field}.{bare}: sent twice, once as {key:?}; keys are stored trimmed"
            )));
        }
        trimmed.insert(bare.to_owned(), value);
    }
    *map = trimmed;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(v: &Value) -> Result<Vec<String>> {
        let mut attrs = v.as_object().cloned();
        trim_keys("attributes", &mut attrs)?;
        Ok(attrs.unwrap().keys().cloned().collect())
    }

    #[test]
    fn keys_are_trimmed_and_a_clash_or_blank_key_is_refused() {
        assert_eq!(keys(&json!({" title ": "VP", "Title": "CEO"})).unwrap(), ["Title", "title"]);
        let err = keys(&json!({"title": "CTO", " title": "VP"})).unwrap_err().to_string();
        assert!(err.contains("attributes.title: sent twice"), "{err}");
        let err = keys(&json!({"  ": 1})).unwrap_err().to_string();
        assert!(err.contains("attributes: an attribute key must not be blank"), "{err}");
    }
}
