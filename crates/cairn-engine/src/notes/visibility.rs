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
        if note.private && !self.private {
            return false;
        }
        match note.visibility() {
            Visibility::User => true,
            Visibility::Task => self.task_id == Some(note.owner.as_str()),
            Visibility::Agent => note.owner == self.agent,
        }
    }
}
