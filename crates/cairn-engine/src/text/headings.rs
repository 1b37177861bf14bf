//! Markdown headings: where a document's sections start, and the heading path a passage sits
//! under, which gives a passage that never repeats its section's topic the words of that topic for
//! full text and linking (its stored text and spans stay as they are).

/// A markdown heading: ATX (`#` … `######`) or setext (a line underlined with `=` or `-`).
/// Code-point offsets into the text it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 for `#` and `===`, 2 for `##` and `---`, … 6.
    pub level: u8,
    /// Where its line starts: a section starts here.
    pub line_start: usize,
    /// Its title, without the `#` marks or the underline, trimmed.
    pub title_start: usize,
    pub title_end: usize,
    /// Where it ends: its line's end, or its underline's.
    pub line_end: usize,
    /// The title's text, read once: slicing it from the document by code points for every
    /// passage under it cost the length of the text each time.
    pub title: String,
}

/// A line of the text: code-point offsets of its start and end (before the line break).
struct Line<'a> {
    start: usize,
    text: &'a str,
}

/// The headings of `text`, in order. Lines inside fenced code (```` ``` ```` or `~~~`) are code,
/// never headings (a shell comment `# restart the pool` in a runbook is not a section). A heading
/// whose title holds no letter or digit is none: it names no topic.
#[must_use]
pub fn headings(text: &str) -> Vec<Heading> {
    let lines = lines(text);
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        let body = line.text.trim_start_matches(' ');
        let indent = line.text.len() - body.len();
        if indent <= 3
            && let Some(open) = fence_of(body)
        {
            match fence {
                None => fence = Some(open),
                Some((c, n)) if open.0 == c && open.1 >= n && body.trim_end().chars().all(|x| x == c) => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() || indent > 3 {
            continue;
        }
        if let Some(h) = atx(line, indent) {
            out.push(h);
        } else if let Some(h) = setext(&lines, i) {
            out.push(h);
        }
    }
    out.retain(|h| h.title.chars().any(char::is_alphanumeric));
    out
}

/// The titles of the headings above the span `[start, end)` (of the text `all` was read from)
/// that the span sits under, outermost first: each heading closes those of its level and deeper,
/// and so do the headings the span holds itself, which are not in the path (they are its text).
/// So the passage `# Data team\nThe team has two engineers.` after a `# Platform team` section
/// is under no heading, not under "Platform team". `start == end` gives the path of a point.
#[must_use]
pub fn heading_path(all: &[Heading], start: usize, end: usize) -> Vec<String> {
    let mut path: Vec<&Heading> = Vec::new();
    for h in all.iter().take_while(|h| h.title_start < end) {
        path.retain(|p| p.level < h.level);
        path.push(h);
    }
    path.iter().filter(|h| h.title_start < start).map(|h| h.title.clone()).collect()
}

/// The lines of `text` with their code-point starts; `\r\n`, `\n` and `\r` end a line.
fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let (mut start, mut from, mut count) = (0, 0, 0);
    let mut chars = text.char_indices().peekable();
    while let Some((b, c)) = chars.next() {
        if c == '\n' || c == '\r' {
            out.push(Line { start, text: &text[from..b] });
            let mut next = b + 1;
            count += 1;
            if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
                chars.next();
                next += 1;
                count += 1;
            }
            from = next;
            start = count;
        } else {
            count += 1;
        }
    }
    out.push(Line { start, text: &text[from..] });
    out
}

