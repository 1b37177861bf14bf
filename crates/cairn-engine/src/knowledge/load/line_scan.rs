//! A reader for the shape nearly every line of a load has: one flat object whose values are
//! strings without escapes, `null`, a `types` array of such strings, an empty `attributes` object
//! and a flat `provenance` object. It gives the `Line` that `serde_json` would, and gives up
//! (`None`) on anything else (an escape, a number, a nested value, an unknown or repeated key,
//! bytes that are not UTF-8 or not JSON), which then goes to `serde_json` as before, so a line
//! is read alike either way. Deserialising with `serde_json` measured about a sixth of a load's
//! CPU (its string scanning and its visitor per field, in a profile); here a string's end is
//! found with one `memchr2`, and parsing a load's lines took 138–169 ms instead of 190–218.

use super::{Line, ProvenanceLine};
use serde_json::Map;
use std::borrow::Cow;

/// A set of `Line`'s fields, one bit each in `FIELDS` order: which keys of a line were given as
/// `null` (`Line` reads them as absent), or the keys a check asks about.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(super) struct Keys(u32);

/// `Line`'s fields as a line spells them; a key's bit in `Nulls` is its place here.
const FIELDS: [&str; 19] = [
    "kind",
    "id",
    "name",
    "types",
    "attributes",
    "recorded_at",
    "ended_at",
    "from",
    "to",
    "from_name",
    "to_name",
    "type",
    "valid_from",
    "valid_to",
    "source_date",
    "agent",
    "provenance",
    "version_of",
    "origin",
];

impl Keys {
    /// The set of `names`, each a field of `Line` (checked when the constant is built).
    pub(super) const fn of(names: &[&str]) -> Keys {
        let mut bits = 0;
        let mut i = 0;
        while i < names.len() {
            bits |= 1 << field(names[i].as_bytes()).expect("a field of Line");
            i += 1;
        }
        Keys(bits)
    }

    /// The fields of `Line` not in this set.
    pub(super) const fn others(self) -> Keys {
        Keys(!self.0 & ((1 << FIELDS.len()) - 1))
    }

    pub(super) fn meets(self, other: Keys) -> bool {
        self.0 & other.0 != 0
    }
}

/// `key`'s place in `FIELDS`.
const fn field(key: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at < FIELDS.len() {
        if same(FIELDS[at].as_bytes(), key) {
            return Some(at);
        }
        at += 1;
    }
    None
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A position in a line that is valid UTF-8.
struct Cursor<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// The next byte after JSON whitespace, which is skipped.
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.s.as_bytes();
        while bytes.get(self.at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
        bytes.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// A string holding no escape and no control character (`serde_json` refuses those raw).
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let rest = &self.s.as_bytes()[self.at..];
        let len = memchr::memchr2(b'"', b'\\', rest)?;
        if rest[len] != b'"' || rest[..len].iter().any(|&b| b < 0x20) {
            return None;
        }
        let out = &self.s[self.at..self.at + len];
        self.at += len + 1;
        Some(out)
    }

    fn null(&mut self) -> Option<()> {
        (self.peek()? == b'n' && self.s.as_bytes()[self.at..].starts_with(b"null")).then(|| self.at += 4)
    }

    /// After a member: `true` at the object's closing brace, `false` at a comma.
    fn next_member(&mut self) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.at += 1;
                Some(false)
            }
            b'}' => {
                self.at += 1;
                Some(true)
            }
            _ => None,
        }
    }

    /// The members of an object (its opening brace read): each key handed to `member` with the
    /// cursor at its value, which `member` reads (and gives up on a key it has seen).
    fn members(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            member(self, key)?;
            if self.next_member()? {
                return Some(());
            }
        }
    }

    /// An array of strings.
    fn strings(&mut self) -> Option<Vec<String>> {
        self.eat(b'[')?;
        let mut out = Vec::new();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(out);
        }
        loop {
            out.push(self.string()?.to_owned());
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    /// An empty object.
    fn empty_object(&mut self) -> Option<Map<String, serde_json::Value>> {
        self.eat(b'{')?;
        self.eat(b'}')?;
        Some(Map::new())
    }

    fn provenance(&mut self) -> Option<ProvenanceLine<'a>> {
        self.eat(b'{')?;
        let mut p = ProvenanceLine::default();
        let mut seen = [false; 3];
        self.members(|c, key| {
            let at = ["kind", "label", "agent"].iter().position(|f| *f == key)?;
            if std::mem::replace(&mut seen[at], true) {
                return None;
            }
            let text = if c.peek()? == b'n' {
                c.null()?;
                None
            } else {
                Some(c.string()?)
            };
            match key {
                "kind" => p.kind = text.map(Cow::Borrowed),
                "label" => p.label = text.map(str::to_owned),
                _ => p.agent = text.map(Cow::Borrowed),
            }
            Some(())
        })?;
        Some(p)
    }
}

