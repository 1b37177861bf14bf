//! Passages: whole sentences packed into passages of about 100–200 words, a markdown section at
//! a time, and conversations cut one turn a line with no passage spanning two turns.

use super::headings::{heading_path, headings};
use super::{is_spaceless, sentences};
use std::borrow::Cow;

/// Passages below this many words are avoided unless the text (or turn) is shorter.
pub const MIN_WORDS: usize = 100;
/// The size passages are balanced towards.
pub const TARGET_WORDS: usize = 150;
/// No passage exceeds this many words; a longer sentence is cut at word boundaries.
pub const MAX_WORDS: usize = 200;

/// A passage: a code-point span `[start, end)` into the document and its text (exactly that slice).
/// Never empty, never starting or ending with whitespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Passage {
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// The titles of the markdown headings above it that its text does not hold, outermost
    /// first: what full text and linking read it under (`index_text`).
    pub headings: Vec<String>,
}

impl Passage {
    /// A passage of `text` with no heading above it.
    #[must_use]
    pub fn plain(start: usize, end: usize, text: String) -> Self {
        Passage { start, end, text, headings: Vec::new() }
    }

    /// What full text indexes and the linker reads: the heading titles above the passage, each
    /// on its own line, then its text. Only the text is stored and cited.
    #[must_use]
    pub fn index_text(&self) -> Cow<'_, str> {
        with_headings(&self.headings, &self.text)
    }
}

/// `text` read under `titles` (`Passage::index_text`).
#[must_use]
pub fn with_headings<'a>(titles: &[String], text: &'a str) -> Cow<'a, str> {
    if titles.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!("{}\n{text}", titles.join("\n")))
}

/// Words as passage sizes count them: each Han, Hiragana or Katakana character is a word (those
/// scripts have no spaces); otherwise a word is a run of other non-whitespace characters holding at
/// least one letter or digit (so `—` or `...` alone is not a word).
#[must_use]
pub fn word_count(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    word_spans(&chars, 0, chars.len()).len()
}

/// `text` cut into passages of whole sentences, about `TARGET_WORDS` words each and never more than
/// `MAX_WORDS`. Sizes are balanced over each markdown section (`sections`), so no short passage
/// is left at a section's end when it can be avoided, and no passage holds two sections. Each
/// passage carries the titles of the headings above it that it does not hold.
#[must_use]
pub fn chunk_text(text: &str) -> Vec<Passage> {
    let all = headings(text);
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for (start, end) in sections(&all, &chars) {
        let section: String = chars[start..end].iter().collect();
        chunk_into(&section, start, &mut out);
    }
    for p in &mut out {
        p.headings = heading_path(&all, p.start, p.end);
    }
    out
}

/// The code-point ranges of the sections of a text of `len` code points with headings `all`: a
/// section starts at a heading's line, unless nothing but headings came since the last start
/// (`# Team` right above `## Members` opens the same section: a passage of a title alone says
/// nothing). So a passage never mixes two sections' topics, at the cost of a short passage for a
/// short section.
fn sections(all: &[super::headings::Heading], chars: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    // The end of what the section being read holds of headings only.
    let mut titles_end = 0;
    for h in all {
        let said = chars[titles_end.min(h.line_start)..h.line_start].iter().any(|c| !c.is_whitespace());
        if said {
            out.push((start, h.line_start));
            start = h.line_start;
        }
        titles_end = h.line_end;
    }
    out.push((start, chars.len()));
    out
}

/// The document text of a conversation: one line per turn, `role: content`, with line breaks inside
/// a role or content replaced by spaces, lines joined by `\n`. The spans of `chunk_messages` index it.
#[must_use]
pub fn messages_text<R: AsRef<str>, C: AsRef<str>>(turns: &[(R, C)]) -> String {
    message_lines(turns).join("\n")
}

/// Passages of the conversation in `messages_text(turns)`: each turn is its own passage, or several
/// when it is long (cut like `chunk_text` within its line); no passage holds two turns. Every turn
/// gives at least one passage, since its line holds at least `:`.
#[must_use]
pub fn chunk_messages<R: AsRef<str>, C: AsRef<str>>(turns: &[(R, C)]) -> Vec<Passage> {
    let mut out = Vec::new();
    let mut base = 0;
    for line in message_lines(turns) {
        chunk_into(&line, base, &mut out);
        base += line.chars().count() + 1;
    }
    out
}

fn message_lines<R: AsRef<str>, C: AsRef<str>>(turns: &[(R, C)]) -> Vec<String> {
    let one_line = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}') {
                    ' '
                } else {
                    c
                }
            })
            .collect()
    };
    turns.iter().map(|(role, content)| format!("{}: {}", one_line(role.as_ref()), one_line(content.as_ref()))).collect()
}

