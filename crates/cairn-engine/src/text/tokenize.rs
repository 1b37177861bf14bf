//! The full-text tokenizer: UAX #29 words, folded (case, accents, Unicode normalisation: the
//! name fold), English stop words dropped, Latin-script words stemmed with Snowball English; runs
//! of CJK characters become overlapping bigrams.

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

use super::ident_parts::{each_part, may_split, may_split_ascii};
use super::{fold, is_cjk};

/// A term of the full-text index and the code-point span `[start, end)` of the text it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Token {
    pub term: String,
    pub start: usize,
    pub end: usize,
}

/// English stop words, dropped from queries and documents alike: Lucene's classic English set
/// (sorted, for binary search). Matched after lowercasing, before stemming.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
    "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
];

/// The length in bytes of the longest of `STOP_WORDS`.
const LONGEST_STOP_WORD: usize = 5;

/// Whether `word` (already lowercased) is in `STOP_WORDS`.
#[must_use]
pub fn is_stop_word(word: &str) -> bool {
    // Most words are longer than any stop word: skip the search for them.
    word.len() <= LONGEST_STOP_WORD && STOP_WORDS.binary_search(&word).is_ok()
}

/// The index terms of `text`, in order of position. A word is a UAX #29 word segment holding a
/// letter or digit; it is lowercased, folded if not ASCII (`word_term`), dropped if a stop word,
/// and stemmed if its letters are all Latin script (numbers and other scripts are kept as
/// folded). An identifier-like word (`retryPolicy`, `config.ts`, `MAX_RETRY_COUNT`) is followed
/// by the terms of its parts (`ident_parts.rs`), each with its own span inside the word's, so
/// starts never decrease. A run of Han, Hiragana,
/// Katakana or Hangul gives one term per pair of neighbouring characters (`東京都` → `東京`, `京都`),
/// or the character itself when it stands alone.
#[must_use]
pub fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    each_term(text, |term, start, end| out.push(Token { term: term.to_owned(), start, end }));
    out
}

/// `tokens` without the parts of identifiers: one term a word, as the tokenizer gave before it
/// cut identifiers. For what reads a text word by word (a question's content words, a name
/// spelled in full).
#[must_use]
pub fn word_tokens(text: &str) -> Vec<Token> {
    let stemmer = Stemmer::create(Algorithm::English);
    let mut out = Vec::new();
    each_word_in(text, false, |piece, start, end| {
        let mut push = |term: &str| out.push(Token { term: term.to_owned(), start, end });
        match piece {
            Piece::Term(term) => push(term),
            Piece::Word(word) => word_term(&stemmer, word, push),
        }
    });
    out
}

/// The index terms of the parts of `word` (one word, as a question spells it): empty unless it is
/// identifier-like (`retryPolicy` → `retri`, `polici`).
#[must_use]
pub fn part_terms(word: &str) -> Vec<String> {
    let whole = word_tokens(word);
    tokens(word).into_iter().filter(|t| !whole.contains(t)).map(|t| t.term).collect()
}

/// Calls `f` with each index term of `text` and its code-point span, in order: the terms of
/// `tokens` without a `String` for each (the full-text indexer needs only the term, and
/// tokenizing bounds ingest).
pub fn each_term(text: &str, mut f: impl FnMut(&str, usize, usize)) {
    let stemmer = Stemmer::create(Algorithm::English);
    each_word(text, |piece, start, end| match piece {
        Piece::Term(term) => f(term, start, end),
        Piece::Word(word) => word_term(&stemmer, word, |term| f(term, start, end)),
    });
}

/// What `each_word` finds: a lowercased word, whose index term (`word_term`) depends on nothing
/// else, or a finished term (a CJK bigram or lone character).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    Word(&'a str),
    Term(&'a str),
}

