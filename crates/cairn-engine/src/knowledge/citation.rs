//! Citations (DESIGN.md "Reply shapes"): where a returned fact or passage comes from, with the
//! quoted sentence and its Unicode code-point `start`/`end` in the stored document text. A quote
//! is found on the document's code points and then checked by slicing the stored text again
//! (`text::char_slice`); a quote that does not slice back, or no longer names what it should,
//! is never returned: the span is `null` and `span_state` says why.

use super::docs::{Document, PassageSpan};
use super::graph::{Relation, Source};
use super::import::{IMPORT_MAP, reserved_key};
use super::part::Partition;
use super::records::decode;
use super::trees::DOC;
use super::wire::{id, iso_ms};
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::text::{Linker, char_slice, mentions_name, sentences};
use serde_json::{Value, json};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A stored document with its sentences as code-point spans, cut on first use: a passage's
/// citation needs none, and a document may be long.
pub(crate) struct Cited {
    pub doc: Document,
    sentences: OnceCell<Vec<(usize, usize)>>,
}

impl Cited {
    fn new(doc: Document) -> Cited {
        Cited { doc, sentences: OnceCell::new() }
    }

    fn sentences(&self) -> &[(usize, usize)] {
        self.sentences.get_or_init(|| sentences(&self.doc.text).into_iter().map(|s| (s.start, s.end)).collect())
    }
}

/// Builds citations for one reply, reading each document once.
pub(crate) struct Citer<'a> {
    snap: &'a Snapshot,
    part: &'a Partition,
    docs: HashMap<u64, Option<Rc<Cited>>>,
    /// Drop the quoted text (keep `start`/`end`).
    pub compact: bool,
}

impl<'a> Citer<'a> {
    pub(crate) fn new(snap: &'a Snapshot, part: &'a Partition, compact: bool) -> Self {
        Citer { snap, part, docs: HashMap::new(), compact }
    }

    /// The stored document `doc_id` of this partition, or `None` when it is gone.
    pub(crate) fn document(&mut self, doc_id: u64) -> Result<Option<Rc<Cited>>> {
        if let Some(d) = self.docs.get(&doc_id) {
            return Ok(d.clone());
        }
        let doc: Option<Document> = self
            .snap
            .get(DOC, &self.part.key(&[&doc_id.to_be_bytes()]))?
            .map(|b| decode(&b, "document"))
            .transpose()?;
        let cited = doc.map(|doc| Rc::new(Cited::new(doc)));
        self.docs.insert(doc_id, cited.clone());
        Ok(cited)
    }

    /// The citation of a stored relation whose ends are named `names` (from, to): for a document
    /// source, the first sentence naming both ends, else the first naming the subject.
    pub(crate) fn relation(&mut self, rel: &Relation, names: (&str, &str)) -> Result<Value> {
        let (doc_id, label) = match &rel.source {
            Source::Asserted { label } => {
                return Ok(json!({
                    "source": { "kind": "asserted", "doc_id": null, "name": label, "ingested_at": iso_ms(rel.recorded_at) },
                    "span": null,
                    "span_state": "asserted",
                }));
            }
            Source::Document { doc_id, label } => (*doc_id, label.clone()),
        };
        let Some(cited) = self.document(doc_id)? else {
            // A fact imported before its document reserved the id; else the document was forgotten.
            let state = if self.snap.get(IMPORT_MAP, &reserved_key(self.part, doc_id))?.is_some() {
                "source_not_imported"
            } else {
                "source_forgotten"
            };
            return Ok(json!({
                "source": { "kind": "document", "doc_id": id(doc_id), "name": label, "ingested_at": null },
                "span": null,
                "span_state": state,
            }));
        };
        let source = source(&cited.doc);
        let Some((start, end)) = quote(&cited, names) else {
            return Ok(json!({ "source": source, "span": null, "span_state": "not_quoted" }));
        };
        Ok(self
            .checked(&source, &cited.doc.text, start, end, |q| mentions_name(q, names.0) || mentions_name(q, names.1)))
    }

    /// The citation of a passage: the passage itself.
    pub(crate) fn passage(&self, doc: &Document, span: PassageSpan) -> Value {
        self.checked(&source(doc), &doc.text, span.start, span.end, |q| !q.trim().is_empty())
    }

    /// `{source, span}` when `[start, end)` slices `text` and the quote passes `still`, else a
    /// `mismatch` with no span.
    fn checked(&self, source: &Value, text: &str, start: usize, end: usize, still: impl Fn(&str) -> bool) -> Value {
        match char_slice(text, start, end).filter(|q| still(q)) {
            Some(_) if self.compact => json!({ "source": source, "span": { "start": start, "end": end } }),
            Some(quote) => json!({ "source": source, "span": { "text": quote, "start": start, "end": end } }),
            None => json!({ "source": source, "span": null, "span_state": "mismatch" }),
        }
    }
}

fn source(doc: &Document) -> Value {
    document_source(doc.id, doc.label.as_deref(), doc.ingested_at)
}

