//! Verbs whose subject without an object is what the same verb with one acts on: "billing moved
//! to Postgres 16" and "we moved billing to Postgres 16" say the same of billing. Grounding's
//! direction rule (`grounding_rules::Asking::misdirected`) read "When did billing move to
//! Postgres 16?" (billing before the verb) against "We moved billing from Postgres 13 to Postgres
//! 16 in June 2024." (billing after it) as the relation turned round, and left "move" uncovered
//! (found in QA). With such a verb, a question naming what it asks about only before the verb,
//! and not asking for an object ("What does auth-svc run?"), is not judged by side; one naming
//! something after it still is ("Who moved billing?" is not answered by "Billing moved to
//! Postgres 16").
//!
//! Only verbs that read so in the notes agents keep about systems and work; not "leave", "join",
//! "run into" and the like, whose object is another party ("Priya left Jonas Berg").

use crate::text::tokens;
use std::collections::HashSet;
use std::sync::OnceLock;

const VERBS: &[&str] = &[
    "begin", "break", "change", "close", "decrease", "deploy", "double", "drop", "end", "expand", "finish", "freeze",
    "grow", "halt", "improve", "increase", "launch", "merge", "migrate", "move", "open", "pause", "reboot", "release",
    "restart", "resume", "roll", "run", "scale", "ship", "shrink", "shut", "slow", "split", "start", "stop", "switch",
    "upgrade",
];

/// Whether the index term `term` (as `tokens` spells it, base form) is of such a verb.
pub(super) fn is_ergative(term: &str) -> bool {
    static TERMS: OnceLock<HashSet<String>> = OnceLock::new();
    TERMS
        .get_or_init(|| VERBS.iter().filter_map(|v| tokens(v).into_iter().next().map(|t| t.term)).collect())
        .contains(term)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::grounding_rules::{Statement, misdirected};
    use crate::text::tokens;
    use std::collections::BTreeSet;

    fn wrong(question: &str, sentence: &str, names: &[&str]) -> bool {
        let asked: BTreeSet<String> = tokens(question).into_iter().map(|t| t.term).collect();
        misdirected((question, &asked), sentence, Statement::Sentence, None, names).is_some()
    }

    #[test]
    fn what_such_a_verb_acts_on_may_be_its_subject_in_the_question() {
        let moved = "We moved billing from Postgres 13 to Postgres 16 in June 2024.";
        assert!(!wrong("When did billing move to Postgres 16?", moved, &["billing"]));
        assert!(!wrong(
            "Did billing migrate to Postgres 16?",
            "The team migrated billing to Postgres 16.",
            &["billing"]
        ));
        assert!(!wrong("Where does billing run?", "We run billing in eu-west-1.", &["billing"]));
        // Still judged: a name after the verb, an object asked for, a verb not of the kind.
        assert!(wrong("Who moved billing?", "Billing moved to Postgres 16.", &["billing"]));
        assert!(wrong("What does auth-svc run?", "orders-svc runs auth-svc.", &["orders-svc", "auth-svc"]));
        assert!(wrong("When did Jonas Berg leave?", "Priya Raman left Jonas Berg.", &["Jonas Berg", "Priya Raman"]));
    }
}
