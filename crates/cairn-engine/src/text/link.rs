//! Linking: every entity name that occurs in a text, found with one Aho–Corasick automaton over
//! case-folded names, so the cost grows with the text, not with the number of names.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use unicode_normalization::char::decompose_compatible;
use unicode_segmentation::GraphemeCursor;

use super::is_cjk;
use super::names::{ZWSP, is_diacritic, is_invisible};

/// An entity named in a text, at the code-point span `[start, end)` of that text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mention {
    pub entity: u64,
    pub start: usize,
    pub end: usize,
}

/// An automaton over a set of entity names; see [`Linker::find`] for the matching rules.
#[derive(Debug, Clone)]
pub struct Linker {
    /// `None` when no usable name was given.
    automaton: Option<AhoCorasick>,
    /// Entities of each pattern (one pattern per distinct folded name), sorted and deduplicated.
    entities: Vec<Vec<u64>>,
}

impl Linker {
    /// A linker for `names`, each an entity id and one of its names. Names are trimmed and
    /// case-folded, and runs of whitespace inside them read as one space; names left empty are
    /// ignored. Several entities may share a name, and an entity may have several names.
    #[must_use]
    pub fn new<'a>(names: impl IntoIterator<Item = (u64, &'a str)>) -> Linker {
        Linker::build(names, None)
    }

    /// As [`Linker::new`], with the automaton of `kind` (`None`: chosen by the crate).
    fn build<'a>(names: impl IntoIterator<Item = (u64, &'a str)>, kind: Option<AhoCorasickKind>) -> Linker {
        let mut by_name: HashMap<String, usize> = HashMap::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut entities: Vec<Vec<u64>> = Vec::new();
        for (entity, name) in names {
            for form in [Some(name), unqualified(name)].into_iter().flatten() {
                let folded = fold_name(form);
                if folded.is_empty() {
                    continue;
                }
                let id = *by_name.entry(folded).or_insert_with_key(|folded| {
                    patterns.push(folded.clone());
                    entities.push(Vec::new());
                    patterns.len() - 1
                });
                entities[id].push(entity);
            }
        }
        for ids in &mut entities {
            ids.sort_unstable();
            ids.dedup();
        }
        let automaton = (!patterns.is_empty()).then(|| {
            // Standard semantics, so overlapping search sees every candidate and a rejected long
            // match (`Priya Raman` in `Priya Ramanujan`) cannot hide a valid shorter one.
            AhoCorasick::builder().kind(kind).build(&patterns).expect("the automaton fits its state-id space")
        });
        Linker { automaton, entities }
    }

    /// The heap bytes the linker holds, about: the automaton's and each pattern's entity list.
    #[must_use]
    pub fn bytes(&self) -> usize {
        let lists: usize = self.entities.iter().map(|ids| ids.capacity() * std::mem::size_of::<u64>()).sum();
        self.automaton.as_ref().map_or(0, AhoCorasick::memory_usage)
            + self.entities.capacity() * std::mem::size_of::<Vec<u64>>()
            + lists
    }

    /// Whether the linker holds no name.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.automaton.is_none()
    }

    /// Every occurrence of a name in `text`, ordered by start then entity, one mention per
    /// entity of the name. Rules:
    /// - case-insensitive (per-character lowercase, `İ` as `i`, `ς` as `σ`); whitespace runs in the
    ///   text match the single spaces of a name;
    /// - whole words: no letter, digit or `_` right before or after, unless the neighbour or the
    ///   name's edge character is CJK (those scripts need no spaces); never inside a character's
    ///   fold or a grapheme cluster;
    /// - leftmost, then longest; spans never overlap (entities sharing a name share its span).
    #[must_use]
    pub fn find(&self, text: &str) -> Vec<Mention> {
        let mut candidates = self.candidates(text);
        // Leftmost first, longest first at a start; keep what does not overlap the last kept.
        candidates.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut out = Vec::new();
        let mut last: Option<(usize, usize)> = None;
        for (start, end, pattern) in candidates {
            if last.is_some_and(|(s, e)| start < e && (s, e) != (start, end)) {
                continue;
            }
            last = Some((start, end));
            out.extend(self.entities[pattern].iter().map(|&entity| Mention { entity, start, end }));
        }
        out.sort_unstable_by_key(|m| (m.start, m.entity));
        out.dedup();
        out
    }
}

