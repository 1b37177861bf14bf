//! The clauses of a question that asks two things at once: "Who owns billing and what does it
//! depend on?" asks who owns billing, and what billing depends on. No one stored sentence says
//! both, so judged whole such a question was only ever `related`, and named as uncovered a word
//! another cited item covers (found in QA: `uncovered: ["owns"]` beside "Sam Lee owns billing
//! service"). Grounding judges each clause on its own (`context::grounding`).

use super::Seed;
use super::grounding_rules::{AUXILIARIES, is_question_word};
use unicode_segmentation::UnicodeSegmentation;

/// Third-person pronouns a later clause points back with; the possessive ones become `NAME's`.
const PRONOUNS: &[&str] = &["it", "its", "they", "them", "their", "he", "him", "his", "she", "her"];
const POSSESSIVES: &[&str] = &["its", "their", "his"];

/// The clauses of an English `question`, cut before an "and" or "or" whose next word opens a
/// question of its own (a question word or an auxiliary: "… and what does it …", "… or is it …");
/// one clause when there is no such cut. "What do Alice and Bob lead?" is one question. A clause
/// that names none of `seeds` but points back with a pronoun gets, in its place, the words that
/// named the first seed of the nearest clause before it that names one ("what does it depend on"
/// → "what does billing depend on"), so its words are judged about what it asks about.
pub(super) fn clauses(question: &str, seeds: &[Seed]) -> Vec<String> {
    let words: Vec<(usize, &str)> = question.unicode_word_indices().collect();
    let mut cuts = Vec::new();
    for (i, &(at, word)) in words.iter().enumerate() {
        let opens = words
            .get(i + 1)
            .is_some_and(|(_, next)| is_question_word(next) || AUXILIARIES.contains(&next.to_lowercase().as_str()));
        if i > 0 && opens && matches!(word.to_lowercase().as_str(), "and" | "or") {
            cuts.push((at, at + word.len()));
        }
    }
    let mut parts = Vec::new();
    let mut from = 0;
    for (start, end) in cuts {
        parts.push(question[from..start].trim_matches(|c: char| c.is_whitespace() || c == ','));
        from = end;
    }
    parts.push(question[from..].trim());
    let mut named: Option<&str> = None;
    parts
        .into_iter()
        .map(|part| {
            if let Some(by) = first_named(part, seeds) {
                named = Some(by);
                return part.to_owned();
            }
            named.map_or_else(|| part.to_owned(), |by| point_back(part, by))
        })
        .collect()
}

/// The words that named the seed `part` names first (by position), as the question spells them.
fn first_named<'a>(part: &str, seeds: &'a [Seed]) -> Option<&'a str> {
    let lower = part.to_lowercase();
    seeds
        .iter()
        .filter(|s| !s.by.is_empty() && s.matched != "type")
        .filter_map(|s| whole_word_at(&lower, &s.by.to_lowercase()).map(|at| (at, s.by.as_str())))
        .min_by_key(|&(at, _)| at)
        .map(|(_, by)| by)
}

/// Where `needle` stands in `haystack` as whole words.
fn whole_word_at(haystack: &str, needle: &str) -> Option<usize> {
    let is_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    haystack.match_indices(needle).map(|(at, _)| at).find(|&at| {
        !is_word(haystack[..at].chars().next_back()) && !is_word(haystack[at + needle.len()..].chars().next())
    })
}

/// `part` with its first third-person pronoun replaced by `name` (`name's` for a possessive).
fn point_back(part: &str, name: &str) -> String {
    let Some((at, word)) = part.unicode_word_indices().find(|(_, w)| PRONOUNS.contains(&w.to_lowercase().as_str()))
    else {
        return part.to_owned();
    };
    let lower = word.to_lowercase();
    let possessive = POSSESSIVES.contains(&lower.as_str())
        || (lower == "her" && part[at + word.len()..].starts_with(' ') && part[at + word.len()..].len() > 1);
    let name = if possessive { format!("{name}'s") } else { name.to_owned() };
    format!("{}{name}{}", &part[..at], &part[at + word.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Entity;

    fn seed(name: &str, by: &str, matched: &'static str) -> Seed {
        let entity = Entity {
            id: 1,
            name: name.to_owned(),
            types: Vec::new(),
            attributes: serde_json::Map::new(),
            recorded_at: 0,
        };
        Seed { entity, matched, by: by.to_owned() }
    }

    #[test]
    fn a_question_asking_two_things_is_cut_where_the_second_opens() {
        let billing = [seed("billing service", "billing", "word")];
        assert_eq!(
            clauses("Who owns billing and what does it depend on?", &billing),
            ["Who owns billing", "what does billing depend on?"]
        );
        assert_eq!(
            clauses("Who owns billing, and is its ledger audited?", &billing),
            ["Who owns billing", "is billing's ledger audited?"]
        );
        // Names in a question of one clause, or a clause naming its own subject, stay as written.
        assert_eq!(clauses("What do Alice and Bob lead?", &[]), ["What do Alice and Bob lead?"]);
        let two = [seed("Ana Lima", "Ana Lima", "exact"), seed("Atlas", "Atlas", "exact")];
        assert_eq!(
            clauses("Where does Ana Lima work and who leads Atlas?", &two),
            ["Where does Ana Lima work", "who leads Atlas?"]
        );
        // A type seed names a kind, not what a pronoun stands for.
        let typed = [seed("Acme", "companies", "type")];
        assert_eq!(
            clauses("Which companies exist and where are they?", &typed),
            ["Which companies exist", "where are they?"]
        );
    }

    #[test]
    fn each_clause_covered_by_a_cited_item_grounds_the_question() {
        use crate::knowledge::testing::{TODAY, call, caller, fresh, verdict_at};
        use serde_json::json;
        let (_dir, store, _part) = fresh();
        let facts = json!({"content": "Sam Lee owns the billing service. The billing service depends on the \
            ledger library. The ledger library depends on the money crate.", "date": "2024-07-01",
            "facts": {"entities": [{"name": "billing service", "type": "service"}, {"name": "ledger library",
            "type": "library"}, {"name": "money crate", "type": "library"}, {"name": "Sam Lee", "type": "person"}],
            "relations": [{"source": "Sam Lee", "target": "billing service", "type": "owns"},
            {"source": "billing service", "target": "ledger library", "type": "depends_on"},
            {"source": "ledger library", "target": "money crate", "type": "depends_on"}]}});
        call(&store, &caller(TODAY - 1_000), "remember", &facts).unwrap();
        let verdict = |q: &str| verdict_at(&store, TODAY, q);
        let grounded = ("grounded".to_owned(), json!([]));
        assert_eq!(verdict("Who owns billing and what does it depend on?"), grounded);
        assert_eq!(verdict("What does the ledger library depend on, and who owns billing?"), grounded);
        // A clause nothing answers is named, and only its words: "owns" is covered by its clause.
        assert_eq!(verdict("Who owns billing and who audits it?"), ("related".to_owned(), json!(["audits"])));
        // A clause is still judged in its direction: nothing says what owns Sam Lee.
        assert_eq!(verdict("What does billing depend on and what owns Sam Lee?").0, "related");
    }
}
