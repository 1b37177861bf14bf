//! Text for the knowledge layer: sentences, passages and full-text tokens. Pure, deterministic
//! functions over `&str`. Every span is a Unicode code-point range `[start, end)` (counting `char`s,
//! not bytes) into the text it was computed from, so `char_slice(text, start, end)` gives it back.

mod chunk;
mod fast_hash;
mod headings;
mod ident_parts;
mod link;
mod names;
mod sentences;
mod tokenize;

pub use chunk::{
    MAX_WORDS, MIN_WORDS, Passage, TARGET_WORDS, chunk_messages, chunk_text, messages_text, with_headings, word_count,
};
pub use fast_hash::{FastHasher, FastMap};
pub use headings::{Heading, heading_path, headings};
pub use link::{Linker, Mention, absent_mention, mentions_name};
pub use names::{
    Effort, LookupOptions, MatchKind, NameIndex, NameMatch, allowed_distance, fold, fold_text, folds_to,
    is_common_word, may_name_alone, title_case,
};
pub use sentences::{ABBREVIATIONS, Sentence, sentences};
pub use tokenize::{
    Piece, QueryTerm, STOP_WORDS, Token, each_term, each_word, is_stop_word, part_terms, query_terms, tokens,
    word_term, word_tokens,
};

/// The text between code points `start` (inclusive) and `end` (exclusive), or `None` when the range
/// is reversed or runs past the end. Used to verify stored spans before they are quoted.
#[must_use]
pub fn char_slice(text: &str, start: usize, end: usize) -> Option<&str> {
    if start > end {
        return None;
    }
    let mut bounds = text.char_indices().map(|(b, _)| b).chain(std::iter::once(text.len()));
    let from = bounds.nth(start)?;
    let to = if end == start { from } else { bounds.nth(end - start - 1)? };
    Some(&text[from..to])
}

/// Han, Hiragana, Katakana or Hangul: the scripts the tokenizer cuts into character bigrams.
#[must_use]
pub fn is_cjk(c: char) -> bool {
    is_hangul(c) || is_spaceless(c)
}

/// Hangul (syllables and jamo). Korean separates words with spaces, so Hangul is counted by words,
/// not by characters, when sizing passages.
#[must_use]
pub fn is_hangul(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F | 0xAC00..=0xD7AF | 0xD7B0..=0xD7FF)
}

/// Han, Hiragana or Katakana: scripts written without spaces, where each character counts as a word.
#[must_use]
pub fn is_spaceless(c: char) -> bool {
    matches!(
        c as u32,
        // Han: iteration and numeral marks, Hangzhou numerals, URO, extension A, compatibility
        // ideographs, extensions B–G and the compatibility supplement.
        0x3005 | 0x3007 | 0x3021..=0x3029 | 0x3038..=0x303B
            | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF
            | 0x20000..=0x2A6DF | 0x2A700..=0x2EBEF | 0x2F800..=0x2FA1F | 0x30000..=0x3134F
            // Hiragana.
            | 0x3041..=0x309F
            // Katakana (without the double hyphen U+30A0 and the middle dot U+30FB, which are
            // punctuation), phonetic extensions and halfwidth forms.
            | 0x30A1..=0x30FA | 0x30FC..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9D
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_slice_counts_code_points() {
        let s = "a\u{e9}\u{1F600}e\u{301}z";
        assert_eq!(char_slice(s, 0, 1), Some("a"));
        assert_eq!(char_slice(s, 2, 3), Some("\u{1F600}"));
        assert_eq!(char_slice(s, 3, 5), Some("e\u{301}"));
        assert_eq!(char_slice(s, 6, 6), Some(""));
        assert_eq!(char_slice(s, 0, 6), Some(s));
        assert_eq!(char_slice(s, 0, 7), None);
        assert_eq!(char_slice(s, 7, 7), None);
        assert_eq!(char_slice(s, 3, 2), None);
        assert_eq!(char_slice("", 0, 0), Some(""));
    }

    #[test]
    fn script_classes() {
        for c in ['東', '京', 'の', 'カ', 'ー', '々', 'ｶ', '\u{20000}'] {
            assert!(is_spaceless(c) && is_cjk(c) && !is_hangul(c), "{c}");
        }
        for c in ['한', '국', 'ᄀ', 'ㄱ'] {
            assert!(is_hangul(c) && is_cjk(c) && !is_spaceless(c), "{c}");
        }
        for c in ['a', 'é', '1', '。', '・', '！', ' ', '\u{1F600}', 'Ж'] {
            assert!(!is_cjk(c) && !is_spaceless(c) && !is_hangul(c), "{c}");
        }
    }
}