impl Linker {
    /// The entities with a name that occurs in `text`, each name judged alone as
    /// [`mentions_name`] judges one (a name inside another's occurrence still occurs), sorted.
    #[must_use]
    pub fn named_in(&self, text: &str) -> Vec<u64> {
        let mut out: Vec<u64> =
            self.candidates(text).into_iter().flat_map(|(_, _, p)| self.entities[p].iter().copied()).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every whole-word occurrence of a name in `text` as `(start, end, pattern)`, overlapping
    /// ones included: each name's occurrences whatever the others' (`find` then picks among them).
    fn candidates(&self, text: &str) -> Vec<(usize, usize, usize)> {
        let Some(automaton) = &self.automaton else {
            return Vec::new();
        };
        let folded = Folded::new(text);
        let mut candidates: Vec<(usize, usize, usize)> = Vec::new();
        for m in automaton.find_overlapping_iter(folded.text.as_str()) {
            if !(folded.is_boundary(m.start()) && folded.is_boundary(m.end())) {
                continue;
            }
            let start = folded.owner[m.start()];
            // The first character after the match: diacritics dropped from its last letter
            // (`Rene\u{301}`) belong to it.
            let end = folded.owner[m.end()];
            if folded.whole_word(text, start, end) {
                candidates.push((start, end, m.pattern().as_usize()));
            }
        }
        candidates
    }
}

/// A name without its trailing parenthetical qualifier: "Dark River (2017 film)" → "Dark River".
/// Titles carry such qualifiers to tell namesakes apart, and texts name them without it, so a
/// qualified name also matches its bare form (namesakes then share the mention). `None` when the
/// name has no qualifier or nothing would be left.
fn unqualified(name: &str) -> Option<&str> {
    let trimmed = name.trim_end();
    let open = trimmed.strip_suffix(')')?.rfind(" (")?;
    let base = trimmed[..open].trim_end();
    (base.chars().count() >= 2 && !base.contains(['(', ')'])).then_some(base)
}

/// Whether `name` occurs in `text` under the rules of [`Linker::find`]: the check for a
/// user-supplied mention. An empty or whitespace-only name occurs nowhere.
#[must_use]
pub fn mentions_name(text: &str, name: &str) -> bool {
    absent_mention(text, &[name]).is_none()
}

/// The first of `names` that does not occur in `text` by [`mentions_name`]'s rule, each judged
/// alone (one name inside another's occurrence still occurs), or `None` when every one does. One
/// automaton and one folding of the text serve every name: built per name, a DFA for a 1 KiB
/// name took 6 ms, so a passage of 1,000 such mentions took 6 s (found by an audit: a call of
/// 1,000 rejected passages with 1 KiB mentions took 18 s). A contiguous NFA is built in time
/// linear in the names, whatever their number and length.
#[must_use]
pub fn absent_mention<'a, S: AsRef<str>>(text: &str, names: &'a [S]) -> Option<&'a str> {
    let ids = (0u64..).zip(names.iter().map(AsRef::as_ref));
    let found = Linker::build(ids, Some(AhoCorasickKind::ContiguousNFA)).named_in(text);
    (0u64..).zip(names).find(|(i, _)| found.binary_search(i).is_err()).map(|(_, n)| n.as_ref())
}

