//! What a note is found by, for each channel of the notes query (`search.rs`): one text for the
//! trigram channel and a list of terms for the token channel, both from its key and value.
//!
//! The two are built apart because they read a key differently. A key (and an object key of the
//! value) is an identifier, followed in the text by the words it stands for (`key_words`: its
//! parts, what they abbreviate). The trigram channel needs those parts spelled with spaces:
//! `deploy.window deploy window` holds the trigrams of "deploy window" across the words (`oy `,
//! `y w`, ` wi`), without which that note drops under the channel's share for "what is the deploy
//! window". The token channel must not count a key's parts twice, as the tokenizer's
//! identifier parts (`text::ident_parts`) would on top of `key_words`: the note grows longer and
//! loses on BM25's length normalisation (`db_choice` fell behind a note whose only match for
//! "what database did we choose" was "we"). So names are read one term a word
//! (`text::word_tokens`), their parts coming from `key_words` alone as before; the value's
//! strings, free text where code is written (`retryPolicy`, `config.ts`), give their
//! identifiers' parts (`text::tokens`).

use super::key_words::key_words;
use crate::text::{tokens, word_tokens};
use serde_json::Value;

/// A note's text for the trigram channel and its terms for the token channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SearchText {
    /// The key, then the value's strings, numbers and object keys, each key followed by the
    /// words it stands for, separated by spaces.
    pub text: String,
    /// The index terms: of names (keys, the words they stand for, numbers, booleans) one a word,
    /// of the value's strings with their identifiers' parts; in no particular order.
    pub terms: Vec<String>,
}

impl SearchText {
    /// The search text of a note with `key`, `value` and, for a task note, `task` (its task id):
    /// a task note is about its task, so "what is left on AUTH-12" finds the notes of task
    /// `AUTH-12` (found playing two agents: with that `taskId` sent too, the task's notes did not
    /// match and `memory_context` said `nothing_stored`). The task id is read as a value's
    /// string is, as the query reads it (`AUTH-12` gives `auth-12`, `auth` and `12`).
    pub(crate) fn of(key: &str, task: Option<&str>, value: &Value) -> SearchText {
        let mut pieces = Pieces { text: String::new(), names: String::new(), strings: String::new() };
        pieces.name(key);
        key_words(key, |w| pieces.name(w));
        if let Some(task) = task {
            pieces.string(task);
        }
        pieces.value(value);
        let mut terms: Vec<String> = word_tokens(&pieces.names).into_iter().map(|t| t.term).collect();
        terms.extend(tokens(&pieces.strings).into_iter().map(|t| t.term));
        SearchText { text: pieces.text, terms }
    }

    /// The search text of a free text alone (a note holding one string), for tests of ranking.
    #[cfg(test)]
    pub(crate) fn of_text(text: &str) -> SearchText {
        SearchText { text: text.to_owned(), terms: tokens(text).into_iter().map(|t| t.term).collect() }
    }
}

/// The pieces of a note, gathered into the whole text and, apart, its names and its strings
/// (each tokenized once: a space parts two pieces, so that cuts them as the whole text would).
struct Pieces {
    text: String,
    names: String,
    strings: String,
}

impl Pieces {
    fn name(&mut self, s: &str) {
        push(&mut self.text, s);
        push(&mut self.names, s);
    }

    fn string(&mut self, s: &str) {
        push(&mut self.text, s);
        push(&mut self.strings, s);
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => {}
            Value::Bool(b) => self.name(if *b { "true" } else { "false" }),
            Value::Number(n) => self.name(&n.to_string()),
            Value::String(s) => self.string(s),
            Value::Array(items) => items.iter().for_each(|i| self.value(i)),
            Value::Object(map) => {
                for (k, v) in map {
                    self.name(k);
                    key_words(k, |w| self.name(w));
                    self.value(v);
                }
            }
        }
    }
}

/// Appends `s` to `out`, after a space unless `out` is empty.
fn push(out: &mut String, s: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(s);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sorted(mut terms: Vec<String>) -> Vec<String> {
        terms.sort();
        terms
    }

    #[test]
    fn the_trigram_text_spells_a_keys_parts_apart() {
        let s = SearchText::of("deploy.window", None, &json!({"day": "Friday", "ok": true, "to": 16}));
        assert_eq!(s.text, "deploy.window deploy window day Friday ok true to 16");
    }

    #[test]
    fn a_keys_parts_are_counted_once_and_a_strings_identifiers_give_theirs() {
        // `db_choice` as before identifiers were cut: `key_words` alone gives `db`, `database` and
        // `choice` (the other `choic` is the value's object key).
        let s = SearchText::of("db_choice", None, &json!({"choice": "postgres"}));
        assert_eq!(sorted(s.terms), ["choic", "choic", "databas", "db", "db_choic", "postgr"]);
        let s = SearchText::of("limits", None, &json!("the retryPolicy in config.ts"));
        assert_eq!(sorted(s.terms), ["config", "config.t", "limit", "polici", "retri", "retrypolici", "ts"],);
    }

    #[test]
    fn a_task_notes_task_id_is_searched_as_the_query_reads_it() {
        let s = SearchText::of("progress", Some("AUTH-12"), &json!({"done": "schema"}));
        assert_eq!(s.text, "progress AUTH-12 done schema");
        let q: Vec<String> = tokens("AUTH-12").into_iter().map(|t| t.term).collect();
        assert!(!q.is_empty() && q.iter().all(|t| s.terms.contains(t)), "{q:?} in {:?}", s.terms);
    }
}
