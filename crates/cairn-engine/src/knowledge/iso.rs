//! ISO 8601 UTC times with milliseconds (`2024-05-01T12:00:00.000Z`), the form every time in a
//! reply takes, and the parse of that form back to milliseconds since the Unix epoch (export and
//! import carry times this way so they survive a round trip exactly).

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (`civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
#[must_use]
pub fn iso_ms(ms: i64) -> String {
    let (days, in_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let (h, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{:02}.{:03}Z", rest / 1000, rest % 1000)
}

/// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fff]Z` (a UTC time as `iso_ms` writes
/// it; up to three fraction digits); `None` for anything else.
#[must_use]
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || bytes[10] != b'T'
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let tail = &text[19..];
    let frac = match tail.strip_suffix('Z')? {
        "" => 0,
        f if f.len() >= 2 && f.len() <= 4 && f.starts_with('.') && f[1..].bytes().all(|c| c.is_ascii_digit()) => {
            f[1..].parse::<i64>().ok()? * 10_i64.pow(u32::try_from(4 - f.len()).ok()?)
        }
        _ => return None,
    };
    let month_days = [
        31,
        if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let valid_day =
        usize::try_from(month - 1).ok().and_then(|i| month_days.get(i)).is_some_and(|&max| day >= 1 && day <= max);
    if !valid_day || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + frac)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            assert_eq!(parse_iso_ms(bad), None, "{bad}");
        }
    }
}
