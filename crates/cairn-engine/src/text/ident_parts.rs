//! The parts of an identifier-like word, which the full-text tokenizer indexes besides the word
//! itself (as Lucene's `WordDelimiterGraphFilter` with `preserveOriginal` does): `retryPolicy` is
//! also `retry` and `Policy`, so "retry policy" finds it, and a query `retryPolicy` finds "retry
//! policy". Agents store code, and UAX #29 keeps `config.ts`, `MAX_RETRY_COUNT` or
//! `fooBar.bazQux` as one word.
//!
//! A word is cut at `_` (dropped), at `.` and `:` (dropped) unless between two digits (`3.14`,
//! `1.2.3` stay whole), where a lowercase letter meets an uppercase one (`retry|Policy`), before
//! the last capital of an acronym that a lowercase run follows (`HTTP|Server`, `IO|Error`; not
//! `APIs`, `URLs`: an acronym's plural `s` stays on it), where a letter meets a digit (`http|2`,
//! `x|86`), and where a digit meets a capitalised word (`ipv|4|Address`). A digit followed by a
//! lowercase letter is never cut (`1st`, `10am`, `3d`, `8mb`: ordinals and units of prose).
//! A word that this leaves whole has no parts, nor has an abbreviation whose parts are single
//! letters cut at dots (`U.S.A`, `e.g`), so prose keeps the terms it had. Nor have tokens that
//! are no identifiers: a word longer than `LONGEST` characters (a JWT, base64, a long URL, cut at
//! random humps and digits) or a hex string of at least `HEX` digits with a digit in it (a commit
//! hash, a UUID's run): their parts would be noise terms.

/// A word's characters, by index: the ASCII bytes of an ASCII word, or a `char` slice.
pub(super) trait Chars {
    fn len(&self) -> usize;
    fn at(&self, i: usize) -> char;
}

impl Chars for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn at(&self, i: usize) -> char {
        char::from(self[i])
    }
}

impl Chars for [char] {
    fn len(&self) -> usize {
        <[char]>::len(self)
    }
    fn at(&self, i: usize) -> char {
        self[i]
    }
}

/// Whether an ASCII word may have parts: a cheap test that most prose words (lowercase, or
/// capitalised) fail, so they skip `each_part`.
pub(super) fn may_split_ascii(word: &[u8]) -> bool {
    word.iter()
        .enumerate()
        .any(|(i, &b)| matches!(b, b'_' | b'.' | b':') || b.is_ascii_digit() || (i > 0 && b.is_ascii_uppercase()))
}

/// `may_split_ascii` for any word.
pub(super) fn may_split(word: &str) -> bool {
    word.chars().enumerate().any(|(i, c)| matches!(c, '_' | '.' | ':') || c.is_numeric() || (i > 0 && c.is_uppercase()))
}

/// The longest word that can have parts.
const LONGEST: usize = 64;

/// The shortest hex string taken for a hash rather than cut (`deadbeef`, `3f2a9b1`).
const HEX: usize = 7;

/// Calls `f` with the character range `[start, end)` of each part of `word`, in order; not at
/// all when the word has no parts (see the module comment).
pub(super) fn each_part<W: Chars + ?Sized>(word: &W, f: impl FnMut(usize, usize)) {
    let n = word.len();
    let hex = n >= HEX && (0..n).all(|i| word.at(i).is_ascii_hexdigit()) && (0..n).any(|i| word.at(i).is_ascii_digit());
    if n > LONGEST || hex {
        return;
    }
    let mut count = 0;
    let mut whole = true;
    let mut initials = true;
    cut(word, |start, end| {
        count += 1;
        whole &= start == 0 && end == word.len();
        initials &= end - start == 1 && word.at(start).is_alphabetic();
    });
    // An abbreviation (`U.S.A`, `e.g`): single letters between dots only.
    let dotted = (0..word.len()).all(|i| !matches!(word.at(i), '_' | ':'));
    if count == 0 || whole || (count > 1 && initials && dotted) {
        return;
    }
    cut(word, f);
}

/// Calls `f` with every maximal run of `word` between delimiters and cuts.
fn cut<W: Chars + ?Sized>(word: &W, mut f: impl FnMut(usize, usize)) {
    let n = word.len();
    let mut start: Option<usize> = None;
    for i in 0..n {
        if delimiter(word, i) {
            if let Some(s) = start.take() {
                f(s, i);
            }
            continue;
        }
        match start {
            None => start = Some(i),
            Some(s) if cut_before(word, i) => {
                f(s, i);
                start = Some(i);
            }
            Some(_) => {}
        }
    }
    if let Some(s) = start {
        f(s, n);
    }
}

