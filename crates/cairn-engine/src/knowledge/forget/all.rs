//! Forgetting a whole scope (`all: true`) and a whole user (`delete_user`). A scope goes as a set
//! of prefix deletes: every key of the partition in every knowledge tree (`k.*`, whatever later
//! work adds there), its full-text postings and totals, every note (each version, every
//! visibility, private ones too) and handoff (`notes::forget_partition`), and every event of its
//! history, of every family: their targets and values spell what went; and its entry in the
//! user's scope list (`k.scopes`), so status no longer lists it. What the partition keeps (its id
//! counter, name generation and tombstones) is retired (`retire.rs`): no key left spells the
//! user or the scope. The verb then appends one `forget` event (`all`, with the counts) to the
//! retired partition as the record that the scope was forgotten.

use super::super::graph::Entity;
use super::super::part::{Partition, SCOPES, user_scopes_prefix};
use super::super::records::decode;
use super::super::trees::{DOC, ENT, FORGOTTEN, PSG, REL, SEQ};
use super::retire::retire;
use super::{Counts, Outcome, TOMBSTONE, bury};
use crate::error::{Error, Result};
use crate::fts;
use crate::history::TREES as HISTORY;
use crate::write::WriteTxn;
use sha2::{Digest, Sha256};

/// Knowledge trees `all` does not empty: the scope list (not partition data, updated below) and
/// what a partition forgotten whole keeps, which `retire` moves out of its keys: the id
/// counter, tombstones (they answer "already forgotten" afterwards) and the name generation (a
/// counter reset to zero could reach an old value again and make a cache built at that value
/// look current).
const KEEP: [&str; 4] = [SEQ, SCOPES, TOMBSTONE, "k.names_gen"];

fn count(tx: &mut WriteTxn<'_>, tree: &str, part: &Partition) -> Result<u64> {
    tx.count_prefix(tree, part.prefix())
}

/// Removes every event of `part`, of every family, from the history and its indexes (every
/// history tree keys its entries by the partition first).
fn purge_history(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<()> {
    for tree in HISTORY {
        tx.delete_prefix(tree, part.prefix())?;
    }
    Ok(())
}

/// Forgets everything of `part`: knowledge, notes, handoffs and their history.
pub fn forget_scope(tx: &mut WriteTxn<'_>, part: &Partition, now: i64) -> Result<Outcome> {
    // One entity at a time: a scope's entities may not fit in memory at once.
    let mut attributes = 0;
    tx.scan_prefix(ENT, part.prefix(), |_, bytes| {
        attributes += decode::<Entity>(bytes, "entity")?.attributes.len() as u64;
        Ok(())
    })?;
    // Notes go first (their count is taken before their keys go); if nothing at all was stored,
    // nothing was deleted, so the early answers below change nothing.
    let notes = crate::notes::forget_partition(tx, part)?;
    let counts = Counts {
        entities: count(tx, ENT, part)?,
        facts: count(tx, REL, part)?,
        documents: count(tx, DOC, part)?,
        passages: count(tx, PSG, part)?,
        attributes,
        notes: notes.notes,
        handoffs: notes.handoffs,
    };
    let stored = !counts.is_empty();
    if !stored {
        // Whether any mark of an earlier forget is there: one key of each tree is enough.
        let retired = part.retired();
        let forgot_before = notes.forgot_before
            || tx.first_with_prefix(TOMBSTONE, part.prefix())?.is_some()
            || tx.first_with_prefix(FORGOTTEN, part.prefix())?.is_some()
            || tx.first_with_prefix(TOMBSTONE, retired.prefix())?.is_some();
        if !forgot_before {
            return Ok(Outcome::NotFound {
                message: "nothing is stored in this scope".into(),
                did_you_mean: Vec::new(),
                stored_between: Vec::new(),
            });
        }
        // Everything went before, one form at a time: what those forgets left (their
        // tombstones, events and the id counter, all keyed by the partition) still goes the way
        // of a scope forgotten whole, and the answer is "already".
    }
    for tree in tx.tree_names() {
        if !tree.starts_with("k.") || KEEP.contains(&tree.as_str()) {
            continue;
        }
        tx.delete_prefix(&tree, part.prefix())?;
    }
    fts::remove_partition(tx, part.raw())?;
    purge_history(tx, part)?;
    // A forgotten scope is no longer one of the user's scopes (status lists them); the next
    // write to it registers it again.
    let (tenant, user, scope) = part.parts();
    tx.delete(SCOPES, &[user_scopes_prefix(tenant, user), scope.as_bytes().to_vec()].concat())?;
    // The user's list may now be empty: `delete_user` then answers "already forgotten" from this.
    tx.put(TOMBSTONE, &user_marker(b"scopes\0", tenant, user), &now.to_be_bytes())?;
    if !stored {
        retire(tx, part)?;
        return Ok(Outcome::AlreadyForgotten);
    }
    bury(tx, part, "all", "", now)?;
    retire(tx, part)?;
    Ok(Outcome::Forgotten { counts, kept: Vec::new() })
}

/// `tag | sha256(tenant \0 user \0)`: a tombstone of one user. Partition keys start with a length
/// byte pair whose first byte is at most 3, so a key starting with a letter never collides with
/// them.
fn user_marker(tag: &[u8], tenant: &str, user: &str) -> Vec<u8> {
    [tag, &Sha256::digest(user_scopes_prefix(tenant, user))].concat()
}

fn user_tombstone(tenant: &str, user: &str) -> Vec<u8> {
    user_marker(b"user\0", tenant, user)
}

/// What `delete_user` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserDeleted {
    /// Each scope the user had, with what went from it.
    Deleted(Vec<(String, Counts)>),
    AlreadyForgotten,
    NotFound,
}

/// Forgets every scope `tenant`/`user` ever wrote (listed in `k.scopes`) and the list itself.
pub fn delete_user(tx: &mut WriteTxn<'_>, tenant: &str, user: &str, now: i64) -> Result<UserDeleted> {
    let prefix = user_scopes_prefix(tenant, user);
    let mut scopes = Vec::new();
    for (key, _) in tx.prefix(SCOPES, &prefix)? {
        let scope = std::str::from_utf8(&key[prefix.len()..])
            .map_err(|_| Error::corrupt(None, "a registered scope is not UTF-8"))?
            .to_owned();
        let part = Partition::new(tenant, user, &scope)?;
        let counts = match forget_scope(tx, &part, now)? {
            Outcome::Forgotten { counts, .. } => counts,
            _ => Counts::default(),
        };
        tx.delete(SCOPES, &key)?;
        scopes.push((scope, counts));
    }
    if scopes.is_empty() {
        // Deleted before, or every scope forgotten whole since (none is listed any more).
        let gone_before = tx.get(TOMBSTONE, &user_tombstone(tenant, user))?.is_some()
            || tx.get(TOMBSTONE, &user_marker(b"scopes\0", tenant, user))?.is_some();
        return Ok(if gone_before { UserDeleted::AlreadyForgotten } else { UserDeleted::NotFound });
    }
    tx.put(TOMBSTONE, &user_tombstone(tenant, user), &now.to_be_bytes())?;
    Ok(UserDeleted::Deleted(scopes))
}
