//! The language a question is asked in, read from its function words, for the three things
//! grounding reads word by word (`context::content_words`, `grounding_rules`, `foreign_stems`):
//! - which words only shape the question: "Où", "Wo", "¿Dónde" are no more content than "Where"
//!   (found in QA: "Où travaille Jonas Berg ?" left "Où" uncovered beside "Jonas Berg travaille
//!   chez Globex", and the verdict was `related`);
//! - whether word order places a name before or after a relation word: English questions put the
//!   subject first or after an auxiliary, while French, German, Spanish, Italian, Portuguese and
//!   Arabic questions put the verb first ("Wo arbeitet Lena Vogel?"), so the English reading took
//!   Lena Vogel for the object of "arbeitet" and the passage saying she works there for one that
//!   says the relation the other way round;
//! - which stemmer compares its words, beside the English one (`foreign_stems`).
//!
//! A question is read as one of these languages when more of its words are that language's
//! function words than English ones (ties are English, as every question was read before).

use super::context::is_english_function_word;
use crate::text::fold;
use std::collections::HashSet;
use std::sync::LazyLock;
use unicode_segmentation::UnicodeSegmentation;

/// Question words, articles, pronouns, auxiliaries, prepositions and conjunctions, as written
/// (folded before use, so accents and case do not matter). Negations are left out: they are
/// content, as English ones are.
const FRENCH: &[&str] = &[
    "qui",
    "que",
    "quoi",
    "où",
    "quand",
    "comment",
    "pourquoi",
    "quel",
    "quelle",
    "quels",
    "quelles",
    "lequel",
    "laquelle",
    "combien",
    "qu",
    "est",
    "sont",
    "était",
    "ce",
    "c",
    "le",
    "la",
    "les",
    "l",
    "un",
    "une",
    "des",
    "du",
    "de",
    "d",
    "a",
    "ont",
    "il",
    "elle",
    "ils",
    "elles",
    "je",
    "j",
    "tu",
    "nous",
    "vous",
    "on",
    "mon",
    "ma",
    "mes",
    "son",
    "sa",
    "ses",
    "leur",
    "leurs",
    "dans",
    "chez",
    "pour",
    "avec",
    "sur",
    "par",
    "en",
    "au",
    "aux",
    "et",
    "ou",
    "s",
    "actuellement",
];

const GERMAN: &[&str] = &[
    "wer", "was", "wo", "wann", "warum", "wieso", "weshalb", "wie", "welche", "welcher", "welches", "welchen", "wem",
    "wen", "wessen", "woher", "wohin", "womit", "wofür", "woran", "worüber", "ist", "sind", "war", "waren", "hat",
    "haben", "hatte", "wird", "werden", "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem",
    "einer", "eines", "und", "oder", "im", "am", "bei", "beim", "mit", "von", "vom", "zu", "zum", "zur", "für", "auf",
    "aus", "über", "ich", "du", "er", "sie", "es", "wir", "ihr", "mir", "mich", "uns", "sein", "seine", "ihre",
    "bitte", "derzeit", "aktuell",
];

const SPANISH: &[&str] = &[
    "qué",
    "quién",
    "quiénes",
    "dónde",
    "cuándo",
    "cómo",
    "por",
    "cuál",
    "cuáles",
    "cuánto",
    "cuántos",
    "cuánta",
    "cuántas",
    "el",
    "la",
    "los",
    "las",
    "un",
    "una",
    "unos",
    "unas",
    "de",
    "del",
    "al",
    "en",
    "con",
    "para",
    "y",
    "o",
    "es",
    "son",
    "está",
    "están",
    "era",
    "fue",
    "ha",
    "han",
    "su",
    "sus",
    "mi",
    "me",
    "te",
    "se",
    "lo",
    "le",
    "les",
    "que",
    "él",
    "ella",
    "ellos",
    "ellas",
    "actualmente",
];

const ITALIAN: &[&str] = &[
    "chi",
    "che",
    "cosa",
    "dove",
    "quando",
    "come",
    "perché",
    "quale",
    "quali",
    "quanto",
    "quanti",
    "il",
    "lo",
    "la",
    "i",
    "gli",
    "le",
    "l",
    "un",
    "uno",
    "una",
    "di",
    "del",
    "della",
    "dei",
    "delle",
    "a",
    "al",
    "alla",
    "da",
    "dal",
    "in",
    "nel",
    "nella",
    "con",
    "su",
    "per",
    "e",
    "o",
    "è",
    "sono",
    "era",
    "ha",
    "hanno",
    "suo",
    "sua",
    "suoi",
    "lui",
    "lei",
    "attualmente",
];

const PORTUGUESE: &[&str] = &[
    "quem",
    "que",
    "onde",
    "quando",
    "como",
    "porque",
    "qual",
    "quais",
    "quanto",
    "quantos",
    "o",
    "os",
    "a",
    "as",
    "um",
    "uma",
    "de",
    "do",
    "da",
    "dos",
    "das",
    "em",
    "no",
    "na",
    "nos",
    "nas",
    "com",
    "para",
    "por",
    "e",
    "ou",
    "é",
    "são",
    "está",
    "estão",
    "foi",
    "era",
    "tem",
    "têm",
    "seu",
    "sua",
    "ele",
    "ela",
    "eles",
    "elas",
    "atualmente",
];

const ARABIC: &[&str] = &[
    "من",
    "ما",
    "ماذا",
    "أين",
    "متى",
    "كيف",
    "لماذا",
    "هل",
    "كم",
    "أي",
    "في",
    "على",
    "إلى",
    "عن",
    "مع",
    "هو",
    "هي",
    "هم",
    "وهو",
    "وهي",
    "التي",
    "الذي",
    "حاليا",
];