/// `_` anywhere, `.` or `:` unless between two digits (a number: `3.14`, `1.2.3`).
fn delimiter<W: Chars + ?Sized>(word: &W, i: usize) -> bool {
    match word.at(i) {
        '_' => true,
        '.' | ':' => !(i > 0 && i + 1 < word.len() && word.at(i - 1).is_numeric() && word.at(i + 1).is_numeric()),
        _ => false,
    }
}

/// Whether a part ends before character `i` (its predecessor is in the same run).
fn cut_before<W: Chars + ?Sized>(word: &W, i: usize) -> bool {
    let (prev, c) = (word.at(i - 1), word.at(i));
    let next = (i + 1 < word.len()).then(|| word.at(i + 1));
    let lower_next = next.is_some_and(char::is_lowercase);
    if prev.is_lowercase() && c.is_uppercase() {
        return true;
    }
    if prev.is_uppercase() && c.is_uppercase() && lower_next {
        // `APIs`: a lone `s` after an acronym is its plural, not a word.
        let plural = next == Some('s') && !(i + 2 < word.len() && word.at(i + 2).is_lowercase());
        return !plural;
    }
    if prev.is_alphabetic() && c.is_numeric() {
        return true;
    }
    prev.is_numeric() && c.is_uppercase() && lower_next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(word: &str) -> Vec<String> {
        let chars: Vec<char> = word.chars().collect();
        let mut out = Vec::new();
        each_part(chars.as_slice(), |s, e| out.push(chars[s..e].iter().collect()));
        if word.is_ascii() {
            let mut ascii = Vec::new();
            each_part(word.as_bytes(), |s, e| ascii.push(word[s..e].to_owned()));
            assert_eq!(ascii, out, "{word}");
            assert!(out.is_empty() || may_split_ascii(word.as_bytes()), "{word}");
        }
        assert!(out.is_empty() || may_split(word), "{word}");
        out
    }

    #[test]
    fn identifiers_are_cut_at_delimiters_humps_acronyms_and_digits() {
        assert_eq!(parts("config.ts"), ["config", "ts"]);
        assert_eq!(parts("retryPolicy"), ["retry", "Policy"]);
        assert_eq!(parts("MAX_RETRY_COUNT"), ["MAX", "RETRY", "COUNT"]);
        assert_eq!(parts("http2_client"), ["http", "2", "client"]);
        assert_eq!(parts("fooBar.bazQux"), ["foo", "Bar", "baz", "Qux"]);
        assert_eq!(parts("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(parts("parseJSON"), ["parse", "JSON"]);
        assert_eq!(parts("IOError"), ["IO", "Error"]);
        assert_eq!(parts("getAPIsList"), ["get", "APIs", "List"]);
        assert_eq!(parts("ipv4Address"), ["ipv", "4", "Address"]);
        assert_eq!(parts("x86_64"), ["x", "86", "64"]);
        assert_eq!(parts("v1.2.3"), ["v", "1.2.3"]);
        assert_eq!(parts("__init__"), ["init"]);
        assert_eq!(parts("std:vec"), ["std", "vec"]);
        assert_eq!(parts("x_1"), ["x", "1"]);
        assert_eq!(parts("naïveCafé"), ["naïve", "Café"]);
    }

    #[test]
    fn words_of_prose_have_no_parts() {
        for word in [
            "Hello",
            "hello",
            "NASA",
            "APIs",
            "URLs",
            "don't",
            "O'Neil",
            "U.S.A",
            "e.g",
            "i.e",
            "3.14",
            "1,000",
            "1.2.3",
            "3f2a9b1c",
            "deadbeef12",
            "eyJhbGciOiJIUzI1NiJ9eyJhbGciOiJIUzI1NiJ9eyJhbGciOiJIUzI1NiJ9eyJhbGciOiJIUzI1NiJ9",
            "2024",
            "1st",
            "10am",
            "3d",
            "8mb",
            "Москва",
            "Café",
        ] {
            assert!(parts(word).is_empty(), "{word}: {:?}", parts(word));
        }
    }
}
