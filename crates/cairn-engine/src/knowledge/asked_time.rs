//! A question that asks *when* ("When did Acme acquire Beta?", "In what year …", "Since when …")
//! is answered only by an item that says when: text naming a time (a year, a date, a month, a
//! weekday, a clock time, "yesterday", "three weeks ago", "after the outage"), or an item that
//! carries one (a fact's valid time or the date it was said, a passage's document date). Found by
//! an audit: "Acme acquired Beta." grounded "When did Acme acquire Beta?", so a model trusting
//! the verdict had a date to invent; and "What year did Acme acquire Beta?" was left `related`
//! by "In 2019 Acme acquired Beta." for want of the word "year".
//!
//! `context::content_words` asks for `TIMED` in place of the question's time word, and an item
//! covers it as it covers a word (`context::covered`, and the dated items in `context::Judge`).

use unicode_segmentation::UnicodeSegmentation;

/// The matching term a time stands for: no index term looks like it.
pub(super) const TIMED: &str = "\u{231a}";

/// Nouns that make "what/which …" ask for a time ("In what year …", "On which date …").
const TIME_NOUNS: &[&str] = &["century", "date", "day", "decade", "month", "time", "week", "year"];

/// Words after which "when" asks, not joins ("Do you know when …", "Since when …").
const ASKING_BEFORE_WHEN: &[&str] = &["know", "me", "recall", "since", "till", "until"];

/// Questions in Chinese and Japanese that ask when. Their characters are no content of their own
/// (`context::cjk_function_chars`): the ask is covered by a time, not by the words.
pub(super) const CJK_WHEN: &[&str] = &["什么时候", "何时", "哪年", "哪一年", "几时", "いつ", "何年"];

/// Words that place something in time. Not "may" (a modal as often as a month), which counts
/// only beside a number (`names_a_time`).
const TIME_WORDS: &[&str] = &[
    "after",
    "afternoon",
    "ago",
    "apr",
    "april",
    "aug",
    "august",
    "autumn",
    "before",
    "century",
    "dawn",
    "dec",
    "decade",
    "decades",
    "december",
    "during",
    "evening",
    "feb",
    "february",
    "friday",
    "fridays",
    "jan",
    "january",
    "jul",
    "july",
    "jun",
    "june",
    "mar",
    "march",
    "midnight",
    "monday",
    "mondays",
    "month",
    "months",
    "morning",
    "night",
    "noon",
    "nov",
    "november",
    "oct",
    "october",
    "overnight",
    "quarter",
    "saturday",
    "saturdays",
    "sep",
    "sept",
    "september",
    "since",
    "spring",
    "summer",
    "sunday",
    "sundays",
    "thursday",
    "thursdays",
    "today",
    "tomorrow",
    "tonight",
    "tuesday",
    "tuesdays",
    "until",
    "wednesday",
    "wednesdays",
    "week",
    "weekend",
    "weeks",
    "when",
    "while",
    "winter",
    "year",
    "years",
    "yesterday",
];

/// Chinese and Japanese characters that place something in time: after a digit, `年 月 日 时 点
/// 時`; alone, the relative days and weeks.
const CJK_TIME_AFTER_DIGIT: &[char] = &['年', '月', '日', '时', '点', '時'];
const CJK_TIME_WORDS: &[&str] =
    &["昨天", "今天", "明天", "去年", "今年", "明年", "上周", "下周", "星期", "昨日", "今日", "明日", "先週", "来週"];

/// What a question asks when by: the word to report when nothing covers it, and the time noun
/// the ask stands in for ("year" in "What year …", "ago" in "How long ago …", "since" in "Since
/// when …"), which then needs no covering of its own.
pub(super) struct AskedTime {
    pub(super) word: String,
    pub(super) noun: Option<String>,
}

/// Whether `question` asks when, and by which word.
pub(super) fn asks_when(question: &str) -> Option<AskedTime> {
    if let Some(w) = CJK_WHEN.iter().find(|w| question.contains(*w)) {
        return Some(AskedTime { word: (*w).to_owned(), noun: None });
    }
    let words: Vec<&str> = question.unicode_words().collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    for (i, w) in lower.iter().enumerate() {
        let before = i.checked_sub(1).map(|b| lower[b].as_str());
        if w == "when" && before.is_none_or(|b| ASKING_BEFORE_WHEN.contains(&b)) {
            // "Since when …" asks for a start: "since" is part of the ask, not content.
            if let Some(b @ ("since" | "till" | "until")) = before {
                return Some(AskedTime { word: format!("{} {}", words[i - 1], words[i]), noun: Some(b.to_owned()) });
            }
            return Some(AskedTime { word: words[i].to_owned(), noun: None });
        }
        let asked_noun = TIME_NOUNS.contains(&w.as_str()) && matches!(before, Some("what" | "which"));
        // "What time zone …" asks for a zone, not a time.
        if asked_noun && lower.get(i + 1).is_none_or(|n| n != "zone") {
            return Some(AskedTime { word: words[i].to_owned(), noun: Some(w.clone()) });
        }
        if w == "ago" && before == Some("long") && i >= 2 && lower[i - 2] == "how" {
            let word = format!("{} {} {}", words[i - 2], words[i - 1], words[i]);
            return Some(AskedTime { word, noun: Some(w.clone()) });
        }
    }
    None
}

