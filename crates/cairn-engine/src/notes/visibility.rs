//! Who may read what (DESIGN.md §1): `user` notes reach every agent of the user, `task` notes
//! only a caller that names the same task, `agent` notes only the agent that wrote them; a private
//! note only when the node's policy allows it (`allowPrivate`) and the caller asks
//! (`includePrivate`). The one predicate every read of notes and their history goes through.

use super::record::{NoteRecord, Visibility};

/// The reader of a request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Viewer<'a> {
    pub agent: &'a str,
    /// The task the caller names, if any.
    pub task_id: Option<&'a str>,
    /// `allowPrivate && includePrivate`.
    pub private: bool,
}

impl Viewer<'_> {
    /// Whether this viewer may read `note`.
    pub(crate) fn sees(&self, note: &NoteRecord) -> bool {
        self.sees_parts(note.visibility(), &note.owner, note.private)
    }

    /// Whether this viewer may read a note of this visibility, owner and private flag.
    pub(crate) fn sees_parts(&self, visibility: Visibility, owner: &str, private: bool) -> bool {
        if private && !self.private {
            return false;
        }
        match visibility {
            Visibility::User => true,
            Visibility::Task => self.task_id == Some(owner),
            Visibility::Agent => owner == self.agent,
        }
    }
}
