//! Markdown headings give the passages under them their topic for full text and linking
//! (`text::Passage::index_text`), for grounding, and on the item (`headings`), while the stored
//! text and its citations are only what the passage says.

use super::testing::{TODAY, assert_citations_slice, call, caller, fresh};
use serde_json::{Value, json};

/// A wiki page whose second passage never names its section's topic.
fn page() -> String {
    let filler = "The group owns the build system, the deploy pipeline and the shared staging clusters. ";
    format!(
        "# Platform team\n\nDana Ortiz leads the platform team since March 2023. {}\n\n## Staff\n\n\
         The team has three engineers: Ali, Bo and Chen. Each of them is on call one week a month.\n",
        filler.repeat(10).trim_end()
    )
}

/// Pages of other teams that name the platform team, or engineers, as a wiki does: each holds
/// two of the question's three words, as the page's second passage does without its heading.
fn others() -> Vec<String> {
    (0..20)
        .map(|i| {
            if i % 2 == 0 {
                format!("# Team {i} notes\n\nTeam {i} asked the platform team about the deploy pipeline.")
            } else {
                format!("# Team {i} notes\n\nTeam {i} hired engineers for the mobile app this spring.")
            }
        })
        .collect()
}

fn context(store: &crate::store::Store, question: &str) -> Value {
    call(store, &caller(TODAY), "context", &json!({"question": question, "k": 8})).unwrap()
}

/// The passage items of a context reply whose text holds `needle`.
fn passages_with<'a>(c: &'a Value, needle: &str) -> Vec<&'a Value> {
    let items = c["items"].as_array().unwrap();
    items.iter().filter(|i| i["kind"] == "passage" && i["text"].as_str().unwrap().contains(needle)).collect()
}

#[test]
fn a_passage_is_found_by_the_heading_it_sits_under_and_cited_as_stored() {
    let (_dir, store, part) = fresh();
    for (at, text) in (TODAY - 10_000..).zip(others()) {
        call(&store, &caller(at), "remember", &json!({"content": text})).unwrap();
    }
    call(&store, &caller(TODAY - 1_000), "remember", &json!({"content": page(), "source": "wiki"})).unwrap();
    let c = context(&store, "How many engineers does the platform team have?");
    let found = passages_with(&c, "three engineers");
    assert_eq!(found.len(), 1, "{c}");
    // The stored text is the passage as written: no heading was added to it.
    assert!(found[0]["text"].as_str().unwrap().starts_with("## Staff"), "{c}");
    assert_citations_slice(&store, &part, &c);
    // The item says which team, and the heading covers it: the citation still quotes the passage.
    assert_eq!(found[0]["headings"], json!(["Platform team"]), "{c}");
    assert_eq!(found[0]["citation"]["span"]["text"], found[0]["text"], "{c}");
    assert_eq!(found[0]["uncovered"], json!([]), "{c}");
    assert_eq!(c["grounding"], json!({"verdict": "grounded", "uncovered": []}), "{c}");
    // A passage under no heading says so with an empty path.
    let first = passages_with(&c, "Dana Ortiz leads");
    assert!(first.iter().all(|p| p["headings"] == json!([])), "{c}");
}

/// An ADR stored as markdown: the decision's topic is only in its headings.
const ADR: &str = "# ADR 7: Storage engine\n\n## Status\n\nAccepted on 2024-03-02.\n\n## Decision\n\n\
    We use Postgres 16 for the event log, with one table per stream.\n\n## Consequences\n\n\
    Backups run nightly with pg_dump.\n";

#[test]
fn an_answer_whose_topic_sits_in_its_headings_is_grounded() {
    let (_dir, store, part) = fresh();
    call(&store, &caller(TODAY - 1_000), "remember", &json!({"content": ADR, "source": "adr-7"})).unwrap();
    let c = context(&store, "What was the decision on the storage engine?");
    assert_eq!(c["grounding"], json!({"verdict": "grounded", "uncovered": []}), "{c}");
    let decision = passages_with(&c, "Postgres 16");
    assert_eq!(decision.len(), 1, "{c}");
    assert_eq!(decision[0]["headings"], json!(["ADR 7: Storage engine"]), "{c}");
    assert_eq!(decision[0]["uncovered"], json!([]), "{c}");
    assert_citations_slice(&store, &part, &c);
    // The passage quoted is the section's own text: no heading above it is cited.
    let quoted = decision[0]["citation"]["span"]["text"].as_str().unwrap();
    assert!(quoted.starts_with("## Decision") && !quoted.contains("Storage engine"), "{quoted}");
}