/// The matching form of one character: compatibility-decomposed and lowercased, with generic
/// diacritics dropped (so `Malmö`, `Malmo` and NFD `Malmo\u{308}` meet, and full-width
/// `Ｐｒｉｙａ` meets `Priya`, as `fold` has them meet in name lookups), dotted capital I as plain
/// `i` (so `İstanbul` and `ISTANBUL` meet) and final sigma as `σ` (its position decides its
/// form). A space a decomposition gives (`¨` is a space and a diaeresis) is dropped: only the
/// text's own whitespace separates words.
fn fold_char(c: char, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    if is_invisible(c) {
        // Matched as it shows, as `fold` does: not at all.
        return;
    }
    match c {
        '\u{130}' => out.push('i'),
        'ς' => out.push('σ'),
        _ => decompose_compatible(c, |d| {
            if !is_diacritic(d) && !d.is_whitespace() {
                out.extend(d.to_lowercase());
            }
        }),
    }
}

/// Whether `c` parts words: whitespace, or the zero-width space (`fold` reads it as a space).
fn is_space(c: char) -> bool {
    c.is_whitespace() || c == ZWSP
}

/// The matching form of a name: trimmed, folded, whitespace runs as one space.
fn fold_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for word in name.split(is_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        word.chars().for_each(|c| fold_char(c, &mut out));
    }
    // A last word of diacritics alone (`ann \u{307}`) folds to nothing: no space is left for it,
    // or the name would only match text followed by whitespace.
    out.truncate(out.trim_end().len());
    out
}

/// A text in matching form, mapped back to the original.
struct Folded {
    /// Folded characters; each whitespace run of the original is one space.
    text: String,
    /// For each byte of `text` (and one past the end), the code-point index in the original of
    /// the character it came from (the first of a whitespace run); past the end: the char count.
    owner: Vec<usize>,
    /// Byte offset in the original of each character, and the length at the end.
    bytes: Vec<usize>,
    /// The original characters.
    chars: Vec<char>,
}

impl Folded {
    fn new(original: &str) -> Folded {
        let mut text = String::with_capacity(original.len());
        let mut owner = Vec::with_capacity(original.len() + 1);
        let mut bytes = Vec::with_capacity(original.len() + 1);
        let mut chars = Vec::with_capacity(original.len());
        let mut in_space = false;
        for (i, (b, c)) in original.char_indices().enumerate() {
            bytes.push(b);
            chars.push(c);
            if is_space(c) {
                if !in_space {
                    text.push(' ');
                }
                in_space = true;
            } else {
                fold_char(c, &mut text);
                in_space = false;
            }
            owner.resize(text.len(), i);
        }
        bytes.push(original.len());
        owner.push(chars.len());
        Folded { text, owner, bytes, chars }
    }

    /// Whether folded byte `b` starts the fold of an original character (or is the end).
    fn is_boundary(&self, b: usize) -> bool {
        b == 0 || self.owner[b] != self.owner[b - 1]
    }

    /// Whether the original span `[start, end)` (non-empty, on character boundaries) stands as a
    /// whole word: see [`Linker::find`].
    fn whole_word(&self, original: &str, start: usize, end: usize) -> bool {
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let apart = |outside: char, edge: char| !is_word(outside) || is_cjk(outside) || is_cjk(edge);
        let left = start == 0 || apart(self.chars[start - 1], self.chars[start]);
        let right = end == self.chars.len() || apart(self.chars[end], self.chars[end - 1]);
        left && right && self.grapheme_boundary(original, start) && self.grapheme_boundary(original, end)
    }

