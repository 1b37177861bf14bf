//! `memory_forget` for knowledge: exactly one of `subject`, `fact`, `passage`, `source`,
//! `attribute`, `all`. Forgotten → `{state: "forgotten", forgotten: counts, kept}`; forgotten
//! before → `{state: "already_forgotten"}`; never stored → a `NOT_FOUND` refusal (with "did you
//! mean" names of the caller's partition for a subject). Each forget that removes something
//! appends one `forget` event naming the form and the counts, never what it forgot. (`note` goes to the notes
//! engine: the node routes it there.)

use super::{Caller, Refusal};
use crate::error::{Error, Result};
use crate::history::{Change, record};
use crate::knowledge::facts_between::Between;
use crate::knowledge::{
    FactRef, Outcome, entity_in, forget_attribute, forget_document, forget_fact, forget_scope, forget_source,
    forget_subject, subject_outcome,
};
use crate::store::Store;
use crate::write::WriteTxn;
use serde_json::{Map, Value, json};

/// The forms, in the order errors list them.
const FORMS: [&str; 6] = ["subject", "fact", "passage", "source", "attribute", "all"];

/// One parsed forget request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Form {
    Subject(String),
    Fact(FactRef),
    Passage(u64),
    Source(String),
    Attribute { subject: String, key: String },
    All,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

fn text(v: &Value, field: &str) -> Result<String> {
    v.as_str()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
        .ok_or_else(|| bad(format!("{field}: must be a non-empty string")))
}

fn id(v: &Value, field: &str) -> Result<u64> {
    v.as_str().and_then(|s| s.parse().ok()).ok_or_else(|| bad(format!("{field}: must be an id as a decimal string")))
}

/// Parses a forget body; anything but exactly one well-formed form is refused by field.
pub(super) fn parse_form(body: &[u8]) -> Result<Form> {
    let body: Map<String, Value> = super::parse("forget", body)?;
    if body.contains_key("note") {
        return Err(bad("note: notes are forgotten by the notes engine, not the knowledge engine"));
    }
    let given: Vec<&str> = FORMS.iter().copied().filter(|f| body.get(*f).is_some_and(|v| !v.is_null())).collect();
    let [form] = given[..] else {
        return Err(bad(format!(
            "give exactly one of {}; got {}",
            FORMS.join(", "),
            if given.is_empty() { "none".into() } else { given.join(", ") }
        )));
    };
    let v = &body[form];
    Ok(match form {
        "subject" => Form::Subject(text(v, "subject")?),
        "fact" => {
            let Some(f) = v.as_object() else { return Err(bad("fact: must be {from, to, type} or {id}")) };
            match (f.get("id"), f.get("from"), f.get("to"), f.get("type")) {
                (Some(i), None, None, None) => Form::Fact(FactRef::Id(id(i, "fact.id")?)),
                (None, Some(from), Some(to), Some(t)) => Form::Fact(FactRef::Ends {
                    from: text(from, "fact.from")?,
                    to: text(to, "fact.to")?,
                    rel_type: text(t, "fact.type")?,
                }),
                _ => return Err(bad("fact: must be {from, to, type} or {id}")),
            }
        }
        "passage" => Form::Passage(id(v, "passage")?),
        "source" => Form::Source(text(v, "source")?),
        "attribute" => {
            let Some(a) = v.as_object() else { return Err(bad("attribute: must be {subject, key}")) };
            Form::Attribute {
                subject: text(a.get("subject").unwrap_or(&Value::Null), "attribute.subject")?,
                key: text(a.get("key").unwrap_or(&Value::Null), "attribute.key")?,
            }
        }
        _ => {
            if v != &Value::Bool(true) {
                return Err(bad("all: must be true"));
            }
            Form::All
        }
    })
}

/// The history target of a forget: the form only. The forgotten names and ids are left out, and
/// so is any hash of them (a hash of a name confirms a guess): forgotten data is unreachable.
fn target(form: &Form) -> &'static str {
    match form {
        Form::Subject(_) => "subject",
        Form::Fact(_) => "fact",
        Form::Passage(_) => "passage",
        Form::Source(_) => "source",
        Form::Attribute { .. } => "attribute",
        Form::All => "all",
    }
}

/// The reply for an outcome.
pub(super) fn reply(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Forgotten { counts, kept } => json!({ "state": "forgotten", "forgotten": counts, "kept": kept }),
        Outcome::AlreadyForgotten => json!({ "state": "already_forgotten" }),
        Outcome::NotFound { message, did_you_mean, stored_between } => Refusal {
            code: "NOT_FOUND",
            message,
            details: did_you_mean
                .into_iter()
                .map(|name| json!({ "did_you_mean": name }))
                .chain(stored_between.iter().map(Between::detail))
                .collect(),
        }
        .reply(),
    }
}

/// The entity keeps its history with the forgotten key taken out of it; this event, on the
/// entity's own target, says there that an attribute went (how many, never which), so the
/// entity's history does not change silently.
fn attribute_event(tx: &mut WriteTxn<'_>, caller: &Caller, subject: &str) -> Result<()> {
    let Some(entity) = entity_in(tx, &caller.part, subject)? else { return Ok(()) };
    let change = Change {
        family: "entity",
        target: &entity.name,
        op: "forget_attribute",
        before: None,
        after: Some(json!({ "forgotten": { "attributes": 1 } })),
        patch: None,
    };
    record(tx, caller, change).map(|_| ())
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let form = parse_form(body)?;
    let caller = caller.clone();
    let (outcome, _) = store.write(move |tx| {
        let (part, now) = (&caller.part, caller.now);
        let outcome = match &form {
            Form::Subject(name) => subject_outcome(forget_subject(tx, part, name, now)?, name),
            Form::Fact(fact) => forget_fact(tx, part, fact, now)?,
            Form::Passage(doc) => forget_document(tx, part, *doc, now)?,
            Form::Source(label) => forget_source(tx, part, label, now)?,
            Form::Attribute { subject, key } => forget_attribute(tx, part, subject, key, now)?,
            Form::All => forget_scope(tx, part, now)?,
        };
        if let Outcome::Forgotten { counts, .. } = &outcome {
            // A scope forgotten whole leaves the user's list of scopes (`forget_scope`).
            if form != Form::All {
                part.register(tx)?;
            }
            let change = Change {
                family: "forget",
                target: target(&form),
                op: "forget",
                before: None,
                after: Some(json!({ "forgotten": counts })),
                patch: None,
            };
            if form == Form::All {
                // The scope's keys are gone: its event goes where its keepsakes went (`retire`).
                let retired = Caller { part: caller.part.retired(), ..caller.clone() };
                record(tx, &retired, change)?;
            } else {
                record(tx, &caller, change)?;
            }
            if let Form::Attribute { subject, .. } = &form {
                attribute_event(tx, &caller, subject)?;
            }
        }
        Ok(outcome)
    })?;
    Ok(reply(outcome))
}