/// The fence character and its run length, when `body` opens or closes fenced code.
fn fence_of(body: &str) -> Option<(char, usize)> {
    let c = body.chars().next().filter(|&c| c == '`' || c == '~')?;
    let n = body.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

/// An ATX heading: 1–6 `#`, then a space, a tab or the end of the line; an optional closing run
/// of `#` (after a space) is not part of the title.
fn atx(line: &Line<'_>, indent: usize) -> Option<Heading> {
    let body = &line.text[indent..];
    let marks = body.chars().take_while(|&c| c == '#').count();
    let rest = &body[marks..];
    if !(1..=6).contains(&marks) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut title = rest.trim_end();
    let closed = title.trim_end_matches('#');
    if closed.is_empty() || closed.ends_with([' ', '\t']) {
        title = closed;
    }
    let lead = rest.len() - rest.trim_start().len();
    let title = title.trim();
    let title_start = line.start + indent + marks + rest[..lead.min(rest.len())].chars().count();
    Some(Heading {
        level: u8::try_from(marks).ok()?,
        line_start: line.start,
        title_start,
        title_end: title_start + title.chars().count(),
        line_end: line.start + line.text.chars().count(),
        title: title.to_owned(),
    })
}

/// A setext heading at line `i`: a line of text after a blank line (or the start), underlined by
/// a line of only `=` (level 1) or `-` (level 2). One line only, and not a list item or a quote,
/// so `- item` over `---` (a rule) and YAML front matter (`---` above) are not headings.
fn setext(lines: &[Line<'_>], i: usize) -> Option<Heading> {
    let under = lines.get(i + 1)?.text.trim();
    let level = match under.chars().next()? {
        '=' if under.chars().all(|c| c == '=') => 1,
        '-' if under.chars().all(|c| c == '-') => 2,
        _ => return None,
    };
    if i > 0 && !lines[i - 1].text.trim().is_empty() {
        return None;
    }
    let line = &lines[i];
    let title = line.text.trim();
    let listed = title.starts_with(['-', '*', '+', '>', '|'])
        || title.split_once(". ").is_some_and(|(n, _)| n.parse::<u32>().is_ok());
    if title.is_empty() || listed || line.text.len() - line.text.trim_start().len() > 3 {
        return None;
    }
    let title_start = line.start + line.text[..line.text.len() - line.text.trim_start().len()].chars().count();
    let below = &lines[i + 1];
    let line_end = below.start + below.text.chars().count();
    Some(Heading {
        level,
        line_start: line.start,
        title_start,
        title_end: title_start + title.chars().count(),
        line_end,
        title: title.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::char_slice;

    fn titles(text: &str) -> Vec<(u8, &str)> {
        let all = headings(text);
        for h in &all {
            assert_eq!(char_slice(text, h.title_start, h.title_end), Some(h.title.as_str()), "{h:?}");
        }
        all.iter().map(|h| (h.level, char_slice(text, h.title_start, h.title_end).unwrap())).collect()
    }

    #[test]
    fn atx_and_setext_headings_with_their_levels() {
        let text = "# Platform team #\n\nIntro.\n\n## Members\nAli.\n###### Deep ##\n#NotOne\n####### seven\n\n\
                    Setext one\n==========\n\nSetext two\n---\n";
        assert_eq!(
            titles(text),
            [(1, "Platform team"), (2, "Members"), (6, "Deep"), (1, "Setext one"), (2, "Setext two")]
        );
    }

    #[test]
    fn code_fences_rules_lists_and_front_matter_are_not_headings() {
        let text = "---\ntitle: x\n---\n\n```bash\n# restart the pool\n```\n\n- item\n---\n\
                    a paragraph line\nanother\n---\n\n~~~~\n## inside\n~~~\n## still inside\n~~~~\n## Out\n#\n# ---\n";
        assert_eq!(titles(text), [(2, "Out")]);
    }

    #[test]
    fn offsets_are_code_points_and_crlf_lines_are_read() {
        let text = "Caf\u{e9} \u{1F600}\r\n\r\n## \u{c9}quipe \u{1F600}\r\nBody.";
        assert_eq!(titles(text), [(2, "\u{c9}quipe \u{1F600}")]);
    }

    #[test]
    fn the_path_keeps_the_outer_headings_a_deeper_one_sits_under() {
        let text = "# A\n## B\n### C\ntext\n## D\nmore";
        let all = headings(text);
        let at = |s: &str| text.find(s).unwrap();
        let point = |s: &str| heading_path(&all, at(s), at(s));
        assert_eq!(point("text"), ["A", "B", "C"]);
        assert_eq!(point("more"), ["A", "D"]);
        assert_eq!(heading_path(&all, 0, 0), Vec::<String>::new());
    }

    #[test]
    fn a_heading_the_span_holds_closes_the_path_above_it() {
        // Found adding the path to context items: a passage opening with `# Data team` was read
        // under "Platform team", the heading it closes.
        let text = "# Platform team\nThe team has three engineers.\n# Data team\nThe team has two engineers.";
        let all = headings(text);
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(heading_path(&all, at("# Data"), text.chars().count()), Vec::<String>::new());
        assert_eq!(heading_path(&all, at("The team has three"), at("# Data")), ["Platform team"]);
        let text = "# Guide\nIntro.\n## Setup\n### Linux\nRun it.";
        let all = headings(text);
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(heading_path(&all, at("## Setup"), text.len()), ["Guide"]);
        assert_eq!(heading_path(&all, at("Run it"), text.len()), ["Guide", "Setup", "Linux"]);
    }
}