/// Calls `f` with each word (lowercased, stop words still in) and CJK term of `text` and its
/// code-point span, in order; an identifier-like word is followed by its parts (`ident_parts.rs`),
/// lowercased, each a word of its own. A caller that sees the same words again and again (an
/// indexer) memoises `word_term` by word, so a repeated word costs one map lookup: a part is
/// cut before it is lowercased, so the memo needs nothing but the lowercased word.
pub fn each_word(text: &str, f: impl FnMut(Piece<'_>, usize, usize)) {
    each_word_in(text, true, f);
}

/// `each_word`, with the parts of identifiers or without (`parts`).
fn each_word_in(text: &str, parts: bool, mut f: impl FnMut(Piece<'_>, usize, usize)) {
    let mut lower = Lower { buf: String::new(), parts };
    let lower = &mut lower;
    // The common case first: ASCII text, whose words `ascii_words` cuts in one pass (a space is
    // never inside a word, so cutting at spaces first changes nothing).
    if text.is_ascii() {
        ascii_words(text, 0, lower, &mut f);
        return;
    }
    if !text.chars().any(is_cjk) {
        words(text, 0, lower, &mut f);
        return;
    }
    // Split into maximal CJK and non-CJK runs: (is CJK, byte start, code-point start).
    let mut runs: Vec<(bool, usize, usize)> = Vec::new();
    for (pos, (byte, c)) in text.char_indices().enumerate() {
        let cjk = is_cjk(c);
        if runs.last().is_none_or(|run| run.0 != cjk) {
            runs.push((cjk, byte, pos));
        }
    }
    for (k, &(cjk, byte, pos)) in runs.iter().enumerate() {
        let end_byte = runs.get(k + 1).map_or(text.len(), |run| run.1);
        let run = &text[byte..end_byte];
        if cjk {
            bigrams(run, pos, &mut f);
        } else {
            words(run, pos, lower, &mut f);
        }
    }
}

/// Calls `f` with the index term of lowercased `word` (as `each_word` yields it), unless it is a
/// stop word. A word that is not ASCII goes through the name fold (`fold`: compatibility forms,
/// case, generic diacritics, NFC) first, so `Café`, `cafe` and `Cafe\u{301}` are one term, as
/// they are one name; an ASCII word folds to itself and skips it. Latin-script words are then
/// stemmed (memoised per thread), others kept as they are.
pub fn word_term(stemmer: &Stemmer, word: &str, f: impl FnOnce(&str)) {
    if word.is_ascii() {
        unfolded_term(stemmer, word, f);
    } else {
        let folded = fold(word);
        // A word of diacritics alone (`\u{345}` is a letter) folds to nothing: no term.
        if !folded.is_empty() {
            unfolded_term(stemmer, &folded, f);
        }
    }
}

/// The term of `word` as it stands (no folding): nothing for a stop word, the stem of a
/// Latin-script word, else the word. For non-ASCII words this is what the tokenizer gave before
/// it folded (`query_terms`).
fn unfolded_term(stemmer: &Stemmer, word: &str, f: impl FnOnce(&str)) {
    if is_stop_word(word) {
        return;
    }
    if is_latin_word(word) {
        with_stem(stemmer, word, f);
    } else {
        f(word);
    }
}

/// A distinct term of a query, with the terms its words had before index terms were folded,
/// where those differ from it (`query_terms`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm {
    pub term: String,
    pub unfolded: Vec<String>,
}

/// The distinct index terms of `query`, in order of first occurrence, each with its words'
/// unfolded terms: the lowercased word, and its NFC form, through the tokenizer as it was before
/// it folded (stop words, stemming, no fold). Passages indexed before hold those (`café`,
/// `naïv`), so a search also looks them up: any spelling that found a passage then finds it
/// now. Only non-ASCII words have any, so an ASCII query costs nothing more. With `parts`, the
/// parts of identifiers are terms too (a search); without, one term a word (a name that every
/// passage spelling it in full holds, `GitHub` also in `Github`).
#[must_use]
pub fn query_terms(query: &str, parts: bool) -> Vec<QueryTerm> {
    let stemmer = Stemmer::create(Algorithm::English);
    let mut out: Vec<QueryTerm> = Vec::new();
    each_word_in(query, parts, |piece, _, _| {
        let (term, unfolded) = match piece {
            Piece::Term(term) => (term.to_owned(), Vec::new()),
            Piece::Word(word) => {
                let mut term = None;
                word_term(&stemmer, word, |t| term = Some(t.to_owned()));
                let Some(term) = term else { return };
                let mut unfolded = Vec::new();
                if !word.is_ascii() {
                    let nfc: String = word.nfc().collect();
                    for spelling in [word, nfc.as_str()] {
                        unfolded_term(&stemmer, spelling, |t| {
                            if t != term && !unfolded.iter().any(|u| u == t) {
                                unfolded.push(t.to_owned());
                            }
                        });
                    }
                }
                (term, unfolded)
            }
        };
        match out.iter_mut().find(|q| q.term == term) {
            Some(q) => {
                for u in unfolded {
                    if !q.unfolded.contains(&u) {
                        q.unfolded.push(u);
                    }
                }
            }
            None => out.push(QueryTerm { term, unfolded }),
        }
    });
    out
}

fn bigrams(run: &str, base: usize, f: &mut impl FnMut(Piece<'_>, usize, usize)) {
    let chars: Vec<char> = run.chars().collect();
    if chars.len() == 1 {
        f(Piece::Term(run), base, base + 1);
        return;
    }
    let mut pair = String::new();
    for (i, two) in chars.windows(2).enumerate() {
        pair.clear();
        pair.extend(two);
        f(Piece::Term(&pair), base + i, base + i + 2);
    }
}

/// The words of a non-CJK run. UAX #29 never joins a character to a following ASCII space, nor
/// an ASCII space to a following ASCII character other than a space, so the run is cut at its
/// spaces: an ASCII stretch goes through `ascii_words` (the same words, without Unicode tables),
/// any other through `unicode_words` with the space before it (a combining mark after a space
/// belongs to it).
fn words(run: &str, base: usize, lower: &mut Lower, f: &mut impl FnMut(Piece<'_>, usize, usize)) {
    let bytes = run.as_bytes();
    let mut at = 0;
    let mut pos = base;
    while at < bytes.len() {
        let end = bytes[at..].iter().position(|&b| b == b' ').map_or(bytes.len(), |i| at + i);
        let piece = &run[at..end];
        if piece.is_ascii() {
            ascii_words(piece, pos, lower, f);
            pos += piece.len();
        } else {
            let from = if at > 0 { at - 1 } else { at };
            unicode_words(&run[from..end], pos - (at - from), lower, f);
            pos += piece.chars().count();
        }
        // The space.
        at = end + 1;
        pos += 1;
    }
}

/// UAX #29 word classes of the ASCII characters that can be part of a word.
fn word_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether UAX #29 keeps `prev mid next` in one word (WB6/7: letter (`MidLetter` | `MidNumLet` |
/// `Single_Quote`) letter; WB11/12: digit (`MidNum` | `MidNumLet` | `Single_Quote`) digit).
fn joins(prev: u8, mid: u8, next: u8) -> bool {
    (prev.is_ascii_alphabetic() && next.is_ascii_alphabetic() && matches!(mid, b':' | b'.' | b'\''))
        || (prev.is_ascii_digit() && next.is_ascii_digit() && matches!(mid, b',' | b';' | b'.' | b'\''))
}

/// The words of an ASCII stretch, as UAX #29 cuts them: runs of letters, digits and `_`
/// (WB5, 8–10, 13a/b), joined across one middle character by `joins`.
fn ascii_words(piece: &str, base: usize, lower: &mut Lower, f: &mut impl FnMut(Piece<'_>, usize, usize)) {
    let b = piece.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !word_char(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        loop {
            if i < b.len() && word_char(b[i]) {
                i += 1;
            } else if i + 1 < b.len() && joins(b[i - 1], b[i], b[i + 1]) {
                i += 2;
            } else {
                break;
            }
        }
        let word = &b[start..i];
        if word.iter().any(u8::is_ascii_alphanumeric) {
            let text = &piece[start..i];
            f(Piece::Word(lower.of(text)), base + start, base + i);
            if lower.parts && may_split_ascii(word) {
                each_part(word, |s, e| f(Piece::Word(lower.of(&text[s..e])), base + start + s, base + start + e));
            }
        }
    }
}

fn unicode_words(run: &str, base: usize, lower: &mut Lower, f: &mut impl FnMut(Piece<'_>, usize, usize)) {
    let mut pos = base;
    for word in run.split_word_bounds() {
        let len = word.chars().count();
        if word.chars().any(char::is_alphanumeric) {
            f(Piece::Word(lower.of(word)), pos, pos + len);
            if lower.parts && may_split(word) {
                let chars: Vec<char> = word.chars().collect();
                let mut part = String::new();
                each_part(chars.as_slice(), |s, e| {
                    part.clear();
                    part.extend(&chars[s..e]);
                    f(Piece::Word(lower.of(&part)), pos + s, pos + e);
                });
            }
        }
        pos += len;
    }
}

/// The buffer a word is lowercased into (`each_word` lends it to `f`), and whether identifiers'
/// parts are wanted.
struct Lower {
    buf: String,
    parts: bool,
}

impl Lower {
    /// `word` lowercased, in the buffer.
    fn of(&mut self, word: &str) -> &str {
        self.buf.clear();
        if word.is_ascii() {
            self.buf.push_str(word);
            self.buf.make_ascii_lowercase();
        } else {
            self.buf.push_str(&word.to_lowercase());
        }
        &self.buf
    }
}

/// Stems learned on this thread are kept up to this many (then forgotten all at once).
const STEM_MEMO: usize = 1 << 16;

thread_local! {
    /// Lowercased word → stem. Text repeats its words (Zipf), and stemming is a large share of
    /// tokenizing, which bounds ingest.
    static STEMS: std::cell::RefCell<super::FastMap<String, String>> = std::cell::RefCell::new(super::FastMap::default());
}

/// Calls `f` with the Snowball English stem of lowercased `word`, memoised per thread. `f` must
/// not tokenize (the memo is borrowed while it runs).
fn with_stem<R>(stemmer: &Stemmer, word: &str, f: impl FnOnce(&str) -> R) -> R {
    STEMS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(s) = memo.get(word) {
            return f(s);
        }
        // Snowball expects the ASCII apostrophe: `don’t` and `don't` stem alike.
        let term = stemmer.stem(&word.replace('\u{2019}', "'")).into_owned();
        if memo.len() >= STEM_MEMO {
            memo.clear();
        }
        let out = f(&term);
        memo.insert(word.to_owned(), term);
        out
    })
}

/// A word with at least one letter whose letters are all Latin script (basic, Latin-1, extended
/// A/B, extended additional) or combining diacritics.
fn is_latin_word(word: &str) -> bool {
    let mut letters = word.chars().filter(|c| c.is_alphabetic()).peekable();
    letters.peek().is_some()
        && letters.all(|c| {
            c.is_ascii_alphabetic()
                || matches!(c as u32, 0xC0..=0x24F | 0x300..=0x36F | 0x1E00..=0x1EFF) && c != '×' && c != '÷'
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::char_slice;
    use proptest::prelude::*;

    /// Tokens of `text`, checking every span is in order, in bounds and slices to a non-empty string.
    fn toks(text: &str) -> Vec<Token> {
        let out = tokens(text);
        check(text, &out);
        out
    }

    fn check(text: &str, out: &[Token]) {
        let mut prev_start = 0;
        for t in out {
            assert!(prev_start <= t.start && t.start < t.end, "{out:?}");
            assert!(char_slice(text, t.start, t.end).is_some_and(|s| !s.trim().is_empty()), "{t:?}");
            assert!(!t.term.is_empty());
            prev_start = t.start;
        }
    }

    fn terms(text: &str) -> Vec<String> {
        toks(text).into_iter().map(|t| t.term).collect()
    }

    #[test]
    fn stop_words_are_sorted_and_dropped() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
        assert!(!is_stop_word("cat") && !is_stop_word("The"));
        assert_eq!(terms("The cat and THE dog of it"), ["cat", "dog"]);
    }

    #[test]
    fn latin_words_are_lowercased_and_stemmed() {
        assert_eq!(terms("Running runners ran, RUNS!"), ["run", "runner", "ran", "run"]);
        assert_eq!(terms("Priya's companies"), ["priya", "compani"]);
        assert_eq!(terms("don't don\u{2019}t"), ["don't", "don't"]);
        assert_eq!(terms("Caf\u{e9}s na\u{ef}vely"), ["cafe", "naiv"]);
    }

    #[test]
    fn nfc_nfd_and_accentless_spellings_are_one_term() {
        let want = ["cafe", "naiv", "resum"];
        assert_eq!(terms("Caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9}"), want);
        assert_eq!(terms("Cafe\u{301} nai\u{308}ve re\u{301}sume\u{301}"), want);
        assert_eq!(terms("cafe naive resume"), want);
        assert_eq!(terms("CAF\u{c9} NA\u{cf}VE R\u{c9}SUM\u{c9}"), want);
        // The name fold's other rules: `ß`, ligatures, width; Greek and Cyrillic lose accents too.
        assert_eq!(terms("Stra\u{df}e \u{fb01}sh \u{ff21}\u{ff22}\u{ff23}"), ["strass", "fish", "abc"]);
        assert_eq!(
            terms("\u{391}\u{3b8}\u{3ae}\u{3bd}\u{3b1} \u{451}\u{436}"),
            ["\u{3b1}\u{3b8}\u{3b7}\u{3bd}\u{3b1}", "\u{435}\u{436}"]
        );
        // A word of a lone diacritic letter folds to nothing and gives no term.
        assert!(terms("\u{345}").is_empty());
    }

    #[test]
    fn query_terms_carry_the_unfolded_terms_of_stores_indexed_before() {
        let q = query_terms("Caf\u{e9} cafe Cafe\u{301} the r\u{e9}sum\u{e9}s \u{6771}\u{4eac}", true);
        let got: Vec<(&str, Vec<&str>)> =
            q.iter().map(|t| (t.term.as_str(), t.unfolded.iter().map(String::as_str).collect())).collect();
        assert_eq!(got[0].0, "cafe");
        // `café` (NFC) and the NFD spelling's own stem, once each.
        assert!(got[0].1.contains(&"caf\u{e9}"), "{got:?}");
        assert_eq!(got[0].1.len(), 2, "{got:?}");
        assert_eq!(got[1], ("resum", vec!["r\u{e9}sum\u{e9}"]));
        assert_eq!(got[2], ("\u{6771}\u{4eac}", vec![]));
        assert_eq!(got.len(), 3);
        assert!(query_terms("plain ascii words", true).iter().all(|t| t.unfolded.is_empty()));
    }

    #[test]
    fn numbers_are_kept() {
        assert_eq!(terms("In 2024, 3.14 and 1,000 items"), ["2024", "3.14", "1,000", "item"]);
    }

    #[test]
    fn other_scripts_are_lowercased_not_stemmed() {
        assert_eq!(terms("Москва ΑΘΗΝΑ"), ["москва", "αθηνα"]);
    }

    #[test]
    fn cjk_runs_become_bigrams() {
        let out = toks("東京都に住む");
        let got: Vec<(&str, usize, usize)> = out.iter().map(|t| (t.term.as_str(), t.start, t.end)).collect();
        assert_eq!(got, [("東京", 0, 2), ("京都", 1, 3), ("都に", 2, 4), ("に住", 3, 5), ("住む", 4, 6)]);
        assert_eq!(terms("한국어"), ["한국", "국어"]);
        assert_eq!(terms("カタカナ"), ["カタ", "タカ", "カナ"]);
        // A lone character is a unigram; punctuation and Latin words end a run.
        assert_eq!(terms("東。京 and Tokyo都"), ["東", "京", "tokyo", "都"]);
        let out = toks("I love 日本!");
        assert_eq!((out[2].term.as_str(), out[2].start, out[2].end), ("日本", 7, 9));
    }

    #[test]
    fn emoji_and_combining_marks_keep_code_point_offsets() {
        let text = "\u{1F469}\u{200D}\u{1F467} Cafe\u{301} \u{1F600}Stars";
        let out = toks(text);
        let got: Vec<(&str, usize, usize)> = out.iter().map(|t| (t.term.as_str(), t.start, t.end)).collect();
        assert_eq!(got, [("cafe", 4, 9), ("star", 11, 16)]);
        assert_eq!(char_slice(text, 4, 9), Some("Cafe\u{301}"));
        assert_eq!(char_slice(text, 11, 16), Some("Stars"));
    }

    #[test]
    fn latin_script_detection() {
        assert!(is_latin_word("abc") && is_latin_word("\u{e9}t\u{e9}") && is_latin_word("x2"));
        assert!(!is_latin_word("123") && !is_latin_word("москва") && !is_latin_word("a\u{3b1}"));
    }

    /// (term, the text its span slices) of each token of `text`.
    fn spans(text: &str) -> Vec<(String, String)> {
        toks(text)
            .into_iter()
            .map(|t| {
                let spelled = char_slice(text, t.start, t.end).expect("a span in bounds").to_owned();
                (t.term, spelled)
            })
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|&(a, b)| (a.to_owned(), b.to_owned())).collect()
    }

    #[test]
    fn identifiers_give_their_parts_after_the_whole_word() {
        assert_eq!(
            spans("see config.ts and retryPolicy"),
            pairs(&[
                ("see", "see"),
                ("config.t", "config.ts"),
                ("config", "config"),
                ("ts", "ts"),
                ("retrypolici", "retryPolicy"),
                ("retri", "retry"),
                ("polici", "Policy"),
            ])
        );
        assert_eq!(
            spans("MAX_RETRY_COUNT http2_client"),
            pairs(&[
                ("max_retry_count", "MAX_RETRY_COUNT"),
                ("max", "MAX"),
                ("retri", "RETRY"),
                ("count", "COUNT"),
                ("http2_client", "http2_client"),
                ("http", "http"),
                ("2", "2"),
                ("client", "client"),
            ])
        );
        // `fooBar.bazQux()`: the call's parentheses are not part of the word. Stop words among
        // the parts are dropped, as among words.
        assert_eq!(
            terms("fooBar.bazQux() is_valid"),
            ["foobar.bazqux", "foo", "bar", "baz", "qux", "is_valid", "valid"]
        );
        assert_eq!(terms("HTTPServer parseJSON"), ["httpserver", "http", "server", "parsejson", "pars", "json"]);
    }

    #[test]
    fn identifier_parts_keep_code_point_spans_beside_non_ascii_text() {
        let text = "\u{1F600} naïveCafé=東京 getURLs";
        assert_eq!(
            spans(text),
            pairs(&[
                ("naivecaf", "naïveCafé"),
                ("naiv", "naïve"),
                ("cafe", "Café"),
                ("東京", "東京"),
                ("geturl", "getURLs"),
                ("get", "get"),
                ("url", "URLs"),
            ])
        );
    }

    #[test]
    fn prose_gives_the_terms_it_gave_before_identifiers_were_cut() {
        // `word_tokens` is the tokenizer without parts: for prose, `tokens` is exactly it.
        for text in [
            "Hello, don't stop: the U.S.A. e.g. i.e. NASA's APIs and URLs cost 3.14 or 1,000 in 2024.",
            "The 1st run at 10am took 8mb; Café naïve résumé, Москва ΑΘΗΝΑ, O'Neil's dog.",
            "東京都に住む 한국어 カタカナ I love 日本!",
        ] {
            assert_eq!(tokens(text), word_tokens(text), "{text}");
        }
        assert_eq!(terms("東京都 retryPolicy"), ["東京", "京都", "retrypolici", "retri", "polici"]);
    }

    #[test]
    fn a_long_identifier_gives_every_part_in_order() {
        // 10 parts: 59 characters when snake_case, near the longest word that has parts
        // (`ident_parts::LONGEST`).
        let parts: Vec<String> = (0..10).map(|i| format!("part{}", char::from(b'a' + i))).collect();
        let capital = |p: &str| p[..1].to_uppercase() + &p[1..];
        let camel: String =
            parts.iter().enumerate().map(|(i, p)| if i == 0 { p.clone() } else { capital(p) }).collect();
        let got = toks(&camel);
        assert_eq!(got.len(), 11);
        assert_eq!((got[0].start, got[0].end), (0, camel.len()));
        for (t, p) in got[1..].iter().zip(&parts) {
            assert_eq!(char_slice(&camel, t.start, t.end).unwrap().to_lowercase(), *p);
        }
        let snake = parts.join("_");
        assert_eq!(toks(&snake).len(), 11);
    }

    #[test]
    fn part_terms_are_the_parts_alone() {
        assert_eq!(part_terms("retryPolicy"), ["retri", "polici"]);
        assert_eq!(part_terms("MAX_RETRY_COUNT"), ["max", "retri", "count"]);
        assert!(part_terms("Hello").is_empty() && part_terms("U.S.A").is_empty());
        let whole: Vec<String> = query_terms("retryPolicy", false).into_iter().map(|q| q.term).collect();
        assert_eq!(whole, ["retrypolici"]);
        let all: Vec<String> = query_terms("retryPolicy", true).into_iter().map(|q| q.term).collect();
        assert_eq!(all, ["retrypolici", "retri", "polici"]);
    }

    #[test]
    fn deterministic() {
        let text = "Mr. Smith's 東京 offices were running in 2024.";
        assert_eq!(tokens(text), tokens(text));
        assert!(tokens("").is_empty());
        assert!(tokens(" ... !? ").is_empty());
    }

    /// The terms of `tokens` as UAX #29 alone cuts them (no ASCII fast path), for comparison.
    fn reference(text: &str) -> Vec<Token> {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut out = Vec::new();
        let mut lower = Lower { buf: String::new(), parts: true };
        let mut emit = |piece: Piece<'_>, start: usize, end: usize| match piece {
            Piece::Term(t) => out.push(Token { term: t.to_owned(), start, end }),
            Piece::Word(w) => word_term(&stemmer, w, |t| out.push(Token { term: t.to_owned(), start, end })),
        };
        // Maximal CJK / non-CJK runs, each cut on its own, as `each_word` does.
        let mut run = String::new();
        let mut run_start = 0;
        let mut run_cjk: Option<bool> = None;
        let chars: Vec<char> = text.chars().collect();
        for pos in 0..=chars.len() {
            let c = chars.get(pos).copied();
            let cjk = c.map(is_cjk);
            if c.is_none() || run_cjk.is_some_and(|r| Some(r) != cjk) {
                match run_cjk {
                    Some(true) => bigrams(&run, run_start, &mut emit),
                    Some(false) => unicode_words(&run, run_start, &mut lower, &mut emit),
                    None => {}
                }
                run.clear();
                run_start = pos;
            }
            if let Some(c) = c {
                run_cjk = cjk;
                run.push(c);
            }
        }
        out
    }

    #[test]
    fn ascii_fast_path_cuts_words_as_uax29_does() {
        for text in [
            "can't stop: a:b a.b.c 1.2.3 1,000;2 x_1 _ __a a_ 'quoted' 3.14. e.g. U.S.A. a'b'c a..b 1..2",
            "mixed caf\u{e9}'s na\u{ef}ve \u{301}x a \u{301} b\u{2019}s \u{3000} x\t\ty\r\nz",
            "tail. a1b2 1a.b 1.a a.1 ::: ,1 1, ;1",
        ] {
            assert_eq!(tokens(text), reference(text), "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn tokens_never_panic_and_slice_back(text in any::<String>()) {
            check(&text, &tokens(&text));
        }

        #[test]
        fn ascii_fast_path_matches_uax29(text in "[aZ9_:.',;\"\\- \t\n\u{e9}\u{301}\u{2019}\u{3000}\u{a0}東]{0,40}") {
            prop_assert_eq!(tokens(&text), reference(&text));
        }
    }
}