/// Whether `text` names a time: a time word, a year (four digits from 1000 to 2999, or a decade
/// such as "1990s"), a clock time ("10:30", "9am"), a number beside "May" or "am"/"pm", or a CJK
/// date.
pub(super) fn names_a_time(text: &str) -> bool {
    let words: Vec<String> = text.unicode_words().map(str::to_lowercase).collect();
    let number = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    let year = |w: &str| {
        let digits = w.strip_suffix('s').unwrap_or(w);
        digits.len() == 4 && number(digits) && matches!(digits.as_bytes()[0], b'1' | b'2')
    };
    let by_number = |i: usize| {
        let near = |j: Option<usize>| j.and_then(|j| words.get(j)).is_some_and(|w| number(w));
        near(i.checked_sub(1)) || near(Some(i + 1))
    };
    let hour = |w: &str| ["am", "pm"].iter().any(|s| w.strip_suffix(s).is_some_and(number));
    let said = words.iter().enumerate().any(|(i, w)| {
        TIME_WORDS.contains(&w.as_str())
            || year(w)
            || hour(w)
            || (matches!(w.as_str(), "may" | "am" | "pm") && by_number(i))
    });
    said || clock(text) || cjk_time(text)
}

/// Whether `text` holds a clock time: one or two digits, a colon, two digits ("10:30"; UAX #29
/// cuts it into two words, so it is found in the text).
fn clock(text: &str) -> bool {
    let b = text.as_bytes();
    (1..b.len().saturating_sub(2)).any(|i| {
        b[i] == b':'
            && b[i - 1].is_ascii_digit()
            && b[i + 1].is_ascii_digit()
            && b[i + 2].is_ascii_digit()
            && b.get(i + 3).is_none_or(|c| !c.is_ascii_digit())
            && (i < 3 || !b[i - 3].is_ascii_digit() || !b[i - 2].is_ascii_digit())
    })
}

fn cjk_time(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let digit_before =
        |i: usize| i > 0 && (chars[i - 1].is_ascii_digit() || "一二三四五六七八九十〇零".contains(chars[i - 1]));
    chars.iter().enumerate().any(|(i, c)| CJK_TIME_AFTER_DIGIT.contains(c) && digit_before(i))
        || CJK_TIME_WORDS.iter().any(|w| text.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_that_ask_when_and_by_which_word() {
        let by = |q: &str| asks_when(q).map(|a| (a.word, a.noun));
        assert_eq!(by("When did Acme acquire Beta?"), Some(("When".into(), None)));
        assert_eq!(by("Since when has Lin worked at Acme?"), Some(("Since when".into(), Some("since".into()))));
        assert_eq!(by("Do you know when the migration ran?"), Some(("when".into(), None)));
        assert_eq!(by("In what year did Acme acquire Beta?"), Some(("year".into(), Some("year".into()))));
        assert_eq!(by("On which date was the release cut?"), Some(("date".into(), Some("date".into()))));
        assert_eq!(by("How long ago did we migrate?"), Some(("How long ago".into(), Some("ago".into()))));
        assert_eq!(by("Acme 什么时候收购了 Beta？").map(|a| a.0), Some("什么时候".into()));
        // "when" joining two clauses, and a time zone, ask for no time.
        assert_eq!(by("What did Priya say when the build failed?"), None);
        assert_eq!(by("What time zone does Lin use?"), None);
        assert_eq!(by("Who acquired Beta?"), None);
    }

    #[test]
    fn text_that_names_a_time() {
        for said in [
            "In 2019 Acme acquired Beta.",
            "Born in the 1990s.",
            "The standup is at 10:30.",
            "We shipped it yesterday.",
            "Lin joined three weeks ago.",
            "The review happens every Friday.",
            "She was born on 3 May.",
            "Deploys start at 9am.",
            "We rolled back after the outage.",
            "Acme 在2019年收购了 Beta。",
        ] {
            assert!(names_a_time(said), "{said}");
        }
        for said in [
            "Acme acquired Beta.",
            "We may migrate to Postgres.",
            "Port 8080 is open.",
            "It costs 12.50 euros.",
            "Ratio 1:250.",
            "The last step failed.",
        ] {
            assert!(!names_a_time(said), "{said}");
        }
    }
}
