//! Irregular English verb forms, read as their base when grounding judges coverage: the stemmer
//! joins "joined" and "join" but never "led" and "lead", so "Did Priya Raman lead the billing
//! rewrite?" was left `related` by "She led the billing rewrite" (found by an audit). Only for
//! judging: the full-text index keeps its terms.
//!
//! Left out on purpose, forms that are just as often another word: "found" (to found a company),
//! "saw", "lay", "bore", "wound", "ground", "bound", "bent", "lit", "dove", "resent"; and forms of
//! function words ("did", "had", "been").

use super::derived_words::NOUNS;
use crate::text::tokens;
use std::collections::HashMap;
use std::sync::OnceLock;

/// (form, base): past tenses and participles that no stemming rule takes to their base.
const FORMS: &[(&str, &str)] = &[
    ("arisen", "arise"),
    ("arose", "arise"),
    ("ate", "eat"),
    ("awoke", "awake"),
    ("became", "become"),
    ("began", "begin"),
    ("begun", "begin"),
    ("beheld", "behold"),
    ("bled", "bleed"),
    ("bought", "buy"),
    ("bred", "breed"),
    ("broke", "break"),
    ("broken", "break"),
    ("brought", "bring"),
    ("built", "build"),
    ("came", "come"),
    ("caught", "catch"),
    ("chose", "choose"),
    ("chosen", "choose"),
    ("clung", "cling"),
    ("crept", "creep"),
    ("dealt", "deal"),
    ("drank", "drink"),
    ("drawn", "draw"),
    ("drew", "draw"),
    ("driven", "drive"),
    ("drove", "drive"),
    ("drunk", "drink"),
    ("dug", "dig"),
    ("eaten", "eat"),
    ("fallen", "fall"),
    ("fed", "feed"),
    ("fell", "fall"),
    ("felt", "feel"),
    ("fled", "flee"),
    ("flew", "fly"),
    ("flown", "fly"),
    ("forbade", "forbid"),
    ("forbidden", "forbid"),
    ("foresaw", "foresee"),
    ("foreseen", "foresee"),
    ("forgave", "forgive"),
    ("forgiven", "forgive"),
    ("forgot", "forget"),
    ("forgotten", "forget"),
    ("forwent", "forgo"),
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
    ("hung", "hang"),
    ("kept", "keep"),
    ("knelt", "kneel"),
    ("knew", "know"),
    ("known", "know"),
    ("leapt", "leap"),
    ("led", "lead"),
    ("left", "leave"),
    ("lent", "lend"),
    ("lost", "lose"),
    ("made", "make"),
    ("meant", "mean"),
    ("met", "meet"),
    ("mislaid", "mislay"),
    ("misled", "mislead"),
    ("mistaken", "mistake"),
    ("mistook", "mistake"),
    ("misunderstood", "misunderstand"),
    ("outgrew", "outgrow"),
    ("outgrown", "outgrow"),
    ("outran", "outrun"),
    ("overcame", "overcome"),
    ("overheard", "overhear"),
    ("overpaid", "overpay"),
    ("overran", "overrun"),
    ("overridden", "override"),
    ("overrode", "override"),
    ("oversaw", "oversee"),
    ("overseen", "oversee"),
    ("overslept", "oversleep"),
    ("oversold", "oversell"),
    ("overtaken", "overtake"),
    ("overthrew", "overthrow"),
    ("overthrown", "overthrow"),
    ("overtook", "overtake"),
    ("paid", "pay"),
    ("partook", "partake"),
    ("ran", "run"),
    ("rang", "ring"),
    ("rebuilt", "rebuild"),
    ("redid", "redo"),
    ("redone", "redo"),
    ("remade", "remake"),
    ("repaid", "repay"),
    ("reran", "rerun"),
    ("resold", "resell"),
    ("rethought", "rethink"),
    ("retold", "retell"),
    ("rewound", "rewind"),
    ("rewritten", "rewrite"),
    ("rewrote", "rewrite"),
    ("ridden", "ride"),
    ("risen", "rise"),
    ("rode", "ride"),
    ("rose", "rise"),
    ("rung", "ring"),
    ("said", "say"),
    ("sang", "sing"),
    ("sank", "sink"),
    ("sat", "sit"),
    ("seen", "see"),
    ("sent", "send"),
    ("sewn", "sew"),
    ("shaken", "shake"),
    ("shook", "shake"),
    ("shot", "shoot"),
    ("shown", "show"),
    ("shrank", "shrink"),
    ("shrunk", "shrink"),
    ("slept", "sleep"),
    ("slid", "slide"),
    ("sold", "sell"),
    ("sought", "seek"),
    ("sped", "speed"),
    ("spent", "spend"),
    ("spoke", "speak"),
    ("spoken", "speak"),
    ("sprang", "spring"),
    ("sprung", "spring"),
    ("spun", "spin"),
    ("stole", "steal"),
    ("stolen", "steal"),
    ("stood", "stand"),
    ("striven", "strive"),
    ("strove", "strive"),
    ("struck", "strike"),
    ("stuck", "stick"),
    ("stung", "sting"),
    ("sung", "sing"),
    ("sunk", "sink"),
    ("swam", "swim"),
    ("swept", "sweep"),
    ("swore", "swear"),
    ("sworn", "swear"),
    ("swung", "swing"),
    ("taken", "take"),
    ("taught", "teach"),
    ("thought", "think"),
    ("threw", "throw"),
    ("thrown", "throw"),
    ("told", "tell"),
    ("took", "take"),
    ("tore", "tear"),
    ("torn", "tear"),
    ("undergone", "undergo"),
    ("understood", "understand"),
    ("undertaken", "undertake"),
    ("undertook", "undertake"),
    ("underwent", "undergo"),
    ("undid", "undo"),
    ("undone", "undo"),
    ("unwound", "unwind"),
    ("upheld", "uphold"),
    ("went", "go"),
    ("withdrawn", "withdraw"),
    ("withdrew", "withdraw"),
    ("withheld", "withhold"),
    ("withstood", "withstand"),
    ("woke", "wake"),
    ("woken", "wake"),
    ("won", "win"),
    ("wore", "wear"),
    ("worn", "wear"),
    ("wove", "weave"),
    ("woven", "weave"),
    ("written", "write"),
    ("wrote", "write"),
    ("wrung", "wring"),
];

/// The matching term of the base of the verb form whose term is `term` (or of the verb a noun is
/// made from: `derived_words`), or `term` itself.
pub(super) fn base_term(term: String) -> String {
    static BASES: OnceLock<HashMap<String, String>> = OnceLock::new();
    let bases = BASES.get_or_init(|| {
        let term_of = |w: &str| tokens(w).into_iter().next().map(|t| t.term);
        let pairs = FORMS.iter().chain(NOUNS);
        pairs.filter_map(|(form, base)| Some((term_of(form)?, term_of(base)?))).collect()
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
        assert_eq!(term("oversaw"), term("oversees"));
        assert_eq!(term("rewrote"), term("rewrite"));
        assert_ne!(term("founded"), term("find"), "to found is not to find");
        assert_eq!(term("billing"), tokens("billing").remove(0).term);
    }
}
