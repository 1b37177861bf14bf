//! Valid time as instants: `valid_from`, `valid_to`, `valid_at` and a call's `date` are compared
//! as milliseconds since the epoch, never as text, so `2024-01-01T06:00:00Z` and
//! `2024-01-01T11:00:00+05:00` are the same moment. A date alone is the start of that day in UTC.
//! Stored values keep the caller's spelling; only comparisons read them as instants.

use crate::error::{Error, Result};
use crate::time::parse_rfc3339;
use serde_json::{Map, Value};

/// The instant a request's date or date-time names: `YYYY-MM-DD` (00:00 UTC that day), or a
/// date-time with a zone (`Z` or `±HH:MM`), seconds and fraction optional, `T`, `t` or a space
/// between date and time. `None` for anything else.
#[must_use]
pub fn instant(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() == 10 {
        // On the stack: reads of a long history parse every stored date (a string each was ~10%
        // of a `replaces` on a subject with thousands of ended edges).
        let mut day = *b"0000-00-00T00:00:00Z";
        day[..10].copy_from_slice(b);
        return parse_rfc3339(std::str::from_utf8(&day).ok()?);
    }
    if b.len() < 16 || !b.is_ascii() || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[10] != b' ' && b.get(16) == Some(&b':') {
        return parse_rfc3339(text);
    }
    // RFC 3339 wants seconds; ISO 8601 lets them go (`…T10:00+05:00`), as the node does.
    let seconds = if b.get(16) == Some(&b':') { "" } else { ":00" };
    parse_rfc3339(&format!("{}T{}{seconds}{}", &text[..10], &text[11..16], &text[16..]))
}

/// `instant`, or `field` named in the refusal.
pub fn parse(field: &str, text: &str) -> Result<i64> {
    instant(text).filter(|_| text.len() <= 64).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{field} must be an ISO 8601 date (2024-05-01) or date-time with zone (…T09:30:00Z), got {text:?}"
        ))
    })
}

/// Checks a relation's `attributes` (the request field `field`): `valid_from` and `valid_to`, when
/// set, are dates; `valid_to` is later than the start (`valid_from`, else the call's `date`, else
/// `default_start`: now for a `replaces`, which stores that start), since an interval that ends
/// before it starts holds no instant, and one that ends where it starts (`[t, t)`) holds none
/// either (found by an audit: said about an open fact, such an empty interval ended it).
pub fn check_interval(
    field: &str,
    attrs: Option<&Map<String, Value>>,
    date: Option<&str>,
    default_start: Option<i64>,
) -> Result<()> {
    let read = |key: &str| -> Result<Option<i64>> {
        match attrs.and_then(|a| a.get(key)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => parse(&format!("{field}.{key}"), s).map(Some),
            Some(_) => Err(Error::InvalidArgument(format!("{field}.{key} must be an ISO 8601 string"))),
        }
    };
    let from = read("valid_from")?;
    let to = read("valid_to")?;
    let dated = date.and_then(instant);
    let (start, what) = match (from, dated, default_start) {
        (Some(s), _, _) => (s, "valid_from".to_owned()),
        (None, Some(s), _) => (s, "the call's date".to_owned()),
        (None, None, Some(s)) => (s, format!("its start, now ({})", crate::time::iso_ms(s))),
        (None, None, None) => return Ok(()),
    };
    match to {
        Some(to) if to <= start => Err(Error::InvalidArgument(format!("{field}.valid_to must be later than {what}"))),
        _ => Ok(()),
    }
}