/// A run of whole sentences (or a piece of one over-long sentence) with its word count.
struct Unit {
    start: usize,
    end: usize,
    words: usize,
}

/// Appends the passages of `text`, offset by `base` code points.
fn chunk_into(text: &str, base: usize, out: &mut Vec<Passage>) {
    let chars: Vec<char> = text.chars().collect();
    let mut units = Vec::new();
    for sentence in sentences(text) {
        let words = word_spans(&chars, sentence.start, sentence.end);
        if words.len() <= MAX_WORDS {
            units.push(Unit { start: sentence.start, end: sentence.end, words: words.len() });
            continue;
        }
        // Cut into n nearly equal pieces at word starts; n = ceil(w / MAX) keeps each piece above
        // MAX / 2 words. Punctuation between words stays with the piece before it.
        let n = words.len().div_ceil(MAX_WORDS);
        for k in 0..n {
            let (a, b) = (k * words.len() / n, (k + 1) * words.len() / n);
            let start = if k == 0 { sentence.start } else { words[a].0 };
            let mut end = if k + 1 == n { sentence.end } else { words[b].0 };
            while chars[end - 1].is_whitespace() {
                end -= 1;
            }
            units.push(Unit { start, end, words: b - a });
        }
    }
    for (first, last) in pack(&units) {
        let (start, end) = (units[first].start, units[last].end);
        out.push(Passage::plain(base + start, base + end, chars[start..end].iter().collect()));
    }
}

/// Groups consecutive units into passages (inclusive index ranges), minimising the summed cost of
/// passage sizes: squared distance from `TARGET_WORDS`, plus a steep charge per word below
/// `MIN_WORDS`; no group exceeds `MAX_WORDS` unless it is a single unit. A unit counts as at least
/// one word, which bounds each group to `MAX_WORDS` units and the work to O(units × `MAX_WORDS`).
fn pack(units: &[Unit]) -> Vec<(usize, usize)> {
    let cost = |words: usize| -> u64 {
        let off = words.abs_diff(TARGET_WORDS) as u64;
        off * off + MIN_WORDS.saturating_sub(words) as u64 * 1_000_000
    };
    // best[i] = (cost, start of the last group) of the best packing of units[..i].
    let mut best: Vec<(u64, usize)> = vec![(0, 0); units.len() + 1];
    for i in 1..=units.len() {
        let mut words = 0;
        let mut choice = (u64::MAX, i - 1);
        for j in (0..i).rev() {
            words += units[j].words.max(1);
            if words > MAX_WORDS && j + 1 < i {
                break;
            }
            let total = best[j].0.saturating_add(cost(words));
            if total < choice.0 {
                choice = (total, j);
            }
        }
        best[i] = choice;
    }
    let mut groups = Vec::new();
    let mut i = units.len();
    while i > 0 {
        let j = best[i].1;
        groups.push((j, i - 1));
        i = j;
    }
    groups.reverse();
    groups
}

