//! Yes/no questions beside the passage that answers them, often with "no" (found in QA through a
//! real node: "Is Windows supported by Cairn Sync?" beside "Cairn Sync runs on macOS and Linux.
//! Windows is not supported yet." was `related`, "Windows" and "supported" uncovered).

use crate::knowledge::testing::{TODAY, call, caller, fresh, verdict_at};
use serde_json::{Value, json};

/// The verdict and uncovered words of `question` over a fresh store holding each of `bodies`.
fn verdicts(bodies: &[Value], questions: &[&str]) -> Vec<(String, Value)> {
    let (_dir, store, _part) = fresh();
    for body in bodies {
        call(&store, &caller(TODAY - 1_000), "remember", body).unwrap();
    }
    questions.iter().map(|q| verdict_at(&store, TODAY, q)).collect()
}

fn grounded() -> (String, Value) {
    ("grounded".to_owned(), json!([]))
}

const ASKED: &[&str] = &[
    "Is Windows supported by Cairn Sync?",
    "Does Cairn Sync support Windows?",
    "Is Windows not supported by Cairn Sync?",
    "Doesn't Cairn Sync support Windows?",
];

#[test]
fn a_passive_saying_no_one_is_read_with_the_name_before_it() {
    let text = "Cairn Sync runs on macOS and Linux. Windows is not supported yet.";
    let facts = json!({"entities": [{"name": "Cairn Sync", "type": "product"}, {"name": "Windows", "type": "os"}]});
    for body in [json!({"content": text, "source": "notes"}), json!({"content": text, "source": "faq", "facts": facts})]
    {
        assert_eq!(verdicts(&[body], ASKED), vec![grounded(); ASKED.len()]);
    }
}

#[test]
fn the_source_label_names_who_acts_in_a_passages_first_sentence() {
    let body = json!({"content": "Windows is not supported yet.", "source": "Cairn Sync FAQ"});
    assert_eq!(verdicts(&[body], ASKED), vec![grounded(); ASKED.len()]);
    // A label that names nothing names no one.
    let body = json!({"content": "Windows is not supported yet.", "source": "faq.md"});
    let related = ("related".to_owned(), json!(["Cairn", "Sync"]));
    assert_eq!(verdicts(&[body], &ASKED[..2]), vec![related.clone(), related]);
}

#[test]
fn a_negation_the_question_lacks_still_answers_it_and_the_direction_holds() {
    let bodies = [
        json!({"content": "Windows is no longer supported by Cairn Sync.", "source": "a"}),
        json!({"content": "Windows isn't supported by Cairn Sync.", "source": "b"}),
        json!({"content": "Windows isn't supported yet by Cairn Sync.", "source": "c"}),
    ];
    for body in bodies {
        assert_eq!(verdicts(std::slice::from_ref(&body), ASKED), vec![grounded(); ASKED.len()], "{body}");
        // Asked the other way round, the relation word stays uncovered.
        let wrong = verdicts(&[body], &["Is Cairn Sync supported by Windows?", "Does Windows support Cairn Sync?"]);
        for (verdict, uncovered) in wrong {
            assert_eq!(verdict, "related");
            assert!(uncovered.to_string().contains("support"), "{uncovered}");
        }
    }
}

#[test]
fn a_passive_about_what_the_sentence_before_names_carries_no_name() {
    // The sentence before names Beta: the passive says something else of it, not that Acme did it.
    let body = json!({"content": "Acme acquired Beta in 2020. Beta was founded in 1999.", "source": "notes"});
    let got = verdicts(&[body], &["Was Beta founded by Acme?"]);
    assert_eq!(got[0].0, "related");
}

#[test]
fn a_passive_about_a_thing_carries_no_name_from_the_sentence_before() {
    // Nothing says Acme opened the office (found merging: it was `grounded`).
    let body = json!({"content": "Acme runs the site. The office was opened in 2019.", "source": "notes"});
    let got = verdicts(&[body], &["Did Acme open the office?", "When was the office opened?"]);
    assert_eq!(got, vec![("related".to_owned(), json!(["Acme"])), grounded()]);
}
