//! Questions that ask for the newest of something ("What broke in the last incident?", "the
//! latest release"): `context` ranks the dated items it found newest first as one more channel,
//! so the newest incident comes first rather than whichever the other channels liked best. Found
//! by an audit: "latest incident" ordered the incidents 11-19, 11-13, 11-26, 11-06, a passage's
//! date playing no part in ranking.
//!
//! The word itself stays a content word: no item can show that it is the newest of all stored,
//! so a verdict never rests on it.

use super::context::{Item, ItemKind};
use super::valid;

/// Words after "last" that ask for a position, not a time ("last name", "the last step").
const NOT_TIME: &[&str] = &[
    "chapter",
    "character",
    "characters",
    "column",
    "digit",
    "digits",
    "item",
    "items",
    "letter",
    "line",
    "lines",
    "name",
    "names",
    "one",
    "ones",
    "page",
    "pages",
    "part",
    "row",
    "step",
    "steps",
    "word",
    "words",
];

/// Whether `question` asks for the newest: "latest", "newest", "most recent(ly)", "recent(ly)",
/// or "last" before a word that is not a position ("last name") and not after "at" ("at last").
#[must_use]
pub(super) fn asks_latest(question: &str) -> bool {
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.iter().enumerate().any(|(i, w)| match w.as_str() {
        "latest" | "newest" | "recent" | "recently" => true,
        "last" => {
            let after_at = i > 0 && words[i - 1] == "at";
            let next = words.get(i + 1).map(String::as_str);
            !after_at && next.is_some_and(|n| NOT_TIME.binary_search(&n).is_err())
        }
        _ => false,
    })
}

/// The instant an item speaks of: a passage's document date, a fact's start or the date it was
/// said; `None` for an undated item or an entity.
fn instant(item: &Item) -> Option<i64> {
    let date = match &item.kind {
        ItemKind::Passage { date, .. } => date.as_deref(),
        ItemKind::Fact { relation, .. } => relation.valid_from.as_deref().or(relation.source_date.as_deref()),
        ItemKind::Derived { fact } => fact.span.valid_from.as_deref(),
        ItemKind::Entity { .. } => None,
    };
    date.and_then(valid::instant)
}

/// The indexes of the dated `items`, newest first (equal instants in the order given).
#[must_use]
pub(super) fn newest_first(items: &[&Item]) -> Vec<usize> {
    let mut dated: Vec<(usize, i64)> =
        items.iter().enumerate().filter_map(|(i, item)| Some((i, instant(item)?))).collect();
    dated.sort_by_key(|&(i, at)| (std::cmp::Reverse(at), i));
    dated.into_iter().map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_latest_reads_the_recency_words_and_passes_over_positions() {
        for q in [
            "What broke in the last incident?",
            "latest release notes",
            "Who deployed most recently?",
            "What are the newest decisions?",
            "What changed in the last 3 releases?",
        ] {
            assert!(asks_latest(q), "{q}");
        }
        for q in ["What is Priya's last name?", "What is the last step of the deploy?", "At last, who won?", "last"] {
            assert!(!asks_latest(q), "{q}");
        }
    }

    #[test]
    fn not_time_is_sorted() {
        assert!(NOT_TIME.windows(2).all(|w| w[0] < w[1]));
    }
}