/// Code-point spans of the words in `chars[start..end]`, as `word_count` defines them.
fn word_spans(chars: &[char], start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // The run of non-space, non-CJK characters being read: its start and whether it has a letter or digit.
    let mut run: Option<(usize, bool)> = None;
    for (i, &c) in chars.iter().enumerate().take(end).skip(start) {
        if c.is_whitespace() || is_spaceless(c) {
            if let Some((from, true)) = run.take() {
                out.push((from, i));
            }
            if is_spaceless(c) {
                out.push((i, i + 1));
            }
        } else {
            let r = run.get_or_insert((i, false));
            r.1 |= c.is_alphanumeric();
        }
    }
    if let Some((from, true)) = run {
        out.push((from, end));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::char_slice;
    use proptest::prelude::*;

    /// Checks every passage of `text`: slices back exactly, trimmed, in order, no overlap, in
    /// bounds, and every non-whitespace character lies in some passage.
    fn check(text: &str, passages: &[Passage]) {
        let len = text.chars().count();
        let mut covered = vec![false; len];
        let mut prev_end = 0;
        for p in passages {
            assert!(prev_end <= p.start && p.start < p.end && p.end <= len, "{passages:?}");
            assert_eq!(char_slice(text, p.start, p.end), Some(p.text.as_str()));
            assert_eq!(p.text.trim(), p.text);
            covered[p.start..p.end].iter_mut().for_each(|c| *c = true);
            prev_end = p.end;
        }
        for (i, c) in text.chars().enumerate() {
            assert!(c.is_whitespace() || covered[i], "char {i} {c:?} in no passage");
        }
    }

    /// A deterministic text of `sentences` sentences of 4–26 words.
    fn prose(sentences: usize, seed: u64) -> String {
        let mut x = seed;
        let mut next = move |m: u64| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        let words = ["alpha", "Beta", "gamma's", "d\u{e9}lta", "e\u{301}psilon", "\u{1F600}zeta", "eta-theta", "42"];
        let mut out = Vec::new();
        for _ in 0..sentences {
            let n = 3 + next(23) as usize;
            let s: Vec<&str> = (0..n).map(|_| words[next(words.len() as u64) as usize]).collect();
            // Capitalised, or UAX #29 sees no sentence end before it.
            out.push(format!("Then {}.", s.join(" ")));
        }
        out.join(" ")
    }

    #[test]
    fn word_counting() {
        assert_eq!(word_count(""), 0);
        assert_eq!(word_count("Hello, world!"), 2);
        assert_eq!(word_count("one — two ... three"), 3);
        assert_eq!(word_count("東京に行った"), 6);
        assert_eq!(word_count("I went to 東京."), 5);
        assert_eq!(word_count("한국어 문장 입니다"), 3);
        assert_eq!(word_count("\u{1F469}\u{200D}\u{1F467} e\u{301}t\u{e9} 3.14"), 2);
    }

    #[test]
    fn short_text_is_one_passage() {
        let text = "  Mr. Smith went home. He slept.\n";
        let passages = chunk_text(text);
        check(text, &passages);
        assert_eq!(passages, [Passage::plain(2, 32, "Mr. Smith went home. He slept.".into())]);
        assert!(chunk_text("").is_empty());
        assert!(chunk_text(" \n ").is_empty());
    }

    #[test]
    fn thousand_words_give_passages_of_100_to_200_words() {
        for seed in 0..20 {
            let mut text = prose(80, seed);
            while word_count(&text) < 1_000 {
                text.push_str(" Filler words here.");
            }
            let passages = chunk_text(&text);
            check(&text, &passages);
            assert!(passages.len() >= 5, "{}", passages.len());
            for p in &passages {
                let w = word_count(&p.text);
                assert!((MIN_WORDS..=MAX_WORDS).contains(&w), "seed {seed}: {w} words");
            }
        }
    }

    #[test]
    fn passages_hold_whole_sentences() {
        let text = prose(200, 7);
        let passages = chunk_text(&text);
        check(&text, &passages);
        let sentence_spans = sentences(&text);
        for s in &sentence_spans {
            assert!(passages.iter().any(|p| p.start <= s.start && s.end <= p.end), "sentence {s:?} split");
        }
        for p in &passages {
            assert!(p.text.ends_with('.'));
        }
    }

    #[test]
    fn an_over_long_sentence_is_cut_at_word_boundaries() {
        let words: Vec<String> = (0..1_000).map(|i| format!("w{i},")).collect();
        let text = format!("{} end.", words.join(" "));
        let passages = chunk_text(&text);
        check(&text, &passages);
        assert_eq!(passages.len(), 6);
        for p in &passages {
            assert!((MIN_WORDS..=MAX_WORDS).contains(&word_count(&p.text)));
            assert!(p.text.starts_with('w') && (p.text.ends_with(',') || p.text.ends_with('.')));
        }
        // 201 words: two pieces, neither below MIN_WORDS.
        let text = vec!["x"; 201].join(" ");
        let sizes: Vec<usize> = chunk_text(&text).iter().map(|p| word_count(&p.text)).collect();
        assert_eq!(sizes, [100, 101]);
    }

    #[test]
    fn cjk_counts_characters_as_words() {
        let sentence = "今日は東京で友達と会いました。";
        let text = sentence.repeat(80);
        let passages = chunk_text(&text);
        check(&text, &passages);
        for p in &passages {
            assert!((MIN_WORDS..=MAX_WORDS).contains(&word_count(&p.text)), "{}", p.text);
            assert!(p.text.ends_with('。'));
        }
        // No punctuation at all: cut between characters.
        let text = "東".repeat(450);
        let passages = chunk_text(&text);
        check(&text, &passages);
        assert_eq!(passages.iter().map(|p| p.end - p.start).collect::<Vec<_>>(), [150, 150, 150]);
    }

    #[test]
    fn emoji_and_combining_marks_keep_code_point_offsets() {
        let text = "\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467} Fam. Cafe\u{301}!\n\n\u{1F600} Dr. No\u{308}.";
        let passages = chunk_text(text);
        check(text, &passages);
        assert_eq!(passages.len(), 1);
        assert_eq!((passages[0].start, passages[0].end), (0, text.chars().count()));
    }

    #[test]
    fn messages_never_mix_turns() {
        let long = prose(60, 3);
        let turns = [
            ("user", "Hi there.\nHow are you?"),
            ("assistant", long.as_str()),
            ("user", ""),
            ("", "\u{1F600} e\u{301}\r\nok"),
            ("tool\nname", "東京。大阪。"),
        ];
        let doc = messages_text(&turns);
        let lines: Vec<&str> = doc.split('\n').collect();
        assert_eq!(lines.len(), turns.len());
        assert_eq!(lines[0], "user: Hi there. How are you?");
        assert_eq!(lines[2], "user: ");
        assert_eq!(lines[3], ": \u{1F600} e\u{301}  ok");
        assert_eq!(lines[4], "tool name: 東京。大阪。");

        let passages = chunk_messages(&turns);
        check(&doc, &passages);
        let mut line_start = 0;
        for (turn, line) in lines.iter().enumerate() {
            let line_end = line_start + line.chars().count();
            let inside: Vec<&Passage> =
                passages.iter().filter(|p| p.start >= line_start && p.end <= line_end).collect();
            assert!(!inside.is_empty(), "turn {turn} has no passage");
            if turn == 1 {
                assert!(inside.len() > 1);
                assert!(inside.iter().all(|p| word_count(&p.text) <= MAX_WORDS));
            } else {
                assert_eq!(inside.len(), 1);
                assert_eq!(inside[0].text, line.trim());
            }
            line_start = line_end + 1;
        }
        assert!(passages.iter().all(|p| !p.text.contains('\n')));
        let empty: [(&str, &str); 0] = [];
        assert_eq!(messages_text(&empty), "");
        assert!(chunk_messages(&empty).is_empty());
    }

    /// Sentences of filler making up about `words` words, for sections of a given size.
    fn filler(topic: &str, words: usize) -> String {
        let s = format!("The {topic} work goes on as planned this week. ");
        s.repeat(words / 9 + 1).trim_end().to_owned()
    }

    #[test]
    fn a_passage_never_holds_two_sections_and_carries_the_headings_above_it() {
        // Two short sections would be packed into one passage by size alone.
        let text = format!(
            "# Platform team\n\nDana Ortiz leads the platform team. {}\n\n## Staff\n\nThe team has three engineers: Ali, Bo and Chen.\n",
            filler("platform", 40)
        );
        let passages = chunk_text(&text);
        check(&text, &passages);
        assert_eq!(passages.len(), 2, "{passages:?}");
        assert!(passages[0].text.starts_with("# Platform team") && passages[0].headings.is_empty());
        assert_eq!(passages[1].text, "## Staff\n\nThe team has three engineers: Ali, Bo and Chen.");
        assert_eq!(passages[1].headings, ["Platform team"]);
        assert_eq!(
            passages[1].index_text(),
            "Platform team\n## Staff\n\nThe team has three engineers: Ali, Bo and Chen."
        );
        // A long section cut in two: its second passage sits under the section's path.
        let text = format!("Intro line.\n\n# Guide\n## Setup\n{}\n", filler("setup", 300));
        let passages = chunk_text(&text);
        check(&text, &passages);
        assert_eq!(passages[0].text, "Intro line.");
        assert!(passages[1].text.starts_with("# Guide\n## Setup"), "a heading alone opens no section");
        assert!(passages.len() >= 3);
        assert!(passages[2..].iter().all(|p| p.headings == ["Guide", "Setup"]));
        // Text without headings is cut as before.
        let plain = prose(150, 5);
        assert!(chunk_text(&plain).iter().all(|p| p.headings.is_empty()));
    }

    #[test]
    fn deterministic() {
        let text = prose(150, 11);
        assert_eq!(chunk_text(&text), chunk_text(&text));
        let turns = [("user", text.as_str()), ("assistant", "Ok.")];
        assert_eq!(chunk_messages(&turns), chunk_messages(&turns));
    }

    proptest! {
        #[test]
        fn chunk_text_never_panics_and_covers_the_text(text in any::<String>()) {
            check(&text, &chunk_text(&text));
        }

        #[test]
        fn chunk_text_holds_for_sentence_like_text(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "Mr.", "J.", "word", "Word", "。", "！", "東京", "한국", ".", "!", " ", " ", " ", "\n",
                    "\u{1F469}\u{200D}\u{1F467}", "e\u{301}", "\u{2014}", "(", ")",
                ]),
                0..2_000,
            )
        ) {
            let text = parts.concat();
            let passages = chunk_text(&text);
            check(&text, &passages);
            for p in &passages {
                prop_assert!(word_count(&p.text) <= MAX_WORDS);
            }
        }

        #[test]
        fn chunk_messages_keeps_turns_apart(
            turns in proptest::collection::vec((any::<String>(), any::<String>()), 0..8)
        ) {
            let doc = messages_text(&turns);
            let passages = chunk_messages(&turns);
            check(&doc, &passages);
            prop_assert_eq!(doc.split('\n').count(), turns.len().max(1));
            for p in &passages {
                prop_assert!(!p.text.contains('\n'));
            }
        }
    }
}
