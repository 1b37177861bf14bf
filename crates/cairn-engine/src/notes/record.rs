//! A note as stored: its identity inside a partition, its record (one per version) and the
//! public shape a reply shows.
//!
//! Trees: `n.cur` `part | identity` → the current record; `n.ver` `part | identity \0 | version BE`
//! → the record of every version (for `as_of`); `n.forgotten` `part | identity` → the sequence
//! number of the event that forgot it. Identity is `key \0 visibility \0 owner` (owner: the task id
//! for `task`, the writing agent for `agent`, empty for `user`); keys, task ids and agent names
//! hold no NUL, so identities never prefix one another and a `key \0` prefix finds every note of
//! one key.

use super::fields::short_name;
use super::search_text::SearchText;
use super::{Outcome, invalid};
use crate::knowledge::Partition;
use crate::time::iso_ms;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub(crate) const CUR: &str = "n.cur";
pub(crate) const VER: &str = "n.ver";
pub(crate) const FORGOTTEN: &str = "n.forgotten";

/// Longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 512;
/// Largest value, serialised.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// The kinds a note may have.
pub const KINDS: [&str; 4] = ["user_preference", "user_fact", "task_state", "decision"];

/// Who may read a note (DESIGN.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// Every agent of the user.
    User,
    /// Agents that name the same task.
    Task,
    /// Only the agent that wrote it.
    Agent,
}

impl Visibility {
    pub(crate) fn parse(text: Option<&str>) -> Outcome<Visibility> {
        match text {
            None | Some("user") => Ok(Visibility::User),
            Some("task") => Ok(Visibility::Task),
            Some("agent") => Ok(Visibility::Agent),
            Some(other) => Err(invalid("visibility", format_args!("must be user, task or agent, got {other:?}"))),
        }
    }

    /// The visibility a request names with `visibility` and `taskId` together: a `taskId` alone
    /// means a task note (as the CLI's `--task` does), and a `taskId` beside `user` or `agent` is
    /// refused, since those notes have no task and dropping it would widen who reads the note.
    pub(crate) fn named(text: Option<&str>, task_id: Option<&str>) -> Outcome<Visibility> {
        let visibility = match (text, task_id) {
            (None, Some(_)) => Visibility::Task,
            _ => Visibility::parse(text)?,
        };
        if visibility != Visibility::Task && task_id.is_some() {
            let v = visibility.as_str();
            return Err(invalid(
                "taskId",
                format_args!("names a task; {v} notes have no task (send visibility task or omit it)"),
            ));
        }
        Ok(visibility)
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::User => "user",
            Visibility::Task => "task",
            Visibility::Agent => "agent",
        }
    }
}

/// A note's identity inside a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    pub key: String,
    pub visibility: Visibility,
    /// The task id (`task`), the owning agent (`agent`), or empty (`user`).
    pub owner: String,
}

impl Identity {
    /// The identity a caller names with `key`, `visibility` and `taskId`; `agent` owns agent notes.
    pub(crate) fn named(key: &str, visibility: Visibility, task_id: Option<&str>, agent: &str) -> Outcome<Identity> {
        check_key(key)?;
        if let Some(t) = task_id {
            short_name("taskId", t)?;
        }
        let owner = match visibility {
            Visibility::User => String::new(),
            Visibility::Task => task_id.ok_or_else(|| invalid("taskId", "is required for task visibility"))?.to_owned(),
            Visibility::Agent => agent.to_owned(),
        };
        if owner.contains('\0') {
            return Err(invalid("agent", "must not contain NUL"));
        }
        Ok(Identity { key: key.to_owned(), visibility, owner })
    }

    /// `key \0 visibility \0 owner`: the history target and the tail of the note's tree keys.
    pub(crate) fn encode(&self) -> String {
        format!("{}\0{}\0{}", self.key, self.visibility.as_str(), self.owner)
    }

    pub(crate) fn cur_key(&self, part: &Partition) -> Vec<u8> {
        part.key(&[self.encode().as_bytes()])
    }

    /// `part | identity \0`: every stored version of this note.
    pub(crate) fn versions_prefix(&self, part: &Partition) -> Vec<u8> {
        part.key(&[self.encode().as_bytes(), b"\0"])
    }

    pub(crate) fn ver_key(&self, part: &Partition, version: u64) -> Vec<u8> {
        part.key(&[self.encode().as_bytes(), b"\0", &version.to_be_bytes()])
    }

    /// The task id, for `task` notes.
    pub(crate) fn task_id(&self) -> Option<&str> {
        (self.visibility == Visibility::Task).then_some(self.owner.as_str())
    }
}

pub(crate) fn check_key(key: &str) -> Outcome<()> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES {
        return Err(invalid("key", format_args!("must be 1..={MAX_KEY_BYTES} bytes, got {}", key.len())));
    }
    if key.contains('\0') {
        return Err(invalid("key", "must not contain NUL"));
    }
    Ok(())
}

/// One version of a note, as stored (times in ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct NoteRecord {
    /// Stable across versions: given when the note is created.
    pub id: u64,
    pub key: String,
    pub visibility: String,
    /// Task id or owning agent, as in `Identity`.
    pub owner: String,
    pub value: Value,
    pub kind: String,
    pub private: bool,
    pub version: u64,
    pub supersedes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence_basis: Option<String>,
    /// The agent that wrote this version.
    pub agent: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl NoteRecord {
    pub(crate) fn visibility(&self) -> Visibility {
        Visibility::parse(Some(&self.visibility)).unwrap_or(Visibility::User)
    }

    pub(crate) fn identity(&self) -> Identity {
        Identity { key: self.key.clone(), visibility: self.visibility(), owner: self.owner.clone() }
    }

    pub(crate) fn task_id(&self) -> Option<&str> {
        (self.visibility() == Visibility::Task).then_some(self.owner.as_str())
    }

    pub(crate) fn decode(bytes: &[u8]) -> crate::error::Result<NoteRecord> {
        serde_json::from_slice(bytes).map_err(|e| crate::error::Error::corrupt(None, format!("a note record: {e}")))
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a note record serialises")
    }

    /// The note as replies show it (DESIGN.md §2).
    pub(crate) fn render(&self) -> Value {
        let mut note = json!({
            "id": self.id.to_string(),
            "key": self.key,
            "value": self.value,
            "kind": self.kind,
            "visibility": self.visibility,
            "private": self.private,
            "version": self.version,
            "supersedes": self.supersedes,
            "agent": self.agent,
            "createdAt": iso_ms(self.created_at),
            "updatedAt": iso_ms(self.updated_at),
        });
        let obj = note.as_object_mut().expect("an object");
        if let Some(t) = self.task_id() {
            obj.insert("taskId".into(), json!(t));
        }
        if let Some(c) = self.confidence {
            obj.insert("confidence".into(), json!(c));
        }
        if let Some(b) = &self.confidence_basis {
            obj.insert("confidenceBasis".into(), json!(b));
        }
        note
    }

    /// What the query channels search: the key, a task note's task id, and every key, string, number
    /// and boolean of the value.
    pub(crate) fn search(&self) -> SearchText {
        SearchText::of(&self.key, self.task_id(), &self.value)
    }
}
