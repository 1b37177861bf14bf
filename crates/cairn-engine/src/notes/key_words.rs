//! The words a note key stands for, which the notes query finds it by beside the key as written.
//! A key is an identifier: its words run together (`deploy.window`, `preferred_language`,
//! `dbChoice`) and are often abbreviated (`db_choice`, `env`, `repo`), while the question that
//! should find it spells them out ("what database did we choose"). Found by a review: with no
//! meaning channel, that question missed a `db_choice` note holding `{"choice": "postgres"}`.
//!
//! Only the note's side gains words: a key's parts, split at `.` `_` `/` `:` `-` and at camelCase
//! humps, and for each part that is a common identifier abbreviation the word it abbreviates. A
//! query is never widened, so "db" finds what it found before, and free text (a value's strings)
//! is left as written: a person who wrote "db" in a sentence will ask with "db" too.

/// Common identifier abbreviations and the word each stands for (sorted, for binary search). Only
/// those with one reading in a key: `auth` (authentication or authorization), `id`, `pwd` or
/// `spec` are left out, as expanding them would find notes for a word they may not mean.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("addr", "address"),
    ("app", "application"),
    ("cfg", "configuration"),
    ("conf", "configuration"),
    ("config", "configuration"),
    ("db", "database"),
    ("desc", "description"),
    ("dev", "development"),
    ("dir", "directory"),
    ("env", "environment"),
    ("img", "image"),
    ("info", "information"),
    ("k8s", "kubernetes"),
    ("lang", "language"),
    ("msg", "message"),
    ("org", "organization"),
    ("pkg", "package"),
    ("pref", "preference"),
    ("prefs", "preferences"),
    ("prod", "production"),
    ("repo", "repository"),
    ("tz", "timezone"),
];

/// The word `part` abbreviates, if it is one of `ABBREVIATIONS` (in any case).
fn expansion(part: &str) -> Option<&'static str> {
    let lower = part.to_ascii_lowercase();
    ABBREVIATIONS.binary_search_by(|(a, _)| a.cmp(&lower.as_str())).ok().map(|i| ABBREVIATIONS[i].1)
}

/// `word` cut at its camelCase humps: before an upper-case letter that follows a lower-case one
/// (`dbChoice`) or that begins a word after an acronym (`HTTPServer` → `HTTP`, `Server`). Digits
/// do not cut (`item30`, `k8s` stay whole); a word without such a hump is itself.
fn humps(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let acronym_end = prev.is_ascii_uppercase() && chars.get(i + 1).is_some_and(|(_, n)| n.is_ascii_lowercase());
        if c.is_ascii_uppercase() && (prev.is_ascii_lowercase() || acronym_end) {
            out.push(&word[start..at]);
            start = at;
        }
    }
    out.push(&word[start..]);
    out
}

/// Calls `f` with each word `key` is found by besides itself: the parts the tokenizer keeps
/// inside one word (it splits at `/` and `-`, but not at `.` and `:` between letters, `_`, or a
/// camelCase hump), each followed by the word it abbreviates.
pub(crate) fn key_words(key: &str, mut f: impl FnMut(&str)) {
    let joined = key.contains(['.', '_', ':']);
    for piece in key.split(['.', '_', '/', ':', '-']).filter(|p| !p.is_empty()) {
        let parts = humps(piece);
        let split = joined || parts.len() > 1;
        for part in parts {
            if split {
                f(part);
            }
            if let Some(word) = expansion(part) {
                f(word);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(key: &str) -> Vec<String> {
        let mut out = Vec::new();
        key_words(key, |w| out.push(w.to_owned()));
        out
    }

    #[test]
    fn abbreviations_are_sorted_and_lower_case() {
        assert!(ABBREVIATIONS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(ABBREVIATIONS.iter().all(|(a, _)| a.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())));
    }

    #[test]
    fn a_key_gives_its_parts_and_the_words_they_abbreviate() {
        assert_eq!(words("db_choice"), ["db", "database", "choice"]);
        assert_eq!(words("dbChoice"), ["db", "database", "Choice"]);
        assert_eq!(words("HTTPServerConfig"), ["HTTP", "Server", "Config", "configuration"]);
        // Parts the tokenizer cuts itself are not given again, only what they abbreviate.
        assert_eq!(words("favorite-lang"), ["language"]);
        assert_eq!(words("deploy.window"), ["deploy", "window"]);
        assert_eq!(words("ci:cache"), ["ci", "cache"]);
        // One word: nothing but its expansion; digits and non-ASCII letters never cut.
        assert_eq!(words("db"), ["database"]);
        assert_eq!(words("infra"), Vec::<String>::new());
        assert_eq!(words("item30"), Vec::<String>::new());
        assert_eq!(words("k8s.cluster"), ["k8s", "kubernetes", "cluster"]);
        assert_eq!(words("éTé"), Vec::<String>::new());
        // A word that merely begins like an abbreviation is not one.
        assert_eq!(words("dbms_choice"), ["dbms", "choice"]);
    }
}