/// A citation's `source` for stored document `doc_id`: the label it was stored with (`name`)
/// and when. `remember` answers with it too, so a caller cites a document as recall will.
pub(crate) fn document_source(doc_id: u64, label: Option<&str>, ingested_at: i64) -> Value {
    json!({ "kind": "document", "doc_id": id(doc_id), "name": label, "ingested_at": iso_ms(ingested_at) })
}

/// The code-point span of the first sentence of `cited` that names both `names`: the sentence
/// that states the fact. A sentence naming only one end states something else ("Priya Raman
/// works at Acme Corp." for Priya `married_to` Tom), so there is then no quote. A name that runs
/// across a sentence boundary (hard-wrapped text: "hired Jonas\nBerg", where a line break ends a
/// sentence) joins the sentences it crosses, so a quote never ends inside a name it cites.
fn quote(cited: &Cited, names: (&str, &str)) -> Option<(usize, usize)> {
    let linker = Linker::new([(0, names.0), (1, names.1)]);
    let mentions = linker.find(&cited.doc.text);
    let sentences = joined(cited.sentences(), mentions.iter().map(|m| (m.start, m.end)));
    let sentence_of = |at: usize| {
        let i = sentences.partition_point(|&(_, end)| end <= at);
        sentences.get(i).filter(|&&(start, _)| start <= at).copied()
    };
    let mut seen: HashMap<(usize, usize), u8> = HashMap::new();
    for m in &mentions {
        let Some(s) = sentence_of(m.start) else { continue };
        *seen.entry(s).or_insert(0) |= if m.entity == 0 { 1 } else { 2 };
    }
    seen.into_iter().filter(|&(_, b)| b == 3).map(|(s, _)| s).min()
}

/// `sentences` (in order, not overlapping) with the ones each span `[start, end)` runs across
/// joined into one.
fn joined(sentences: &[(usize, usize)], spans: impl Iterator<Item = (usize, usize)>) -> Vec<(usize, usize)> {
    let index = |at: usize| sentences.partition_point(|&(_, end)| end <= at);
    // `join[i]`: sentence i goes on into sentence i + 1.
    let mut join = vec![false; sentences.len()];
    for (start, end) in spans {
        let (first, last) = (index(start), index(end.saturating_sub(1)));
        join.iter_mut().take(last.min(sentences.len())).skip(first).for_each(|j| *j = true);
    }
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(sentences.len());
    let mut open = false;
    for (i, &(start, end)) in sentences.iter().enumerate() {
        match out.last_mut() {
            Some(last) if open => last.1 = end,
            _ => out.push((start, end)),
        }
        open = join[i];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cited(text: &str) -> Cited {
        let doc = Document { id: 1, text: text.into(), label: None, date: None, ingested_at: 0 };
        Cited::new(doc)
    }

    #[test]
    fn the_quote_is_the_sentence_naming_both_ends_or_none() {
        let c = cited("Priya 🎉 is here. Ünal met Priya at Acme. Acme is big.");
        let (s, e) = quote(&c, ("Priya", "Acme")).unwrap();
        assert_eq!(char_slice(&c.doc.text, s, e), Some("Ünal met Priya at Acme."));
        // A sentence naming the subject alone does not state the fact.
        assert_eq!(quote(&c, ("Priya", "Globex")), None);
        assert_eq!(quote(&c, ("Zed", "Acme")), None);
        let c = cited("Priya Raman works at Acme Corp. She is married to Tom Lee.");
        assert_eq!(quote(&c, ("Priya Raman", "Tom Lee")), None);
    }

    #[test]
    fn names_are_found_in_decomposed_text() {
        let c = cited("Rene\u{301} Dupont teaches in Lyon. He was born in Malmo\u{308}.");
        let (s, e) = quote(&c, ("Ren\u{e9} Dupont", "Lyon")).unwrap();
        assert_eq!(char_slice(&c.doc.text, s, e), Some("Rene\u{301} Dupont teaches in Lyon."));
        assert!(quote(&c, ("He", "Malm\u{f6}")).is_some());
    }

    #[test]
    fn a_name_wrapped_across_lines_is_quoted_whole() {
        let text = "Hi team,\nquick update: Priya Raman has hired Jonas\nBerg as head of platform. He starts in May.";
        let c = cited(text);
        let (s, e) = quote(&c, ("Priya Raman", "Jonas Berg")).unwrap();
        assert_eq!(
            char_slice(&c.doc.text, s, e),
            Some("quick update: Priya Raman has hired Jonas\nBerg as head of platform.")
        );
        let c = cited("Attendees: PRIYA RAMAN, Jonas\nBerg.\nAgenda: hiring.");
        let (s, e) = quote(&c, ("Priya Raman", "Jonas Berg")).unwrap();
        assert_eq!(char_slice(&c.doc.text, s, e), Some("Attendees: PRIYA RAMAN, Jonas\nBerg."));
    }
}
