//! Sentence boundaries: UAX #29 sentence segmentation, repaired so that a sentence does not end
//! after a common abbreviation or an initial. UAX #29 already ends a sentence after the CJK full
//! stops `。！？｡` with no space after them (rule SB11); the tests pin that behaviour.

use unicode_segmentation::UnicodeSegmentation;

/// A sentence as a code-point span `[start, end)` into the text it was cut from. Never empty, never
/// starting or ending with whitespace; sentences are in order and do not overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sentence {
    pub start: usize,
    pub end: usize,
}

/// Abbreviations after which a sentence does not end (matched case-sensitively on the last
/// whitespace-separated word, leading brackets and quotes ignored). Dotted initialisms of single
/// letters (`U.S.`, `e.g.`, `a.m.`) and a single capital initial (`J.`) are recognised by shape too.
pub const ABBREVIATIONS: &[&str] = &[
    "Dr.", "Fig.", "Inc.", "Jr.", "Ltd.", "Mr.", "Mrs.", "Ms.", "No.", "Prof.", "Sr.", "St.", "U.S.", "e.g.", "etc.",
    "i.e.", "vs.",
];

/// The sentences of `text`, in order. Whitespace between sentences belongs to none of them.
#[must_use]
pub fn sentences(text: &str) -> Vec<Sentence> {
    let chars: Vec<char> = text.chars().collect();
    let mut raw = Vec::new();
    let mut pos = 0;
    for segment in text.split_sentence_bounds() {
        let len = segment.chars().count();
        raw.push((pos, pos + len));
        pos += len;
    }
    let mut merged = Vec::with_capacity(raw.len());
    let mut pending: Option<usize> = None;
    for (start, end) in raw {
        let start = pending.take().unwrap_or(start);
        if ends_with_abbreviation(&chars[start..end]) {
            pending = Some(start);
        } else {
            merged.push((start, end));
        }
    }
    if let Some(start) = pending {
        merged.push((start, chars.len()));
    }
    merged
        .into_iter()
        .filter_map(|(mut start, mut end)| {
            while start < end && chars[start].is_whitespace() {
                start += 1;
            }
            while end > start && chars[end - 1].is_whitespace() {
                end -= 1;
            }
            (start < end).then_some(Sentence { start, end })
        })
        .collect()
}

// Abbreviations are short: reading back at most this many characters keeps the check O(1) per
// segment, whatever the text.
const LONGEST_ABBREVIATION: usize = 16;

/// Whether a segment ends with an abbreviation, so the sentence goes on. A line break after it
/// ends the sentence anyway.
fn ends_with_abbreviation(segment: &[char]) -> bool {
    let mut end = segment.len();
    while end > 0 && segment[end - 1].is_whitespace() {
        if matches!(segment[end - 1], '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}') {
            return false;
        }
        end -= 1;
    }
    let mut start = end;
    while start > 0 && !segment[start - 1].is_whitespace() {
        if end - start == LONGEST_ABBREVIATION {
            return false;
        }
        start -= 1;
    }
    while start < end && !segment[start].is_alphanumeric() {
        start += 1;
    }
    let word: String = segment[start..end].iter().collect();
    ABBREVIATIONS.contains(&word.as_str()) || is_initialism(&segment[start..end])
}