    fn grapheme_boundary(&self, original: &str, at: usize) -> bool {
        let mut cursor = GraphemeCursor::new(self.bytes[at], original.len(), true);
        // The whole text is the chunk, so the cursor never asks for more context.
        cursor.is_boundary(original, 0).unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qualified_name_also_matches_its_bare_form() {
        let l = Linker::new([(1, "Dark River (2017 film)"), (2, "Dark River (1990 film)"), (3, "(x)")]);
        let found: Vec<u64> = l.find("Dark River is a drama.").into_iter().map(|m| m.entity).collect();
        assert_eq!(found, vec![1, 2], "namesakes share the bare mention");
        let found: Vec<u64> = l.find("in Dark River (2017 film) she").into_iter().map(|m| m.entity).collect();
        assert_eq!(found, vec![1], "the full name wins where it is written");
        assert_eq!(unqualified("Lothair II"), None);
        assert_eq!(unqualified("A (b) (c)"), None);
        assert_eq!(unqualified("Come Dance with Me (song)"), Some("Come Dance with Me"));
    }
    use crate::text::char_slice;
    use proptest::prelude::*;

    /// Mentions of `names` in `text`, checking every span: in order, in bounds, non-overlapping,
    /// slicing back to text whose fold is the fold of one of that entity's names.
    fn find(names: &[(u64, &str)], text: &str) -> Vec<Mention> {
        let out = Linker::new(names.iter().copied()).find(text);
        check(names, text, &out);
        out
    }

    fn check(names: &[(u64, &str)], text: &str, out: &[Mention]) {
        let len = text.chars().count();
        let mut folded_names: HashMap<u64, Vec<String>> = HashMap::new();
        for &(id, name) in names {
            folded_names.entry(id).or_default().push(fold_name(name));
        }
        let chars: Vec<char> = text.chars().collect();
        let mut prev: Option<Mention> = None;
        for m in out {
            assert!(m.start < m.end && m.end <= len, "{m:?} in {len} chars");
            if let Some(p) = prev {
                let same_span = (p.start, p.end) == (m.start, m.end);
                assert!(same_span && p.entity < m.entity || p.end <= m.start, "{out:?}");
            }
            let slice: String = chars[m.start..m.end].iter().collect();
            // `char_slice` walks from the start; the large test checks it on a sample.
            if len <= 10_000 || m.start % 97 == 0 {
                assert_eq!(char_slice(text, m.start, m.end), Some(slice.as_str()));
            }
            let folded = fold_name(&slice);
            assert!(folded_names.get(&m.entity).is_some_and(|f| f.contains(&folded)), "{m:?} slices to {slice:?}");
            prev = Some(*m);
        }
    }

    /// `(entity, slice)` of each mention.
    fn spans<'t>(text: &'t str, out: &[Mention]) -> Vec<(u64, &'t str)> {
        out.iter().map(|m| (m.entity, char_slice(text, m.start, m.end).unwrap())).collect()
    }

    #[test]
    fn case_insensitive() {
        let names = [(7, "Priya Raman")];
        let text = "PRIYA RAMAN met priya raman and PrIyA rAmAn.";
        let out = find(&names, text);
        assert_eq!(spans(text, &out), [(7, "PRIYA RAMAN"), (7, "priya raman"), (7, "PrIyA rAmAn")]);
        assert_eq!(out[0], Mention { entity: 7, start: 0, end: 11 });
        assert_eq!(find(&[(1, "ЖАННА")], "Жанна пришла"), [Mention { entity: 1, start: 0, end: 5 }]);
    }

    #[test]
    fn whole_words_only() {
        let names = [(1, "Ann")];
        assert!(find(&names, "Annual Annals of Joanne, ANNA, Ann2, Ann_b, _Ann, 2Ann").is_empty());
        let text = "Ann's friend (Ann) said \"ann\"; Ann-Marie.";
        assert_eq!(spans(text, &find(&names, text)), [(1, "Ann"), (1, "Ann"), (1, "ann"), (1, "Ann")]);
        assert_eq!(find(&names, "Ann"), [Mention { entity: 1, start: 0, end: 3 }]);
    }

    #[test]
    fn longest_match_wins() {
        let names = [(1, "Priya"), (2, "Priya Raman"), (3, "Raman")];
        let text = "Priya Raman met Priya. Raman left. Priya Ramanujan too.";
        let out = find(&names, text);
        assert_eq!(spans(text, &out), [(2, "Priya Raman"), (1, "Priya"), (3, "Raman"), (1, "Priya")]);
        assert_eq!(out[0], Mention { entity: 2, start: 0, end: 11 });
        // Leftmost beats longest: `New York City` starts later than `Old New`.
        let names = [(1, "Old New"), (2, "New York City")];
        assert_eq!(spans("Old New York City", &find(&names, "Old New York City")), [(1, "Old New")]);
    }

