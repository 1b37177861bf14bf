//! Times at the API boundary: ISO 8601 / RFC 3339. Replies carry UTC with milliseconds
//! (`2026-11-30T05:43:51.123Z`); requests are parsed strictly: a full date, a time, an optional
//! fraction (kept to the millisecond) and a zone (`Z` or `±HH:MM`); export and import carry the
//! reply form, which `parse_iso_ms` reads back exactly. No crate in the workspace does this, and
//! the civil-date arithmetic is a few lines (H. Hinnant's algorithms).

const MS_PER_DAY: i64 = 86_400_000;

/// `ms` since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
#[must_use]
pub fn iso_ms(ms: i64) -> String {
    let (year, month, day) = civil_from_days(ms.div_euclid(MS_PER_DAY));
    let rem = ms.rem_euclid(MS_PER_DAY);
    let (hour, minute, second, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z")
}

/// Milliseconds since the Unix epoch of an RFC 3339 date-time, or `None` when `text` is not one.
#[must_use]
#[allow(clippy::many_single_char_names)] // y, mo, d, h, mi, s are the RFC 3339 fields, read side by side
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || !b.is_ascii() {
        return None;
    }
    let y = digits(&b[0..4])?;
    let mo = digits(&b[5..7])?;
    let d = digits(&b[8..10])?;
    let h = digits(&b[11..13])?;
    let mi = digits(&b[14..16])?;
    let s = digits(&b[17..19])?;
    let seps = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| b[i] != c) || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let mut rest = &b[19..];
    let mut milli = 0;
    if rest.first() == Some(&b'.') {
        let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let frac = &rest[1..=n];
        milli = frac.iter().take(3).enumerate().map(|(i, c)| i64::from(c - b'0') * [100, 10, 1][i]).sum();
        rest = &rest[1 + n..];
    }
    let offset_min = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), hh @ .., b':', m1, m2] if hh.len() == 2 => {
            let (oh, om) = (digits(hh)?, digits(&[*m1, *m2])?);
            if oh > 23 || om > 59 {
                return None;
            }
            if *sign == b'+' { oh * 60 + om } else { -(oh * 60 + om) }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    Some(days * MS_PER_DAY + ((h * 60 + mi - offset_min) * 60 + s) * 1000 + milli)
}

fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0i64, |acc, c| c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0')))
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fff]Z`, the form `iso_ms` writes (UTC,
/// up to three fraction digits); `None` for anything else, offsets included.
#[must_use]
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let fraction = b.get(19..b.len().checked_sub(1)?)?;
    let reply_form = b[10] == b'T'
        && b.last() == Some(&b'Z')
        && (fraction.is_empty() || (fraction[0] == b'.' && (2..=4).contains(&fraction.len())));
    if reply_form { parse_rfc3339(text) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_times_are_utc_with_milliseconds() {
        assert_eq!(iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_ms(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    }

    #[test]
    fn formats_utc_with_milliseconds() {
        assert_eq!(iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_ms(1_709_164_800_123), "2024-02-29T00:00:00.123Z");
        assert_eq!(iso_ms(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn parses_what_it_formats_and_offsets() {
        for ms in [0, 1_709_164_800_123, 951_782_400_000, 4_102_444_799_999] {
            assert_eq!(parse_rfc3339(&iso_ms(ms)), Some(ms));
        }
        assert_eq!(parse_rfc3339("2024-02-29T01:30:00+01:30"), Some(1_709_164_800_000));
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00.1234567z"), Some(1_709_164_800_123));
    }

    #[test]
    fn refuses_what_is_not_rfc3339() {
        for bad in [
            "2024-02-30T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-02-29",
            "2024-02-29T00:00:00",
            "2024-02-29 00:00:00Z",
            "2024-02-29T24:00:00Z",
            "2024-02-29T00:00:00.Z",
            "2024-02-29T00:00:00+0100",
            "2024-13-01T00:00:00Z",
            "２024-02-29T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn known_instants_format_and_parse_back() {
        for (ms, text) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_714_564_800_123, "2024-05-01T12:00:00.123Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
        ] {
            assert_eq!(iso_ms(ms), text);
            assert_eq!(parse_iso_ms(text), Some(ms));
        }
        assert_eq!(parse_iso_ms("2024-05-01T12:00:00Z"), Some(1_714_564_800_000));
        assert_eq!(parse_iso_ms("2024-05-01T12:00:00.5Z"), Some(1_714_564_800_500));
    }

    #[test]
    fn malformed_times_are_refused() {
        for bad in [
            "",
            "2024-05-01",
            "2024-02-30T00:00:00Z",
            "2024-05-01T12:00:00+02:00",
            "2024-05-01T24:00:00Z",
            "x024-05-01T12:00:00Z",
            // RFC 3339 allows these; the reply form does not.
            "2024-05-01t12:00:00Z",
            "2024-05-01T12:00:00z",
            "2024-05-01T12:00:00.1234Z",
            "2024-05-01T12:00:00.Z",
            "２024-05-01T12:00:00Z",
        ] {
            assert_eq!(parse_iso_ms(bad), None, "{bad}");
        }
    }
}
