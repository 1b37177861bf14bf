//! `Judge::sentences_uncovered` skips work it can prove changes nothing (a sentence that cannot
//! beat the best before it, negation and time sought only when asked, the direction check only
//! where a name of the question and a relation word meet). These tests hold it to the plain
//! reading: every sentence, every check, the first of the fewest uncovered.

use super::*;
use proptest::prelude::*;

/// The plain reading `sentences_uncovered` must agree with.
fn plain(judge: &Judge, lead: &str, text: &str, dated: bool) -> Vec<String> {
    let terms = judge.asked_terms();
    let names: Vec<&str> = judge.names.iter().map(String::as_str).collect();
    grounding_rules::passage_sentences(text, None)
        .iter()
        .map(|(_, s)| s)
        .filter(|s| !grounding_rules::asks(s))
        .map(|s| {
            let mut have = fact_terms(s);
            if negation(&s.replace('_', " ")).is_some() {
                have.insert(NEGATED.to_owned());
            }
            if names_a_time(s) {
                have.insert(TIMED.to_owned());
            }
            judge.stems.extend(s, &mut have);
            have.extend(fact_terms(lead));
            if dated {
                have.insert(TIMED.to_owned());
            }
            for (name, type_terms) in &judge.typed_names {
                if !name.is_empty() && name.is_subset(&have) {
                    have.extend(type_terms.iter().cloned());
                }
            }
            let question = (judge.question, &terms);
            if let Some(term) = grounding_rules::misdirected(question, s, Statement::Sentence, None, &names) {
                have.remove(&term);
            }
            missing(judge.asked, &have)
        })
        .min_by_key(Vec::len)
        .unwrap_or_else(|| missing(judge.asked, &BTreeSet::new()))
}

const QUESTIONS: &[&str] = &[
    "Who manages Jonas Berg?",
    "Who does Jonas Berg manage?",
    "When was Acme founded?",
    "Which companies are not in Berlin?",
    "What does Priya Raman lead?",
    "Who founded Acme in 2015?",
    "deploy rollback friday",
    "Where is Acme located?",
    "Which pull requests does Dana Ortiz prefer?",
];

const PIECES: &[&str] = &[
    "Jonas Berg manages Priya Raman.",
    "Priya Raman manages Jonas Berg.",
    "She leads the lighthouse project.",
    "Priya Raman joined Acme in 2024.",
    "Acme was founded by Jonas Berg.",
    "Acme is not in Berlin.",
    "Acme is located in Berlin.",
    "The deploy on Friday needed a rollback.",
    "Dana Ortiz prefers small pull requests.",
    "It never shipped.",
    "The meeting is at 10:30.",
    "Berg founded it in May 2015.",
    "Nothing else happened.",
];

proptest! {
    #[test]
    fn agrees_with_the_plain_reading(
        q in proptest::sample::select(QUESTIONS),
        picks in proptest::collection::vec(proptest::sample::select(PIECES), 1..7),
        seeded in proptest::collection::vec(proptest::sample::select(&["Jonas Berg", "Priya Raman", "Acme"][..]), 0..3),
        lead in proptest::sample::select(&["", "acme", "berg deploy"][..]),
        dated: bool,
        typed: bool,
        heading: bool,
    ) {
        let asked = content_words(q);
        let mut judge = Judge::new((q, Reading::of(q)), &asked, &seeded);
        if typed {
            judge.typed_names.push((fact_terms("Acme"), match_terms("companies")));
        }
        let text = picks.join(" ");
        // The lead read as a note's key or as the heading above a passage: its words count alike.
        let titles = [lead.to_owned()];
        let under = if heading { Under::Headings(&titles) } else { Under::Key(lead) };
        prop_assert_eq!(judge.sentences_uncovered(&text, under, None, dated), plain(&judge, lead, &text, dated));
    }
}

#[test]
fn the_direction_check_still_runs_where_it_matters() {
    // The shortcuts must not skip the check where a name of the question meets a relation word.
    let q = "Who manages Jonas Berg?";
    let asked = content_words(q);
    let judge = Judge::new((q, Reading::of(q)), &asked, &[]);
    let text = "Jonas Berg manages Priya Raman.";
    assert_eq!(judge.sentences_uncovered(text, Under::Key(""), None, false), ["manages"]);
    assert_eq!(judge.sentences_uncovered(text, Under::Key(""), None, false), plain(&judge, "", text, false));
    let both = "Jonas Berg manages Priya Raman. Priya Raman manages Jonas Berg.";
    assert!(judge.sentences_uncovered(both, Under::Key(""), None, false).is_empty());
}

#[test]
fn a_kind_of_opening_asks_no_word_of_its_own() {
    // Found in QA: "type" stayed uncovered beside the sentence that answers, so `related`.
    let words = |q: &str| content_words(q).into_iter().map(|(w, _)| w).collect::<Vec<_>>();
    let q = "What type of pull requests does Ana Lima prefer?";
    assert!(!words(q).contains(&"type".to_owned()));
    assert!(words(q).contains(&"pull".to_owned()));
    assert!(!words("Which kind of car does Ana Lima drive?").contains(&"kind".to_owned()));
    // Elsewhere "type" is asked for.
    assert!(words("What is the type of Ledger?").contains(&"type".to_owned()));
    assert!(words("What type does Ledger have?").contains(&"type".to_owned()));
    let asked = content_words(q);
    let judge = Judge::new((q, Reading::of(q)), &asked, &["Ana Lima"]);
    assert!(judge.sentences_uncovered("Ana Lima prefers small pull requests.", Under::Key(""), None, false).is_empty());
}

#[test]
fn a_sentence_covers_the_words_of_the_headings_it_sits_under_and_no_others() {
    let q = "How many engineers does the platform team have?";
    let asked = content_words(q);
    let judge = Judge::new((q, Reading::of(q)), &asked, &[]);
    let under = |path: &[&str], text: &str| {
        let path: Vec<String> = path.iter().map(|t| (*t).to_owned()).collect();
        judge.sentences_uncovered(text, Under::Headings(&path), None, false)
    };
    let sentence = "The team has three engineers.";
    assert_eq!(under(&[], sentence), ["platform"], "the sentence alone says which team nowhere");
    assert!(under(&["Platform team", "People"], sentence).is_empty(), "the heading above it says it");
    // A heading the passage holds covers the sentences below it, not those above it.
    assert!(under(&[], "# Platform team\n\nThe team has three engineers.").is_empty());
    assert_eq!(under(&[], "The team has two engineers.\n\n# Platform team\n\nDana Ortiz leads it."), ["platform"]);
    // Another section's heading covers nothing here.
    assert_eq!(under(&[], "# Data team\n\nThe team has two engineers."), ["platform"]);
    assert_eq!(under(&["Data team"], sentence), ["platform"]);
}

#[test]
fn a_heading_takes_no_side_of_a_relation_word() {
    // The heading holds "manages", but the sentence under it says it the other way round.
    let q = "Who manages Jonas Berg?";
    let asked = content_words(q);
    let judge = Judge::new((q, Reading::of(q)), &asked, &[]);
    let path = ["Who manages whom".to_owned()];
    assert_eq!(
        judge.sentences_uncovered("Jonas Berg manages Priya Raman.", Under::Headings(&path), None, false),
        ["manages"]
    );
    assert!(
        judge.sentences_uncovered("Priya Raman manages Jonas Berg.", Under::Headings(&path), None, false).is_empty()
    );
}