/// `raw` read as `Line`, and which of its keys were `null`; `None`: not a line of the shape this
/// reads (`serde_json` reads it instead).
pub(super) fn scan(raw: &[u8]) -> Option<(Line<'_>, Keys)> {
    let mut c = Cursor { s: std::str::from_utf8(raw).ok()?, at: 0 };
    let mut line = Line::default();
    let mut nulls = Keys::default();
    let mut seen = 0u32;
    c.eat(b'{')?;
    c.members(|c, key| {
        let at = field(key.as_bytes())?;
        if seen & (1 << at) != 0 {
            return None;
        }
        seen |= 1 << at;
        if c.peek()? == b'n' {
            c.null()?;
            nulls.0 |= 1 << at;
            return Some(());
        }
        match key {
            "types" => line.types = Some(c.strings()?),
            "attributes" => line.attributes = Some(c.empty_object()?),
            "provenance" => line.provenance = Some(c.provenance()?),
            _ => {
                let s = c.string()?;
                let borrowed = Some(Cow::Borrowed(s));
                match key {
                    "kind" => line.kind = borrowed,
                    "id" => line.id = borrowed,
                    "name" => line.name = borrowed,
                    "recorded_at" => line.recorded_at = borrowed,
                    "ended_at" => line.ended_at = borrowed,
                    "from" => line.from = borrowed,
                    "to" => line.to = borrowed,
                    "from_name" => line.from_name = borrowed,
                    "to_name" => line.to_name = borrowed,
                    "type" => line.rel_type = borrowed,
                    "valid_from" => line.valid_from = Some(s.to_owned()),
                    "valid_to" => line.valid_to = Some(s.to_owned()),
                    "source_date" => line.source_date = Some(s.to_owned()),
                    "agent" => line.agent = borrowed,
                    "version_of" => line.version_of = borrowed,
                    _ => line.origin = borrowed,
                }
            }
        }
        Some(())
    })?;
    (c.peek().is_none()).then_some((line, nulls))
}

#[cfg(test)]
mod tests {
    use super::super::Line;
    use super::{Keys, scan};
    use proptest::prelude::*;