#[test]
fn the_heading_of_another_section_grounds_nothing() {
    let (_dir, store, _part) = fresh();
    let page = "# Platform team\n\nDana Ortiz leads the platform team.\n\n\
                # Data team\n\n## People\n\nThe team has two engineers.\n";
    call(&store, &caller(TODAY - 1_000), "remember", &json!({"content": page})).unwrap();
    let c = context(&store, "How many engineers does the platform team have?");
    let data = passages_with(&c, "two engineers");
    assert_eq!(data.len(), 1, "{c}");
    // It holds its own headings: none above it, and "Platform team" closed by "# Data team".
    assert_eq!(data[0]["headings"], json!([]), "{c}");
    assert!(data[0]["uncovered"].as_array().unwrap().contains(&json!("platform")), "{c}");
    assert_ne!(c["grounding"]["verdict"], "grounded", "{c}");
    let c = context(&store, "How many engineers does the data team have?");
    assert_eq!(c["grounding"], json!({"verdict": "grounded", "uncovered": []}), "{c}");
}

#[test]
fn a_passage_links_to_the_entity_its_heading_names() {
    let (_dir, store, _part) = fresh();
    let entity = json!({"facts": {"entities": [{"name": "Platform team", "type": "team"}], "relations": []}});
    // Stored before the page and after it: the link does not depend on the order.
    call(&store, &caller(TODAY - 2_000), "remember", &entity).unwrap();
    call(&store, &caller(TODAY - 1_000), "remember", &json!({"content": page()})).unwrap();
    let c = context(&store, "Who is on call in the Platform team?");
    let found = passages_with(&c, "on call one week");
    assert_eq!(found.len(), 1, "{c}");
    assert!(found[0]["channels"].to_string().contains("mention"), "{c}");

    let (_dir, store, _part) = fresh();
    call(&store, &caller(TODAY - 2_000), "remember", &json!({"content": page()})).unwrap();
    call(&store, &caller(TODAY - 1_000), "remember", &entity).unwrap();
    let c = context(&store, "Who is on call in the Platform team?");
    let found = passages_with(&c, "on call one week");
    assert!(found[0]["channels"].to_string().contains("mention"), "{c}");
}

#[test]
fn an_imported_page_is_found_under_its_headings_as_the_original() {
    // Import indexed and linked a passage by its own text only (found merging the heading
    // path): the copy of a scope lost what the original found.
    let (_dir, store, _part) = fresh();
    for (at, text) in (TODAY - 10_000..).zip(others()) {
        call(&store, &caller(at), "remember", &json!({"content": text})).unwrap();
    }
    let entity = json!({"facts": {"entities": [{"name": "Platform team", "type": "team"}], "relations": []}});
    call(&store, &caller(TODAY - 2_000), "remember", &entity).unwrap();
    call(&store, &caller(TODAY - 1_000), "remember", &json!({"content": page(), "source": "wiki"})).unwrap();
    let export = call(&store, &caller(TODAY), "export", &json!({"limit": 1000})).unwrap();
    assert!(export["next"].is_null(), "one page: {export}");
    let copy = super::api::Caller { part: super::Partition::new("local", "u1", "copy").unwrap(), ..caller(TODAY) };
    call(&store, &copy, "import", &json!({"records": export["records"], "allAgents": true})).unwrap();
    let question = json!({"question": "How many engineers does the platform team have?", "k": 8});
    let found = call(&store, &copy, "context", &question).unwrap();
    assert_eq!(passages_with(&found, "three engineers").len(), 1, "{found}");
    let linked = call(&store, &copy, "context", &json!({"question": "Who is on call in the Platform team?"})).unwrap();
    let on_call = passages_with(&linked, "on call one week");
    assert!(on_call.first().is_some_and(|p| p["channels"].to_string().contains("mention")), "{linked}");
}
