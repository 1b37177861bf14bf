//! Stems of a question read in another language than English (`question_language`), so that
//! another form of its verb covers it: index terms are stemmed in English only, which leaves
//! Spanish "trabajan" uncovered by "Ana Costa trabaja en Umbrella", as German "arbeiten" by
//! "arbeitet", French "travaillent" by "travaille", Italian "lavorano" by "lavora", Portuguese
//! "trabalham" by "trabalha" and Arabic "يعمل" by "تعمل" (found in QA). The English comparison
//! still holds beside this one.
//!
//! A word's keys are its Snowball stem in the question's language and, where Snowball leaves a
//! verb's person ending on (it stems mostly nouns for French and German, and strips no Arabic
//! prefix), that stem less the ending: French "-ent", German "-et" or "-t", Arabic's present tense
//! prefixes "ي", "ت", "ن" (then marked, so a bare word never meets a stripped one). A question
//! word is covered by an item's word sharing a key of at least `MIN_KEY` letters: a wrong
//! `grounded` is worse than a wrong `related`, and short stems join different words (Spanish
//! "casa", a house, and "casan", they marry, both stem to "cas"; Italian "lava", washes, is not
//! "lavorano"), so "vive" and "viven" stay apart too.

use super::asked_time::TIMED;
use super::grounding_rules::NEGATED;
use super::question_language::Language;
use crate::text::fold;
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::{BTreeSet, HashMap};
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

/// The fewest letters a key must hold to join two words.
const MIN_KEY: usize = 4;

/// Marks an Arabic key whose present tense prefix was taken off.
const PREFIX_TAKEN: char = '-';

/// The question's content words by their keys, in the language it is read as (none in English).
pub(super) struct ForeignStems {
    language: Option<(Language, Stemmer)>,
    /// Key → the matching terms of the question words that have it.
    by_key: HashMap<String, Vec<String>>,
}

impl ForeignStems {
    /// The keys of `asked` (content words and their matching terms) in `language`. A negation or
    /// an asked time stands for no word: they have no key.
    pub(super) fn new(language: Option<Language>, asked: &[(String, Vec<String>)]) -> ForeignStems {
        let language = language.map(|l| (l, Stemmer::create(algorithm(l))));
        let mut by_key: HashMap<String, Vec<String>> = HashMap::new();
        if let Some((language, stemmer)) = &language {
            for (word, terms) in asked.iter().filter(|(_, t)| !t.iter().any(|t| t == NEGATED || t == TIMED)) {
                for key in keys(*language, stemmer, word) {
                    by_key.entry(key).or_default().extend(terms.iter().cloned());
                }
            }
        }
        ForeignStems { language, by_key }
    }

    /// Adds to `have` (the terms `text` covers) the terms of each question word that a word of
    /// `text` shares a key with.
    pub(super) fn extend(&self, text: &str, have: &mut BTreeSet<String>) {
        let Some((language, stemmer)) = &self.language else { return };
        if self.by_key.is_empty() {
            return;
        }
        for word in text.replace('_', " ").unicode_words() {
            for key in keys(*language, stemmer, word) {
                if let Some(terms) = self.by_key.get(&key) {
                    have.extend(terms.iter().cloned());
                }
            }
        }
    }
}

fn algorithm(language: Language) -> Algorithm {
    match language {
        Language::French => Algorithm::French,
        Language::German => Algorithm::German,
        Language::Spanish => Algorithm::Spanish,
        Language::Italian => Algorithm::Italian,
        Language::Portuguese => Algorithm::Portuguese,
        Language::Arabic => Algorithm::Arabic,
    }
}

/// The keys of `word` in `language`, each of at least `MIN_KEY` letters: its stem (stemmed as
/// spelled, accents and all, as Snowball expects; then folded, as index terms are), and that
/// stem less a person ending or prefix Snowball leaves.
fn keys(language: Language, stemmer: &Stemmer, word: &str) -> Vec<String> {
    let lower: String = word.to_lowercase().nfc().collect();
    let stem = fold(&stemmer.stem(&lower));
    let less = match language {
        Language::French => stem.strip_suffix("ent").map(str::to_owned),
        Language::German => stem.strip_suffix("et").or_else(|| stem.strip_suffix('t')).map(str::to_owned),
        Language::Arabic => stem.strip_prefix(['ي', 'ت', 'ن']).map(|rest| format!("{PREFIX_TAKEN}{rest}")),
        Language::Spanish | Language::Italian | Language::Portuguese => None,
    };
    [Some(stem), less].into_iter().flatten().filter(|k| k.chars().count() >= MIN_KEY).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(language: Language, a: &str, b: &str) -> bool {
        let stemmer = Stemmer::create(algorithm(language));
        let theirs = keys(language, &stemmer, b);
        keys(language, &stemmer, a).iter().any(|k| theirs.contains(k))
    }

    #[test]
    fn forms_of_one_verb_share_a_key() {
        assert!(joined(Language::Spanish, "trabajan", "trabaja"));
        assert!(joined(Language::German, "arbeiten", "arbeitet"));
        assert!(joined(Language::German, "wohnen", "wohnt"));
        assert!(joined(Language::French, "travaillent", "travaille"));
        assert!(joined(Language::French, "Travaillaient", "travaillé"));
        assert!(joined(Language::Italian, "lavorano", "lavora"));
        assert!(joined(Language::Portuguese, "trabalham", "trabalha"));
        assert!(joined(Language::Arabic, "يعمل", "تعمل"));
    }

    #[test]
    fn short_stems_and_other_words_do_not() {
        assert!(!joined(Language::Spanish, "casan", "casa"), "three letters");
        assert!(!joined(Language::Spanish, "viven", "vive"), "three letters");
        assert!(!joined(Language::Italian, "lavorano", "lava"));
        assert!(!joined(Language::German, "lehrt", "lernt"));
        assert!(!joined(Language::German, "leben", "lebt"), "three letters");
        assert!(!joined(Language::French, "parent", "par"), "three letters");
        // A bare Arabic word is not one with its prefix taken off: "تجارة" (trade) is not "جارة".
        assert!(!joined(Language::Arabic, "تجارة", "جارة"));
    }
}