    #[test]
    fn cjk_names_need_no_spaces() {
        let names = [(1, "東京"), (2, "東京都"), (3, "김철수"), (4, "Google"), (5, "タワー")];
        let text = "私は東京都に住んでいる。東京タワーは高い。김철수가 왔다. 在Google工作";
        let out = find(&names, text);
        assert_eq!(spans(text, &out), [(2, "東京都"), (1, "東京"), (5, "タワー"), (3, "김철수"), (4, "Google")]);
        assert_eq!((out[0].start, out[0].end), (2, 5));
        // Latin names still need their word boundaries on the Latin side.
        assert!(find(&[(4, "Google")], "在Googleplex").is_empty());
    }

    #[test]
    fn offsets_survive_emoji_marks_and_folds() {
        let names = [(1, "Istanbul"), (2, "stra\u{df}e"), (3, "Ann"), (4, "Caf\u{e9}"), (5, "Cafe\u{301}"), (6, "i")];
        let text = "\u{1F469}\u{200D}\u{1F467} \u{130}STANBUL, STRA\u{1E9E}E e\u{301} Ann! Cafe\u{301} Caf\u{e9} \u{130} \u{1F600}Ann";
        let out = find(&names, text);
        assert_eq!(
            spans(text, &out),
            [
                (1, "\u{130}STANBUL"),
                (2, "STRA\u{1E9E}E"),
                (3, "Ann"),
                // Canonically equivalent names meet in either spelling.
                (4, "Cafe\u{301}"),
                (5, "Cafe\u{301}"),
                (4, "Caf\u{e9}"),
                (5, "Caf\u{e9}"),
                (6, "\u{130}"),
                (3, "Ann")
            ]
        );
        assert_eq!(out[0], Mention { entity: 1, start: 4, end: 12 });
        // Diacritics are dropped for matching, and a name's span takes in the marks of its last
        // letter: it never ends inside a grapheme cluster.
        assert_eq!(find(&[(1, "Jose")], "Jose\u{301} came"), [Mention { entity: 1, start: 0, end: 5 }]);
        assert_eq!(find(&[(1, "Malm\u{f6}")], "in Malmo and Malmo\u{308}.").len(), 2);
        assert_eq!(find(&[(1, "e")], "e\u{301}"), [Mention { entity: 1, start: 0, end: 2 }]);
        assert!(find(&[(1, "\u{1F469}")], "\u{1F469}\u{200D}\u{1F467}").is_empty());
        assert!(find(&[(1, "\u{1F469}")], "a \u{1F469} b").len() == 1);
        // Compatibility forms meet their plain letters (found by an audit: a subject forget missed
        // a passage writing the name in full-width letters).
        let text = "\u{ff30}\u{ff52}\u{ff49}\u{ff59}\u{ff41}\u{3000}\u{ff32}\u{ff41}\u{ff4d}\u{ff41}\u{ff4e} called";
        assert_eq!(find(&[(1, "Priya Raman")], text), [Mention { entity: 1, start: 0, end: 11 }]);
        assert!(find(&[(1, "Priya")], "\u{ff30}\u{ff52}\u{ff49}\u{ff59}\u{ff41}\u{ff4e}\u{ff4b}\u{ff41}").is_empty());
        assert!(find(&[(1, "a b")], "a\u{a8}b").is_empty(), "a decomposition's space separates no words");
        // `ß` is lowercase already; full folding (`ss`) is not applied.
        assert!(find(&[(1, "STRASSE")], "Stra\u{df}e").is_empty());
        // Final sigma folds like medial sigma.
        let text = "\u{39f}\u{3b4}\u{3c5}\u{3c3}\u{3c3}\u{3b5}\u{3cd}\u{3c2} sailed";
        assert_eq!(find(&[(1, "\u{39f}\u{394}\u{3a5}\u{3a3}\u{3a3}\u{395}\u{38e}\u{3a3}")], text).len(), 1);
    }

