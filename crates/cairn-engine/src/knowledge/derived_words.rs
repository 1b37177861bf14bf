//! Common English nouns made from verbs that the stemmer does not take to the verb's stem: "Which
//! database did we choose?" was `related`, "choose" uncovered, beside "Our choice was Postgres."
//! (found in QA: Snowball gives "choic" and "choos"). Grounding reads such a noun as its verb
//! (`irregular_verbs::base_term`, which also reads "chose" and "chosen" as "choose"), and the
//! full-text channel also searches for the nouns of a question's verbs (`alternates`), so that
//! passage is found at all. A small fixed list, the same on every run: a noun and the verb it is
//! made from, only where one means the other's act or its result (no "sentence"/"sense", no
//! "ground"/"grind"). A pair the stemmer already joins ("deployment", "migration") needs no entry.

use super::irregular_verbs::base_term;
use crate::text::tokens;
use std::collections::HashMap;
use std::sync::OnceLock;

/// (noun, verb).
pub(super) const NOUNS: &[(&str, &str)] = &[
    ("acquisition", "acquire"),
    ("analysis", "analyze"),
    ("choice", "choose"),
    ("conclusion", "conclude"),
    ("decision", "decide"),
    ("departure", "depart"),
    ("description", "describe"),
    ("exclusion", "exclude"),
    ("extension", "extend"),
    ("failure", "fail"),
    ("growth", "grow"),
    ("inclusion", "include"),
    ("loss", "lose"),
    ("owner", "own"),
    ("payment", "pay"),
    ("proof", "prove"),
    ("response", "respond"),
    ("sale", "sell"),
    ("subscription", "subscribe"),
    ("success", "succeed"),
];

/// The words to search for beside a question's word whose matching term is `term`: the nouns of
/// that verb ("choice" for "choose", "chose" or "chosen"). Empty for other words.
pub(super) fn alternates(term: &str) -> &'static [&'static str] {
    static BY_VERB: OnceLock<HashMap<String, Vec<&'static str>>> = OnceLock::new();
    let by_verb = BY_VERB.get_or_init(|| {
        let mut by_verb: HashMap<String, Vec<&'static str>> = HashMap::new();
        for (noun, verb) in NOUNS {
            if let Some(t) = tokens(verb).into_iter().next() {
                by_verb.entry(base_term(t.term)).or_default().push(noun);
            }
        }
        by_verb
    });
    by_verb.get(term).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(word: &str) -> String {
        base_term(tokens(word).remove(0).term)
    }

    #[test]
    fn a_noun_reads_as_its_verb_in_every_form() {
        for form in ["choice", "choices", "chose", "chosen", "choosing", "chooses"] {
            assert_eq!(term(form), term("choose"), "{form}");
        }
        assert_eq!(term("decision"), term("decided"));
        assert_eq!(term("failures"), term("failed"));
        assert_eq!(term("owner"), term("owns"));
        assert_ne!(term("sentence"), term("sense"));
    }

    #[test]
    fn every_pair_is_one_the_stemmer_leaves_apart() {
        let stem = |w: &str| tokens(w).remove(0).term;
        let joined: Vec<&str> = NOUNS.iter().filter(|(noun, verb)| stem(noun) == stem(verb)).map(|(n, _)| *n).collect();
        assert!(joined.is_empty(), "need no entry: {joined:?}");
    }

    #[test]
    fn a_passage_naming_the_noun_is_found_for_and_grounds_the_verb() {
        use crate::knowledge::testing::{TODAY, call, caller, fresh};
        use serde_json::json;
        let (_dir, store, _part) = fresh();
        let facts = json!({"entities": [{"name": "Postgres", "type": "database"}]});
        for body in [
            json!({"content": "Our choice was Postgres.", "source": "adr", "facts": facts}),
            json!({"content": "The canteen serves soup.", "source": "memo"}),
        ] {
            call(&store, &caller(TODAY - 1_000), "remember", &body).unwrap();
        }
        let ask = |question: &str| call(&store, &caller(TODAY), "context", &json!({"question": question})).unwrap();
        // Only the noun shares a word with the question: found by full text alone.
        let c = ask("What did the team choose?");
        let found: Vec<&str> = c["items"].as_array().unwrap().iter().map(|i| i["text"].as_str().unwrap()).collect();
        assert_eq!(found, ["Our choice was Postgres."]);
        assert_eq!(c["grounding"]["uncovered"], json!(["team"]));
        // The type word Postgres was stored with covers "database"; the noun covers the verb.
        let c = ask("Which database did we choose?");
        assert_eq!(c["grounding"], json!({"verdict": "grounded", "uncovered": []}));
    }

    #[test]
    fn a_verb_is_searched_for_with_its_nouns() {
        assert_eq!(alternates(&term("chosen")), ["choice"]);
        assert_eq!(alternates(&term("decide")), ["decision"]);
        assert!(alternates(&term("database")).is_empty());
    }
}