/// The languages a question may be read as besides English: their function words and the
/// Snowball stemmer grounding compares their words with (`foreign_stems`).
const LANGUAGES: &[(&[&str], Language)] = &[
    (FRENCH, Language::French),
    (GERMAN, Language::German),
    (SPANISH, Language::Spanish),
    (ITALIAN, Language::Italian),
    (PORTUGUESE, Language::Portuguese),
    (ARABIC, Language::Arabic),
];

/// A language a question is read as, other than English.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Language {
    French,
    German,
    Spanish,
    Italian,
    Portuguese,
    Arabic,
}

/// Each language's function words, folded.
static FOLDED: LazyLock<Vec<(HashSet<String>, Language)>> = LazyLock::new(|| {
    LANGUAGES.iter().map(|(words, language)| (words.iter().map(|w| fold(w)).collect(), *language)).collect()
});

/// Whether `lower` (a lowercased word) is in `set`, or is elided and every piece around its
/// apostrophes is ("qu'est" → "qu", "est"; not "l'équipe": "équipe" is content).
fn in_set(lower: &str, set: &HashSet<String>) -> bool {
    Folded::of(lower).is_in(set)
}

/// A word folded once, whole and in the pieces around its apostrophes (none unless elided), so a
/// question is weighed against every language without folding its words again for each.
struct Folded {
    whole: String,
    pieces: Vec<String>,
}

impl Folded {
    fn of(lower: &str) -> Folded {
        let pieces: Vec<&str> = lower.split(['\'', '\u{2019}']).filter(|p| !p.is_empty()).collect();
        let pieces = if pieces.len() > 1 { pieces.into_iter().map(fold).collect() } else { Vec::new() };
        Folded { whole: fold(lower), pieces }
    }

    /// `in_set` of the word.
    fn is_in(&self, set: &HashSet<String>) -> bool {
        set.contains(&self.whole) || (!self.pieces.is_empty() && self.pieces.iter().all(|p| set.contains(p)))
    }
}

/// How a question is read, weighed once from its words: grounding judges every item (and every
/// sentence of a passage) against one question, so it is read once for them all.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading {
    /// The language read, when it is not English: more of the question's words are its function
    /// words than English ones.
    foreign: Option<(&'static HashSet<String>, Language)>,
    /// Whether English word order can be read off the question: it holds no other language's
    /// function word, or more English ones. A tie is not sound enough to judge by: "Was leitet
    /// Lena Vogel?" ("was" is German and English) asks what she leads, verb first.
    pub(super) english_order: bool,
}

impl Reading {
    /// How `question` reads: its English function words against the language with the most of
    /// its own (the first of equals).
    pub(super) fn of(question: &str) -> Reading {
        #[cfg(test)]
        WEIGHED.with(|n| n.set(n.get() + 1));
        let words: Vec<String> = question.unicode_words().map(|w| w.to_lowercase().replace('\u{2019}', "'")).collect();
        let english = words.iter().filter(|w| is_english_function_word(w)).count();
        let folded: Vec<Folded> = words.iter().map(|w| Folded::of(w)).collect();
        let mut best = (&FOLDED[0], 0);
        for language in FOLDED.iter() {
            let n = folded.iter().filter(|w| w.is_in(&language.0)).count();
            if n > best.1 {
                best = (language, n);
            }
        }
        let (language, count) = best;
        Reading {
            foreign: (count > english).then_some((&language.0, language.1)),
            english_order: count == 0 || english > count,
        }
    }

    /// The language the question is read as, when not English.
    pub(super) fn language(&self) -> Option<Language> {
        self.foreign.map(|(_, language)| language)
    }

    /// Whether `word` of the question (lowercased) only shapes it, in the language it is read as
    /// (English function words are `context`'s).
    pub(super) fn is_foreign_function_word(&self, word: &str) -> bool {
        self.foreign.is_some_and(|(set, _)| in_set(word, set))
    }
}

#[cfg(test)]
thread_local! {
    /// How many times a question was weighed on this thread (`Reading::of`): tests count it.
    pub(super) static WEIGHED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_read_as_the_language_most_of_its_function_words_are() {
        for q in [
            "Où travaille Jonas Berg ?",
            "Wo arbeitet Lena Vogel?",
            "¿Dónde trabaja Carlos Ruiz?",
            "Dove lavora Marco Bianchi?",
            "Onde trabalha João Silva?",
            "أين تعمل بريا رامان؟",
            "Qu'est-ce que Jonas Berg dirige ?",
        ] {
            assert!(!Reading::of(q).english_order, "{q}");
        }
        // English, and ties, read as English: "die" and "was" are English words too.
        for q in [
            "Where does Priya Raman work?",
            "When did the old server die?",
            "What was the deadline?",
            "Lumen project",
            "Who leads Acme in Berlin?",
        ] {
            assert!(Reading::of(q).english_order, "{q}");
        }
    }

    #[test]
    fn an_elided_word_is_a_function_word_when_its_pieces_are() {
        let french = Reading::of("Qu'est-ce que Jonas Berg dirige ?");
        assert_eq!(french.language(), Some(Language::French));
        assert!(french.is_foreign_function_word("qu'est"));
        assert!(!french.is_foreign_function_word("l'équipe"), "\"équipe\" is content");
        assert!(!french.is_foreign_function_word("dirige"));
        let english = Reading::of("Where does Jonas Berg work?");
        assert!(!english.is_foreign_function_word("où"), "an English question has no foreign words");
        assert_eq!(english.language(), None);
    }
}
