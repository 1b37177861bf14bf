//! Where the caller's knowledge is when its scope answers nothing. A model that stored facts under
//! `scope: "project-x"` and later asked without it read `nothing_stored` as "never stored" (the
//! review that gave `handoff_resume {}` its `elsewhere`); recall and context now name the caller's
//! other scopes that hold what was asked. Read: the caller's tenant and user only (a partition's
//! keys start with them), of its scopes only those the node says the caller's token may use
//! (`readable`; none given, every one), a bounded number of scopes, index lookups only.

use crate::error::Result;
use crate::fts;
use crate::knowledge::api::Caller;
use crate::knowledge::graph::{check_name, entity_by_id};
use crate::knowledge::tally::totals;
use crate::knowledge::trees::{ENT_NAME, keyed_name, trailing_id};
use crate::knowledge::{Partition, user_scopes};
use crate::snapshot::Snapshot;
use crate::text::{char_slice, is_stop_word, may_name_alone, word_tokens};
use serde_json::{Value, json};

/// Scopes read at most: past it the answer says `more` (a user with thousands of scopes).
const READ: usize = 1_000;

/// Scopes named at most.
const NAMED: usize = 10;

/// Name keys read in one scope at most: those beginning with the subject's letters but not with
/// it as whole words ("priyanka" for "priya") are passed over, and a short subject begins many.
const KEYS: usize = 64;

/// The caller's other scopes among `readable`, in key order, at most `READ`; and whether more were left.
fn other_scopes(snap: &Snapshot, caller: &Caller, readable: Option<&[String]>) -> Result<(Vec<Partition>, bool)> {
    let (tenant, user, here) = caller.part.parts();
    let mut out = Vec::new();
    for scope in user_scopes(snap, tenant, user)? {
        if scope == here || readable.is_some_and(|r| !r.contains(&scope)) {
            continue;
        }
        if out.len() == READ {
            return Ok((out, true));
        }
        out.push(Partition::new(tenant, user, &scope)?);
    }
    Ok((out, false))
}

/// The first stored name of `part` that is `folded`, or, when `leading`, begins with it and a
/// space ("priya" → "Priya Raman"): a seek in the name index, as of `snap`.
fn name_in(snap: &Snapshot, part: &Partition, folded: &str, leading: bool) -> Result<Option<String>> {
    let keyed = keyed_name(part, folded);
    for item in snap.prefix(ENT_NAME, &part.key(&[&keyed]))?.take(KEYS) {
        let (key, _) = item?;
        let next = key.get(part.prefix().len() + keyed.len()).copied();
        // The folded name ends where the subject does, or goes on past a space: whole leading words.
        if !(next == Some(0) || (leading && next == Some(b' '))) {
            continue;
        }
        if let Some(e) = entity_by_id(snap, part, trailing_id(&key)?)? {
            return Ok(Some(e.name));
        }
    }
    Ok(None)
}

/// For a recall by `subject` that found nothing: `{scopes: [{scope, name}], more?, hint}`, the
/// caller's other scopes holding an entity named `subject`, or whose name begins with it as whole
/// words unless it is a word that never names alone ("the"); `None` when there is none.
pub(crate) fn named(
    snap: &Snapshot,
    caller: &Caller,
    readable: Option<&[String]>,
    subject: &str,
) -> Result<Option<Value>> {
    let Ok(folded) = check_name(subject, "subject") else { return Ok(None) };
    let leading = folded.contains(' ') || may_name_alone(&folded);
    let (scopes, more) = other_scopes(snap, caller, readable)?;
    let mut found = Vec::new();
    for part in &scopes {
        if let Some(name) = name_in(snap, part, &folded, leading)? {
            found.push((part.parts().2.to_owned(), name));
        }
    }
    let more = more || found.len() > NAMED;
    found.truncate(NAMED);
    let named: Vec<String> = found.iter().map(|(s, n)| format!("{s:?} ({n:?})")).collect();
    Ok((!found.is_empty()).then(|| {
        reply(
            found.iter().map(|(scope, name)| json!({ "scope": scope, "name": name })).collect(),
            more,
            format!(
                "nothing by that name in this scope, but your scope(s) {}{} hold it: send `scope` with one to recall it there",
                named.join(", "),
                if more { " and perhaps more" } else { "" }
            ),
        )
    }))
}

/// Question words weighed per scope at most: each costs a seek in the scope's full-text and name
/// indexes.
const WORDS: usize = 32;

/// The distinct words of `question` that may match (no stop word), as (index term, folded name).
fn question_words(question: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for t in word_tokens(question) {
        let spelled = char_slice(question, t.start, t.end).unwrap_or(&t.term);
        let Ok(folded) = check_name(spelled, "word") else { continue };
        if is_stop_word(&folded) || out.iter().any(|(term, _)| *term == t.term) {
            continue;
        }
        out.push((t.term, folded));
        if out.len() == WORDS {
            break;
        }
    }
    out
}

/// How many of `words` `part` holds: in a passage (its full-text index), or as the whole
/// leading words of an entity's name ("ledger" → "Ledger", "priya" → "Priya Raman").
fn matched(snap: &Snapshot, part: &Partition, words: &[(String, String)]) -> Result<usize> {
    let mut n = 0;
    for (term, folded) in words {
        if fts::doc_freq(snap, part.raw(), term, 1)? > 0
            || name_in(snap, part, folded, may_name_alone(folded))?.is_some()
        {
            n += 1;
        }
    }
    Ok(n)
}

/// For a context request on a scope holding no knowledge: `{scopes: [{scope, entities,
/// passages}], more?, hint}`, the caller's other scopes that hold some, those matching more of
/// the question's words first (found by QA: listed by size, a large unrelated scope came before
/// the one holding the answer), then most knowledge, then by name; `None` when the caller's scope
/// holds some or no other scope does.
pub(crate) fn holding(
    snap: &Snapshot,
    caller: &Caller,
    readable: Option<&[String]>,
    question: &str,
) -> Result<Option<Value>> {
    let here = totals(snap, &caller.part)?;
    if here.entities + here.passages > 0 {
        return Ok(None);
    }
    let (scopes, more) = other_scopes(snap, caller, readable)?;
    let words = question_words(question);
    let mut found = Vec::new();
    for part in &scopes {
        let t = totals(snap, part)?;
        if t.entities + t.passages > 0 {
            found.push((part.parts().2.to_owned(), t.entities, t.passages, matched(snap, part, &words)?));
        }
    }
    found.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| (b.1 + b.2).cmp(&(a.1 + a.2))).then_with(|| a.0.cmp(&b.0)));
    let more = more || found.len() > NAMED;
    found.truncate(NAMED);
    let named: Vec<String> = found.iter().map(|(s, ..)| format!("{s:?}")).collect();
    Ok((!found.is_empty()).then(|| {
        reply(
            found.iter().map(|(scope, e, p, _)| json!({ "scope": scope, "entities": e, "passages": p })).collect(),
            more,
            format!(
                "this scope holds no knowledge, but your scope(s) {}{} do: send `scope` with one to ask there",
                named.join(", "),
                if more { " and perhaps more" } else { "" }
            ),
        )
    }))
}

fn reply(scopes: Vec<Value>, more: bool, hint: String) -> Value {
    let mut out = json!({ "scopes": Value::Array(scopes), "hint": Value::String(hint) });
    if more {
        out["more"] = json!(true);
    }
    out
}