    #[test]
    fn whitespace_runs_match_one_space() {
        let names = [(1, "  Priya \t Raman ")];
        let text = "Met Priya\n\t Raman\u{a0}today; Priya Raman.";
        let out = find(&names, text);
        assert_eq!(spans(text, &out), [(1, "Priya\n\t Raman"), (1, "Priya Raman")]);
        assert_eq!((out[0].start, out[0].end), (4, 17));
        assert!(find(&names, "PriyaRaman").is_empty());
    }

    #[test]
    fn shared_names_report_every_entity() {
        let names = [(2, "Ann"), (1, "ann"), (2, "ANN"), (3, "Bob"), (1, "Annie")];
        let text = "Ann met Annie and Bob.";
        let out = find(&names, text);
        assert_eq!(
            out,
            [
                Mention { entity: 1, start: 0, end: 3 },
                Mention { entity: 2, start: 0, end: 3 },
                Mention { entity: 1, start: 8, end: 13 },
                Mention { entity: 3, start: 18, end: 21 },
            ]
        );
    }

    #[test]
    fn empty_names_are_ignored() {
        let linker = Linker::new([(1, ""), (2, "  "), (3, "\n\t")]);
        assert!(linker.is_empty());
        assert!(linker.find("anything at all   ").is_empty());
        let linker = Linker::new(Vec::<(u64, &str)>::new());
        assert!(linker.is_empty() && linker.find("").is_empty());
        assert!(!Linker::new([(1, " x ")]).is_empty());
        assert!(find(&[(1, "x")], "").is_empty());
    }

    #[test]
    fn mentions_name_checks_one_name() {
        assert!(mentions_name("I met PRIYA yesterday", "Priya"));
        assert!(mentions_name("I met Priya  Raman", "priya raman"));
        assert!(mentions_name("東京都に住む", "東京"));
        assert!(!mentions_name("Annual report", "Ann"));
        assert!(!mentions_name("Priya", ""));
        assert!(!mentions_name("  ", " "));
        assert!(!mentions_name("", "Priya"));
    }

    #[test]
    fn absent_mention_judges_each_name_alone() {
        let text = "Priya Raman met the Dark River crew";
        // `Priya` lies inside `Priya Raman`'s occurrence and still occurs; a qualified name occurs by its bare form.
        assert_eq!(absent_mention(text, &["Priya Raman", "priya", "Dark River (2017 film)"]), None);
        assert_eq!(absent_mention(text, &["Priya", "Raman", "Ram", "Dark"]), Some("Ram"));
        assert_eq!(absent_mention(text, &["", "Priya"]), Some(""));
        assert_eq!(absent_mention(text, &[] as &[&str]), None);
        let long = "M".repeat(1000);
        let names: Vec<String> = (0..1000).map(|_| long.clone()).collect();
        assert_eq!(absent_mention(&format!("{long} wrote"), &names), None);
    }

