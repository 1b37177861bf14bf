//! A read at `valid_at` answers a question's words that name that moment. "Who owned the ledger
//! service in March 2024?" read at `valid_at` 2024-03-15 returns the facts true then, yet
//! "Priya Raman owns ledger service" left "March" and "2024" uncovered, so the verdict was
//! `related` and a model told to say what is missing said the owner in March was not stored
//! (found by playing a model). Every fact of such a read held at that moment, so each covers the
//! moment's year, month (name or abbreviation) and day of the month; a question naming another
//! year or month stays uncovered. Passages are not: a document's date says when it was written,
//! not that what it says held then.

use crate::time::iso_ms;

const MONTHS: [&[&str]; 12] = [
    &["january", "jan"],
    &["february", "feb"],
    &["march", "mar"],
    &["april", "apr"],
    &["may"],
    &["june", "jun"],
    &["july", "jul"],
    &["august", "aug"],
    &["september", "sep", "sept"],
    &["october", "oct"],
    &["november", "nov"],
    &["december", "dec"],
];

/// The words that name the UTC day of `valid_at` (ms since the epoch): its year, its month's
/// names and its day of the month ("2024 march mar 15").
pub(super) fn moment_words(valid_at: i64) -> String {
    let iso = iso_ms(valid_at);
    let (year, month, day) =
        (&iso[..iso.len() - 20], &iso[iso.len() - 19..iso.len() - 17], &iso[iso.len() - 16..iso.len() - 14]);
    let names =
        month.parse::<usize>().ok().and_then(|m| MONTHS.get(m.wrapping_sub(1))).map_or(String::new(), |n| n.join(" "));
    format!("{year} {names} {} {day}", day.trim_start_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_rfc3339;

    #[test]
    fn the_words_of_a_day() {
        let at = |s: &str| moment_words(parse_rfc3339(s).unwrap());
        assert_eq!(at("2024-03-05T10:00:00Z"), "2024 march mar 5 05");
        assert_eq!(at("2023-12-31T23:59:59Z"), "2023 december dec 31 31");
        assert_eq!(at("2024-05-20T00:00:00Z"), "2024 may 20 20");
    }
}