/// `J.`, `U.S.`, `e.g.`: letters each followed by a dot; a lone initial must be a capital.
fn is_initialism(word: &[char]) -> bool {
    if word.is_empty() || !word.len().is_multiple_of(2) {
        return false;
    }
    let pairs_ok = word.chunks(2).all(|pair| pair[0].is_alphabetic() && pair[1] == '.');
    pairs_ok && (word.len() > 2 || word[0].is_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::char_slice;
    use proptest::prelude::*;

    /// The sentences of `text` as strings, checking every span slices back and is trimmed.
    fn cut(text: &str) -> Vec<String> {
        let spans = sentences(text);
        check(text, &spans);
        spans.iter().map(|s| char_slice(text, s.start, s.end).unwrap().to_owned()).collect()
    }

    fn check(text: &str, spans: &[Sentence]) {
        let len = text.chars().count();
        let mut covered = vec![false; len];
        let mut prev_end = 0;
        for s in spans {
            assert!(prev_end <= s.start && s.start < s.end && s.end <= len, "{spans:?}");
            let slice = char_slice(text, s.start, s.end).unwrap();
            assert_eq!(slice.chars().count(), s.end - s.start);
            assert_eq!(slice.trim(), slice);
            covered[s.start..s.end].iter_mut().for_each(|c| *c = true);
            prev_end = s.end;
        }
        for (i, c) in text.chars().enumerate() {
            assert!(c.is_whitespace() || covered[i], "char {i} {c:?} in no sentence of {text:?}");
        }
    }

    #[test]
    fn plain_sentences() {
        assert_eq!(cut("Hello there. How are you? Fine!  "), ["Hello there.", "How are you?", "Fine!"]);
        assert!(cut("").is_empty());
        assert!(cut("  \n\t ").is_empty());
        assert_eq!(cut("  One.\n\nTwo"), ["One.", "Two"]);
    }

    #[test]
    fn abbreviations_do_not_end_sentences() {
        assert_eq!(
            cut("Mr. Smith met Dr. Jones at St. Mary's. They talked."),
            ["Mr. Smith met Dr. Jones at St. Mary's.", "They talked."]
        );
        assert_eq!(cut("Prof. Li and Mrs. Chen came. Ok."), ["Prof. Li and Mrs. Chen came.", "Ok."]);
        assert_eq!(cut("Fruit, e.g. Apples, i.e. Red ones. Next."), ["Fruit, e.g. Apples, i.e. Red ones.", "Next."]);
        assert_eq!(cut("Pens, paper, etc. Were bought. Next."), ["Pens, paper, etc. Were bought.", "Next."]);
        assert_eq!(cut("Lakers vs. Celtics tonight. Go."), ["Lakers vs. Celtics tonight.", "Go."]);
        assert_eq!(
            cut("The U.S. Army and the U.K. Navy met. Done."),
            ["The U.S. Army and the U.K. Navy met.", "Done."]
        );
        assert_eq!(cut("Acme Inc. And Foo Ltd. Merged. Yes."), ["Acme Inc. And Foo Ltd. Merged.", "Yes."]);
        assert_eq!(
            cut("Martin Luther King Jr. Spoke. Sr. Ana too."),
            ["Martin Luther King Jr. Spoke.", "Sr. Ana too."]
        );
        assert_eq!(cut("See No. 5 and Fig. 3 here. End."), ["See No. 5 and Fig. 3 here.", "End."]);
        assert_eq!(cut("J. R. R. Tolkien wrote it. Yes."), ["J. R. R. Tolkien wrote it.", "Yes."]);
        assert_eq!(cut("(Dr. Who) is on. Yes."), ["(Dr. Who) is on.", "Yes."]);
    }

    #[test]
    fn ordinary_words_still_end_sentences() {
        assert_eq!(cut("He said no. Then he left."), ["He said no.", "Then he left."]);
        assert_eq!(cut("I saw a. B was there."), ["I saw a.", "B was there."]);
        assert_eq!(cut("Ask Dr.\nWho knows."), ["Ask Dr.", "Who knows."]);
        assert_eq!(cut("It ends with Mr."), ["It ends with Mr."]);
        // Only the last 16 characters of a word are read: a long dotted run is no abbreviation.
        assert_eq!(cut("Spell A.B.C.D.E.F.G.H.I. Next one."), ["Spell A.B.C.D.E.F.G.H.I.", "Next one."]);
        assert_eq!(cut("Spell A.B.C.D.E.F.G.H. Next one."), ["Spell A.B.C.D.E.F.G.H. Next one."]);
    }

    #[test]
    fn cjk_full_stops_end_sentences_without_spaces() {
        assert_eq!(cut("你好。今天天气很好！你呢？我很好"), ["你好。", "今天天气很好！", "你呢？", "我很好"]);
        assert_eq!(
            cut("「行こう。」と彼は言った。本当に？！はい。"),
            ["「行こう。」", "と彼は言った。", "本当に？！", "はい。"]
        );
        assert_eq!(cut("東京に行った｡楽しかった｡"), ["東京に行った｡", "楽しかった｡"]);
        assert_eq!(cut("Tokyo。Osaka. Kyoto"), ["Tokyo。", "Osaka.", "Kyoto"]);
    }

    #[test]
    fn emoji_and_combining_marks_keep_code_point_offsets() {
        let text =
            "Caf\u{e9} ol\u{e9}\u{301} \u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467} done. Na\u{308}ive \u{1F600}!";
        assert_eq!(
            cut(text),
            ["Caf\u{e9} ol\u{e9}\u{301} \u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467} done.", "Na\u{308}ive \u{1F600}!"]
        );
        let spans = sentences(text);
        assert_eq!(spans[0], Sentence { start: 0, end: 21 });
        assert_eq!(spans[1], Sentence { start: 22, end: 31 });
    }

    #[test]
    fn initialism_shape() {
        for w in ["J.", "U.S.", "e.g.", "a.m.", "U.S.A."] {
            assert!(is_initialism(&w.chars().collect::<Vec<_>>()), "{w}");
        }
        for w in ["a.", "US.", "J", "", "..", "1.", "J.."] {
            assert!(!is_initialism(&w.chars().collect::<Vec<_>>()), "{w}");
        }
    }

    #[test]
    fn deterministic() {
        let text = "Mr. A met B. 你好。Then? Yes! Fig. 2 shows it.";
        assert_eq!(sentences(text), sentences(text));
    }

    proptest! {
        #[test]
        fn spans_are_ordered_trimmed_and_cover_the_text(text in any::<String>()) {
            check(&text, &sentences(&text));
        }

        #[test]
        fn spans_hold_for_sentence_like_text(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "Mr.", "Dr.", "J.", "U.S.", "e.g.", "word", "Word", "。", "！", "？", "」", "東京", "한국",
                    ".", "!", "?", " ", "  ", "\n", "\u{1F469}\u{200D}\u{1F467}", "e\u{301}", "\"", "(", ")",
                ]),
                0..200,
            )
        ) {
            let text = parts.concat();
            check(&text, &sentences(&text));
        }
    }
}
