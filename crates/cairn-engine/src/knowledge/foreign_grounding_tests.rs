//! Grounding of questions asked in another language than English (`question_language`): their
//! function words are not content, and English word order is not read into them. Found in QA:
//! each of these questions was `related` beside a passage that answers it word for word.

use super::*;
use crate::knowledge::remember_text;
use crate::knowledge::testing::seeded_with;

const PASSAGES: &[&str] = &[
    "Jonas Berg travaille chez Globex depuis 2023. Il dirige l'équipe radar.",
    "Lena Vogel arbeitet seit 2022 bei Initech. Sie leitet das Projekt Nordlicht.",
    "Carlos Ruiz trabaja en Umbrella desde 2021. Él dirige el proyecto Faro.",
    "Marco Bianchi lavora a Torino per Stark. Lui guida il progetto Aurora.",
    "João Silva trabalha em Lisboa para a Wayne. Ele lidera o projeto Farol.",
    "تعمل بريا رامان في شركة أكمي منذ عام 2024. وهي تقود مشروع المنارة.",
];

fn verdict(question: &str) -> Grounding {
    let (_dir, store, part) = seeded_with(|tx, p| {
        for (i, text) in PASSAGES.iter().enumerate() {
            remember_text(tx, p, text, Some("notes"), None, i64::try_from(i).unwrap() + 1)?;
        }
        Ok(())
    });
    let snap = store.snapshot().unwrap();
    context(&snap, &part, question, 2, 8).unwrap().grounding
}

#[test]
fn a_question_in_another_language_is_grounded_by_the_passage_that_answers_it() {
    for q in [
        "Où travaille Jonas Berg ?",
        "Chez qui travaille Jonas Berg ?",
        "Qu'est-ce que Jonas Berg dirige ?",
        "Wo arbeitet Lena Vogel?",
        "Was leitet Lena Vogel?",
        "¿Dónde trabaja Carlos Ruiz?",
        "¿Qué dirige Carlos Ruiz?",
        "Dove lavora Marco Bianchi?",
        "Che cosa guida Marco Bianchi?",
        "Onde trabalha João Silva?",
        "O que lidera João Silva?",
        "أين تعمل بريا رامان؟",
        "ماذا تقود بريا رامان؟",
    ] {
        assert_eq!(verdict(q), Grounding::Grounded, "{q}");
    }
}

#[test]
fn a_word_the_passage_lacks_is_still_uncovered() {
    // Only function words stopped counting: a content word nothing says stays uncovered.
    assert_eq!(verdict("Wo wohnt Lena Vogel?"), Grounding::Related { uncovered: vec!["wohnt".into()] });
    assert_eq!(verdict("¿Cuándo nació Carlos Ruiz?"), Grounding::Related { uncovered: vec!["nació".into()] });
    // An English question about the Spanish passage needs its English words.
    assert_eq!(verdict("Where does Carlos Ruiz work?"), Grounding::Related { uncovered: vec!["work".into()] });
}

#[test]
fn english_questions_keep_the_direction_rule() {
    let (_dir, store, part) =
        seeded_with(|tx, p| remember_text(tx, p, "Jonas Berg manages Priya Raman.", Some("notes"), None, 1));
    let snap = store.snapshot().unwrap();
    let c = context(&snap, &part, "Who manages Jonas Berg?", 2, 8).unwrap();
    assert_eq!(c.grounding, Grounding::Related { uncovered: vec!["manages".into()] });
    let c = context(&snap, &part, "Whom does Jonas Berg manage?", 2, 8).unwrap();
    assert_eq!(c.grounding, Grounding::Grounded);
}
