//! A passive sentence that leaves out who does it ("Windows is not supported yet.") means the
//! thing the passage is about: "Cairn Sync runs on macOS and Linux. Windows is not supported
//! yet." says that Cairn Sync does not support Windows. Read a sentence at a time, the second
//! sentence never named Cairn Sync, so "Is Windows supported by Cairn Sync?" and "Does Cairn Sync
//! support Windows?" were `related` with "Windows" and "supported" uncovered (found in QA). Such a
//! sentence is read with "by" and the name the sentence before it opens with (for a passage's
//! first sentence, its document's source label, "Cairn Sync FAQ"), so the direction rule places
//! that name as the one acting (`grounding_rules::Asking::misdirected`).
//!
//! Only the name is carried, never the other words of the sentence before ("Northwind was
//! founded in 2015. Its customer Contoso …" still does not answer "When was Contoso founded?"),
//! and not when the sentence before already names what the passive speaks of: "Acme acquired
//! Beta. Beta was founded in 1999." does not say that Acme founded Beta. The passive must speak of
//! a name ("Windows", "Python 3.8"), not of a thing the sentence before may have nothing to do
//! with: "Acme runs the site. The office was opened in 2019." does not say that Acme opened the
//! office, and "Did Acme open the office?" stays `related`.

use super::grounding_rules::{be_of, participle};
use crate::text::tokens;
use std::collections::BTreeSet;
use unicode_segmentation::UnicodeSegmentation;

/// Sentence `s` with its unsaid agent added ("Windows is not supported yet by Cairn Sync."), when
/// `s` is a passive (`grounding_rules::be_of`) without "by" whose subject holds a word and opens
/// with a name (`opening_name`: "Windows is …", not "The office was …"), and
/// `before` (the sentence before it, or the source label) opens with a name (`opening_name`)
/// sharing no word with that subject.
pub(super) fn with_unsaid_agent(before: &str, s: &str) -> Option<String> {
    let lower: Vec<String> = s.unicode_words().map(|w| w.to_lowercase().replace('\u{2019}', "'")).collect();
    let words: Vec<&str> = lower.iter().map(String::as_str).collect();
    let (be, at) = (1..words.len())
        .filter(|&at| participle(words[at]))
        .find_map(|at| Some((be_of(&words, at).filter(|&b| b > 0)?, at)))?;
    if words[at..].contains(&"by") {
        return None;
    }
    let subject: BTreeSet<String> = tokens(&words[..be].join(" ")).into_iter().map(|t| t.term).collect();
    let before_terms: BTreeSet<String> = tokens(before).into_iter().map(|t| t.term).collect();
    if subject.is_empty() || !subject.is_disjoint(&before_terms) {
        return None;
    }
    opening_name(s)?;
    let name = opening_name(before)?;
    let said = s.trim_end().trim_end_matches(['.', '!', ';', '\u{3002}']);
    Some(format!("{said} by {name}."))
}

/// The run of capitalized words `text` opens with, none a stop word ("Cairn Sync" of "Cairn Sync
/// runs on macOS."); none when it opens otherwise ("The team …", "We …", "faq.md").
fn opening_name(text: &str) -> Option<String> {
    let run: Vec<&str> = text
        .unicode_words()
        .take_while(|w| w.chars().next().is_some_and(char::is_uppercase) && !tokens(w).is_empty())
        .collect();
    (!run.is_empty()).then(|| run.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agentless_passive_is_read_with_the_name_before_it() {
        let before = "Cairn Sync runs on macOS and Linux.";
        assert_eq!(
            with_unsaid_agent(before, "Windows is not supported yet.").as_deref(),
            Some("Windows is not supported yet by Cairn Sync.")
        );
        assert_eq!(
            with_unsaid_agent(before, "Windows is no longer supported.").as_deref(),
            Some("Windows is no longer supported by Cairn Sync.")
        );
        assert_eq!(
            with_unsaid_agent("Cairn Sync FAQ", "Windows isn't supported.").as_deref(),
            Some("Windows isn't supported by Cairn Sync FAQ.")
        );
    }

    #[test]
    fn other_sentences_are_read_as_they_are() {
        let before = "Cairn Sync runs on macOS and Linux.";
        // It says who: nothing is unsaid.
        assert_eq!(with_unsaid_agent(before, "Windows is supported by Acme Tools."), None);
        // Active, or no participle.
        assert_eq!(with_unsaid_agent(before, "Windows needs a plugin."), None);
        assert_eq!(with_unsaid_agent(before, "Windows is a platform."), None);
        // The sentence before names what the passive speaks of: it says something else of it.
        assert_eq!(with_unsaid_agent("Acme acquired Beta.", "Beta was founded in 1999."), None);
        // The passive speaks of a thing, not a name: the sentence before may be about another.
        assert_eq!(with_unsaid_agent("Acme runs the site.", "The office was opened in 2019."), None);
        assert_eq!(with_unsaid_agent(before, "the office was opened in 2019."), None);
        // Nothing named before it.
        assert_eq!(with_unsaid_agent("The team runs on Linux.", "Windows is not supported."), None);
        assert_eq!(with_unsaid_agent("faq.md", "Windows is not supported."), None);
    }
}
