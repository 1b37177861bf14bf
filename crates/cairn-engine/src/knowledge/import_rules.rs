//! What an import may claim about who wrote a record and when (DESIGN.md §1: the agent is "bound
//! to the token; never guessed by a model; recorded on every write"). A record keeps its exported
//! author and times, as a restore must; so an agent token may bring back only records its own
//! agent wrote (an admin token restores every agent's), and no token may bring a record stamped
//! later than now: a time to come would pin a handoff as the newest for ever and place a note
//! or fact in `as_of` reads before it existed. An agent importing its own backdated records is
//! accepted: that is its own history, still signed with its own name (`docs/design/forget-export.md`).

use crate::time::iso_ms;

/// How far a record's time may run ahead of this node's clock: the source node's clock may be a
/// little ahead of this one's, and a backup taken just now is still restorable.
pub(crate) const CLOCK_SKEW_MS: i64 = 5 * 60 * 1000;

/// A record field problem, as a skip reason naming the field.
type Field<T> = std::result::Result<T, String>;

/// `at` (the record's `field`) is not later than `now`, give or take the clock skew.
pub(crate) fn not_future(field: &str, at: Option<i64>, now: i64) -> Field<()> {
    match at {
        Some(at) if at > now.saturating_add(CLOCK_SKEW_MS) => Err(format!(
            "{field}: {} is later than now ({}); an import brings back what was already written",
            iso_ms(at),
            iso_ms(now)
        )),
        _ => Ok(()),
    }
}

/// `author` (the record's `field`) is the importing agent, unless the import is an admin's
/// (`all_agents`), which restores every agent's records as they were.
pub(crate) fn own_author(field: &str, author: Option<&str>, (agent, all_agents): (&str, bool)) -> Field<()> {
    match author {
        Some(a) if !all_agents && a != agent => {
            Err(format!("{field}: names agent {a:?}; an agent token imports only what its own agent ({agent:?}) wrote"))
        }
        _ => Ok(()),
    }
}
