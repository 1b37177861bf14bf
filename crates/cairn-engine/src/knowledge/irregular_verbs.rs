//! Irregular English verb forms, read as their base when grounding judges coverage: the stemmer
//! joins "joined" and "join" but never "led" and "lead", so "Did Priya Raman lead the billing
//! rewrite?" was left `related` by "She led the billing rewrite" (found by an audit). Only for
//! judging: the full-text index keeps its terms.
//!
//! Left out on purpose, forms that are just as often another word: "found" (to found a company),
//! "saw", "lay", "fell", "bore", "rose", "wound", "ground"; and forms of function words ("did",
//! "had", "been").

use crate::text::tokens;
use std::collections::HashMap;
use std::sync::OnceLock;

/// (form, base): past tenses and participles that no stemming rule takes to their base.
const FORMS: &[(&str, &str)] = &[
    ("ate", "eat"),
    ("became", "become"),
    ("began", "begin"),
    ("begun", "begin"),
    ("bought", "buy"),
    ("broke", "break"),
    ("broken", "break"),
    ("brought", "bring"),
    ("built", "build"),
    ("came", "come"),
    ("caught", "catch"),
    ("chose", "choose"),
    ("chosen", "choose"),
    ("dealt", "deal"),
    ("drank", "drink"),
    ("drawn", "draw"),
    ("drew", "draw"),
    ("driven", "drive"),
    ("drove", "drive"),
    ("eaten", "eat"),
    ("fed", "feed"),
    ("felt", "feel"),
    ("flew", "fly"),
    ("flown", "fly"),
    ("forgot", "forget"),
    ("forgotten", "forget"),
    ("fought", "fight"),
    ("froze", "freeze"),
    ("frozen", "freeze"),
    ("gave", "give"),
    ("given", "give"),
    ("gone", "go"),
    ("got", "get"),
    ("gotten", "get"),
    ("grew", "grow"),
    ("grown", "grow"),
    ("heard", "hear"),
    ("held", "hold"),
    ("hid", "hide"),
    ("hidden", "hide"),
    ("kept", "keep"),
    ("knew", "know"),
    ("known", "know"),
    ("led", "lead"),
    ("left", "leave"),
    ("lent", "lend"),
    ("lost", "lose"),
    ("made", "make"),
    ("meant", "mean"),
    ("met", "meet"),
    ("paid", "pay"),
    ("ran", "run"),
    ("rode", "ride"),
    ("said", "say"),
    ("sang", "sing"),
    ("sat", "sit"),
    ("seen", "see"),
    ("sent", "send"),
    ("shook", "shake"),
    ("shot", "shoot"),
    ("shown", "show"),
    ("slept", "sleep"),
    ("sold", "sell"),
    ("sought", "seek"),
    ("spent", "spend"),
    ("spoke", "speak"),
    ("spoken", "speak"),
    ("stole", "steal"),
    ("stolen", "steal"),
    ("stood", "stand"),
    ("struck", "strike"),
    ("sung", "sing"),
    ("swam", "swim"),
    ("taken", "take"),
    ("taught", "teach"),
    ("thought", "think"),
    ("threw", "throw"),
    ("thrown", "throw"),
    ("told", "tell"),
    ("took", "take"),
    ("understood", "understand"),
    ("went", "go"),
    ("woke", "wake"),
    ("won", "win"),
    ("wore", "wear"),
    ("worn", "wear"),
    ("written", "write"),
    ("wrote", "write"),
];

/// The matching term of the base of the verb form whose term is `term`, or `term` itself.
pub(super) fn base_term(term: String) -> String {
    static BASES: OnceLock<HashMap<String, String>> = OnceLock::new();
    let bases = BASES.get_or_init(|| {
        let term_of = |w: &str| tokens(w).into_iter().next().map(|t| t.term);
        FORMS.iter().filter_map(|(form, base)| Some((term_of(form)?, term_of(base)?))).collect()
    });
    bases.get(&term).cloned().unwrap_or(term)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(word: &str) -> String {
        base_term(tokens(word).remove(0).term)
    }

    #[test]
    fn a_form_reads_as_its_base_and_other_words_as_themselves() {
        assert_eq!(term("led"), term("lead"));
        assert_eq!(term("Led"), term("leads"));
        assert_eq!(term("written"), term("writes"));
        assert_eq!(term("bought"), term("buying"));
        assert_ne!(term("founded"), term("find"), "to found is not to find");
        assert_eq!(term("billing"), tokens("billing").remove(0).term);
    }
}