    /// A deterministic generator of pseudo-words.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, m: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % m
        }

        fn word(&mut self) -> String {
            const SYLLABLES: [&str; 16] =
                ["ka", "ro", "mi", "tel", "an", "su", "vo", "ri", "den", "la", "po", "zu", "ne", "ha", "gi", "bo"];
            let n = 2 + self.next(3);
            let mut w: String = (0..n).map(|_| SYLLABLES[self.next(16) as usize]).collect();
            if self.next(2) == 0 {
                w[..1].make_ascii_uppercase();
            }
            w
        }

        /// Two or three words; one name in ten is a single word.
        fn name(&mut self) -> String {
            let n = if self.next(10) == 0 { 1 } else { 2 + self.next(2) };
            (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
        }
    }

    #[test]
    fn scale_100k_names_100kb_text() {
        let mut g = Gen(42);
        let owned: Vec<(u64, String)> = (0..100_000).map(|i| (i, g.name())).collect();
        let names: Vec<(u64, &str)> = owned.iter().map(|(i, n)| (*i, n.as_str())).collect();

        let mut text = String::new();
        let mut chars = 0;
        let mut planted = Vec::new();
        while text.len() < 100_000 {
            if g.next(8) == 0 {
                let (id, name) = names[g.next(names.len() as u64) as usize];
                text.push_str("; ");
                planted.push((id, chars + 2, chars + 2 + name.chars().count()));
                text.push_str(name);
                text.push_str("; ");
            } else {
                text.push_str(&g.word());
                text.push(' ');
            }
            chars = text.chars().count();
        }

        let t0 = std::time::Instant::now();
        let linker = Linker::new(names.iter().copied());
        let built = t0.elapsed();
        let t1 = std::time::Instant::now();
        let out = linker.find(&text);
        let searched = t1.elapsed();
        eprintln!(
            "link scale: {} names built in {built:?}; {} bytes searched in {searched:?}; {} mentions",
            names.len(),
            text.len(),
            out.len()
        );
        check(&names, &text, &out);
        let found: std::collections::HashSet<Mention> = out.iter().copied().collect();
        for &(entity, start, end) in &planted {
            assert!(found.contains(&Mention { entity, start, end }), "planted {entity} at {start}..{end} not found");
        }
        assert!(out.len() >= planted.len());
    }

    /// Leftmost-longest by brute force: every span whose fold is a name's fold and that passes
    /// the boundary rules, then the greedy pick.
    fn reference(names: &[(u64, &str)], text: &str) -> Vec<Mention> {
        let folded = Folded::new(text);
        let n = folded.chars.len();
        let mut out: Vec<Mention> = Vec::new();
        let mut i = 0;
        while i < n {
            let mut found = None;
            for j in (i + 1..=n).rev() {
                let slice: String = folded.chars[i..j].iter().collect();
                let f = fold_name(&slice);
                let ids: Vec<u64> =
                    names.iter().filter(|(_, name)| !f.is_empty() && fold_name(name) == f).map(|&(id, _)| id).collect();
                // A span never starts with a dropped diacritic: it belongs to what precedes it.
                if !ids.is_empty()
                    && !fold_name(&folded.chars[i].to_string()).is_empty()
                    && !folded.chars[i].is_whitespace()
                    && !folded.chars[j - 1].is_whitespace()
                    // Nor ends with a word of diacritics alone: they belong to the space before them.
                    && slice.split_whitespace().last().is_some_and(|w| !fold_name(w).is_empty())
                    && folded.whole_word(text, i, j)
                {
                    found = Some((j, ids));
                    break;
                }
            }
            if let Some((j, mut ids)) = found {
                ids.sort_unstable();
                ids.dedup();
                out.extend(ids.into_iter().map(|entity| Mention { entity, start: i, end: j }));
                i = j;
            } else {
                i += 1;
            }
        }
        out
    }

    proptest! {
        #[test]
        fn find_never_panics(
            names in proptest::collection::vec((0u64..5, any::<String>()), 0..6),
            text in any::<String>(),
        ) {
            let names: Vec<(u64, &str)> = names.iter().map(|(i, n)| (*i, n.as_str())).collect();
            let out = find(&names, &text);
            for &(_, name) in &names {
                prop_assert!(!mentions_name(&text, name) || !out.is_empty());
            }
        }

        #[test]
        fn find_agrees_with_brute_force(
            names in proptest::collection::vec(
                (0u64..4, proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 1..4)),
                0..6,
            ),
            text in proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 0..40),
        ) {
            let names: Vec<(u64, String)> = names.into_iter().map(|(i, p)| (i, p.concat())).collect();
            let names: Vec<(u64, &str)> = names.iter().map(|(i, n)| (*i, n.as_str())).collect();
            let text = text.concat();
            prop_assert_eq!(find(&names, &text), reference(&names, &text));
        }
    }

    const PIECES: [&str; 20] = [
        "ann",
        "Ann",
        "a",
        "A",
        "n",
        " ",
        "  ",
        "\n",
        ".",
        "_",
        "1",
        "東",
        "京",
        "\u{130}",
        "i",
        "\u{307}",
        "e\u{301}",
        "\u{301}",
        "\u{1F469}",
        "\u{200D}",
    ];
}