    /// What `serde_json` reads `raw` as.
    fn serde(raw: &[u8]) -> Option<Line<'_>> {
        serde_json::from_slice(raw).ok()
    }

    #[test]
    fn an_export_s_lines_and_the_bench_s_are_read_here() {
        let lines: [&[u8]; 4] = [
            br#"{"kind":"entity","id":"0","name":"Zababa Bababa","types":["person"]}"#,
            br#"{"attributes":{},"id":"7","kind":"entity","name":"Ada","recorded_at":"2026-01-01T00:00:00.000Z","types":[]}"#,
            br#"{"kind":"fact","id":"100000","from":"1","to":"2","from_name":"A","to_name":"B","type":"funds","recorded_at":"2026-12-03T22:22:54.388Z"}"#,
            br#"{"attributes":{},"from":"1","from_name":"A","id":"9","kind":"fact","provenance":{"agent":"bench","kind":"asserted","label":null},"recorded_at":"2026-01-01T00:00:00.000Z","to":"2","to_name":"B","type":"knows","valid_from":null,"valid_to":null}"#,
        ];
        for raw in lines {
            let (line, _) = scan(raw).unwrap_or_else(|| panic!("not read: {}", String::from_utf8_lossy(raw)));
            assert_eq!(Some(line), serde(raw));
        }
    }

    #[test]
    fn keys_given_as_null_are_told_apart_from_absent_ones() {
        let (_, nulls) = scan(br#"{"kind":"fact","name":null,"valid_to":null}"#).unwrap();
        assert!(nulls.meets(Keys::of(&["name"])) && nulls.meets(Keys::of(&["valid_to"])));
        assert!(!nulls.meets(Keys::of(&["types", "kind", "valid_from"])));
        assert_eq!(scan(br#"{"kind":"fact"}"#).unwrap().1, Keys::default());
        let entity = Keys::of(&["kind", "name"]);
        assert!(nulls.meets(entity.others()), "valid_to is not kind or name");
        assert!(!Keys::of(&["name"]).meets(entity.others()));
    }

    #[test]
    fn what_is_not_the_common_shape_is_left_to_serde_json() {
        let lines: [&[u8]; 10] = [
            br#"{"kind":"entity","name":"Say \"hi\""}"#,
            br#"{"kind":"entity","name":"a","name":"b"}"#,
            br#"{"kind":"entity","nick":"a"}"#,
            br#"{"kind":"entity","id":7}"#,
            br#"{"kind":"entity","attributes":{"a":1}}"#,
            br#"{"kind":"entity"} x"#,
            b"{\"kind\":\"entity\",\"name\":\"tab\there\"}",
            b"{\"kind\":\"entity\",\"name\":\"\xff\"}",
            br#"{"kind":"entity","name":"a",}"#,
            br#"{"kind":"fact","provenance":{"kind":"asserted","note":"x"}}"#,
        ];
        for raw in lines {
            assert!(scan(raw).is_none(), "read: {}", String::from_utf8_lossy(raw));
        }
    }

    /// A value of some JSON kind, spelled with or without escapes and odd bytes.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-zA-Z0-9 :.é_-]{0,12}".prop_map(|s| format!("\"{s}\"")),
            1 => "[a-z\"\\\\\t\u{1}é]{0,6}".prop_map(|s| format!("\"{s}\"")),
            1 => "[a-z]{0,4}".prop_map(|s| format!("\"{s}\\u0041\"")),
            2 => Just("null".to_owned()),
            1 => prop_oneof![Just("7"), Just("true"), Just("nul"), Just("nullx"), Just("{}"), Just("{ }"), Just("[]")]
                .prop_map(str::to_owned),
            1 => prop::collection::vec("[a-z\"]{0,4}", 0..3).prop_map(|v| format!("[{}]", v.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(","))),
            1 => Just(r#"{"kind":"asserted","label":null,"agent":"a"}"#.to_owned()),
            1 => Just(r#"{"label":"x","kind":null}"#.to_owned()),
            1 => Just(r#"{"a":1}"#.to_owned()),
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            8 => prop::sample::select(super::FIELDS.to_vec()).prop_map(str::to_owned),
            1 => prop_oneof![Just("nick"), Just("ty\\u0070e"), Just("")].prop_map(str::to_owned),
        ]
    }

    fn space() -> impl Strategy<Value = &'static str> {
        prop_oneof![6 => Just(""), 1 => Just(" "), 1 => Just("\t\r\n ")]
    }

    /// A line: an object of some of those members with whitespace between tokens, sometimes
    /// with bytes after it.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        (
            prop::collection::vec((space(), key(), space(), value(), space()), 0..8),
            space(),
            prop_oneof![
                8 => Just(&b""[..]),
                1 => Just(&b" x"[..]),
                1 => Just(&b"\xff"[..]),
                1 => Just(&b","[..]),
            ],
        )
            .prop_map(|(members, ws, tail)| {
                let body: Vec<String> =
                    members.into_iter().map(|(a, k, b, v, c)| format!("{a}\"{k}\"{b}:{v}{c}")).collect();
                let mut out = format!("{ws}{{{}}}{ws}", body.join(",")).into_bytes();
                out.extend_from_slice(tail);
                out
            })
    }

    /// A value of the shape this reads for field `key`.
    fn plain_value(key: &'static str) -> BoxedStrategy<String> {
        let text = "[a-zA-Z0-9 :.é_-]{0,12}".prop_map(|s| format!("\"{s}\""));
        let or_null = |s: BoxedStrategy<String>| prop_oneof![3 => s, 1 => Just("null".to_owned())].boxed();
        match key {
            "types" => or_null(
                prop::collection::vec("[a-z é]{0,6}", 0..3)
                    .prop_map(|v| format!("[{}]", v.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(" , ")))
                    .boxed(),
            ),
            "attributes" => or_null(prop_oneof![Just("{}".to_owned()), Just("{ }".to_owned())].boxed()),
            "provenance" => or_null(
                prop::sample::subsequence(vec!["kind", "label", "agent"], 0..=3)
                    .prop_flat_map(move |keys| {
                        let values: Vec<_> =
                            keys.iter().map(|_| prop_oneof![text.clone(), Just("null".to_owned())]).collect();
                        (Just(keys), values)
                    })
                    .prop_map(|(keys, values)| {
                        let members: Vec<String> =
                            keys.iter().zip(values).map(|(k, v)| format!("\"{k}\": {v}")).collect();
                        format!("{{{}}}", members.join(","))
                    })
                    .boxed(),
            ),
            _ => or_null(text.boxed()),
        }
    }

    /// A line of distinct fields of `Line`, each with a value of the shape this reads.
    fn plain_line() -> impl Strategy<Value = Vec<u8>> {
        prop::sample::subsequence(super::FIELDS.to_vec(), 0..=super::FIELDS.len())
            .prop_shuffle()
            .prop_flat_map(|keys| {
                let values: Vec<_> = keys.iter().map(|&k| plain_value(k)).collect();
                (Just(keys), values, space())
            })
            .prop_map(|(keys, values, ws)| {
                let members: Vec<String> =
                    keys.iter().zip(values).map(|(k, v)| format!("{ws}\"{k}\"{ws}:{ws}{v}")).collect();
                format!("{ws}{{{}{ws}}}{ws}", members.join(",")).into_bytes()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// A line of the common shape is read here, as `serde_json` reads it.
        #[test]
        fn a_line_of_the_common_shape_is_read_here_as_serde_json_reads_it(raw in plain_line()) {
            let (line, _) = scan(&raw).ok_or_else(|| TestCaseError::fail(String::from_utf8_lossy(&raw).into_owned()))?;
            prop_assert_eq!(Some(line), serde(&raw), "{}", String::from_utf8_lossy(&raw));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// Whatever this reads, `serde_json` reads alike: every field, and `null` as absent.
        #[test]
        fn a_line_read_here_is_what_serde_json_reads(raw in line()) {
            if let Some((line, _)) = scan(&raw) {
                prop_assert_eq!(Some(line), serde(&raw), "{}", String::from_utf8_lossy(&raw));
            }
        }
    }
}