/// A stored bound read as an instant. Values stored before dates were checked strictly (or
/// through the engine API) may be looser: a leading `YYYY-MM-DD`, `YYYY-MM` or `YYYY` reads as
/// the start of that day, month or year (UTC); anything else is no bound at all.
#[must_use]
pub fn bound(text: &str) -> Option<i64> {
    if let Some(ms) = instant(text) {
        return Some(ms);
    }
    let b = text.as_bytes();
    for (len, rest) in [(10, "T00:00:00Z"), (7, "-01T00:00:00Z"), (4, "-01-01T00:00:00Z")] {
        if b.get(len).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        if let Some(ms) = text.get(..len).and_then(|p| parse_rfc3339(&format!("{p}{rest}"))) {
            return Some(ms);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_name_the_same_instant_and_a_date_is_midnight_utc() {
        assert_eq!(instant("2024-01-01T06:00:00Z"), instant("2024-01-01T11:00:00+05:00"));
        assert_eq!(instant("2024-01-01T11:00+05:00"), instant("2024-01-01T06:00:00.000Z"));
        assert_eq!(instant("2024-01-01 06:00:00Z"), instant("2024-01-01T06:00:00Z"));
        assert_eq!(instant("2024-01-01"), instant("2024-01-01T00:00:00Z"));
        assert_eq!(instant("1970-01-02"), Some(86_400_000));
        assert_eq!(instant("2024-01-01t06:00:00.250z"), instant("2024-01-01T06:00:00.250Z"));
        assert_eq!(instant("2024-01-01T06:00:00.250Z"), instant("2024-01-01").map(|t| t + 21_600_250));
        assert!(instant("2024-01-01T10:00:00+05:00") < instant("2024-01-01T06:00:00Z").map(|t| t + 1));
    }

    #[test]
    fn what_is_not_a_date_is_refused_by_field() {
        for bad in [
            "2024-02-30",
            "2024-13-01",
            "ééééé",
            "2024-01-0\u{e9}",
            "2024-01-01T10:00:00",
            "2024-01-01T25:00Z",
            "now",
            "2024",
            "",
        ] {
            assert_eq!(instant(bad), None, "{bad}");
            let err = parse("attributes.valid_to", bad).unwrap_err();
            assert!(err.to_string().contains("attributes.valid_to"), "{err}");
        }
    }

    #[test]
    fn an_interval_that_ends_before_it_starts_is_refused_naming_valid_to() {
        let attrs = |v: serde_json::Value| v.as_object().cloned();
        let inverted = attrs(serde_json::json!({"valid_from": "2024-01-01", "valid_to": "2023-01-01"}));
        let err = check_interval("attributes", inverted.as_ref(), None, None).unwrap_err();
        assert!(err.to_string().contains("attributes.valid_to"), "{err}");
        let ends_early = attrs(serde_json::json!({"valid_to": "2023-01-01"}));
        assert!(check_interval("attributes", ends_early.as_ref(), Some("2024-01-01"), None).is_err());
        assert!(check_interval("attributes", ends_early.as_ref(), None, None).is_ok());
        // A `replaces` without a start starts now: an end before now is refused too.
        let now = instant("2026-01-01");
        let err = check_interval("attributes", ends_early.as_ref(), None, now).unwrap_err();
        assert!(err.to_string().contains("attributes.valid_to must be later than its start, now"), "{err}");
        let ends_later = attrs(serde_json::json!({"valid_to": "2027-01-01"}));
        assert!(check_interval("attributes", ends_later.as_ref(), None, now).is_ok());
        let bad = attrs(serde_json::json!({"valid_from": 5}));
        assert!(check_interval("x", bad.as_ref(), None, None).unwrap_err().to_string().contains("x.valid_from"));
    }

    #[test]
    fn an_empty_interval_is_refused_in_any_zone() {
        let attrs = |v: serde_json::Value| v.as_object().cloned();
        for empty in [
            serde_json::json!({"valid_from": "2025-05-01T00:00:00Z", "valid_to": "2025-05-01"}),
            serde_json::json!({"valid_from": "2024-01-01T11:00:00+05:00", "valid_to": "2024-01-01T06:00:00Z"}),
        ] {
            let err = check_interval("attributes", attrs(empty).as_ref(), None, None).unwrap_err();
            assert!(err.to_string().contains("attributes.valid_to must be later than valid_from"), "{err}");
        }
        let dated = attrs(serde_json::json!({"valid_to": "2024-01-01"}));
        assert!(check_interval("attributes", dated.as_ref(), Some("2024-01-01"), None).is_err());
        let a_millisecond =
            attrs(serde_json::json!({"valid_from": "2024-01-01", "valid_to": "2024-01-01T00:00:00.001Z"}));
        assert!(check_interval("attributes", a_millisecond.as_ref(), None, None).is_ok());
    }

    #[test]
    fn loose_stored_bounds_read_as_the_start_of_their_period() {
        assert_eq!(bound("2024"), instant("2024-01-01"));
        assert_eq!(bound("2024-05"), instant("2024-05-01"));
        assert_eq!(bound("2024-05-03Tlate"), instant("2024-05-03"));
        assert_eq!(bound("2024-01-01T11:00:00+05:00"), instant("2024-01-01T06:00:00Z"));
        assert_eq!(bound("soon"), None);
        assert_eq!(bound("20245"), None);
    }
}
