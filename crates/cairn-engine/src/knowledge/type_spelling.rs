//! The spelling a written relation type is stored under. Stored types are keyed by `fold` (case),
//! but agents spell one type many ways: `works_at`, `works at`, `Works-At`, `worksAt`. Keyed as
//! sent, each spelling was another type, and "Ann works at Acme" said by two agents was two facts
//! (found by an audit). A write now takes the spelling of the live type of the partition that
//! reads the same (`derive::rule_key`: case, separators and camel case aside), so the fact it states is
//! the stored one; a type the partition does not have yet is stored as sent. Imports keep the
//! spellings of their records (a copy must read as its source), and a store that already holds two
//! spellings of one type keeps both: a spelling stored as such is used as it is.

use super::derive::rule_key;
use super::part::Partition;
use super::tally::{self, RELATION_TYPE, TALLY};
use crate::error::Result;
use crate::text::fold;
use crate::write::WriteTxn;
use std::collections::HashMap;

/// The spellings one write operation has resolved, by `rule_key`, so a call that states many
/// facts reads the partition's types once per spelling, and two spellings of a type new to the
/// partition within one call are one type too.
#[derive(Default)]
pub(crate) struct TypeSpellings {
    resolved: HashMap<String, String>,
}

impl TypeSpellings {
    /// The spelling a relation of type `requested` (trimmed) is stored under in `part`: `requested`
    /// itself when a live type of the partition folds as it does (the matching stays up to case),
    /// else the spelling of the live type with its `rule_key`, else `requested` (a new type).
    pub(crate) fn resolve(&mut self, tx: &mut WriteTxn<'_>, part: &Partition, requested: &str) -> Result<String> {
        let requested = requested.trim();
        let key = rule_key(requested);
        if let Some(spelling) = self.resolved.get(&key) {
            return Ok(spelling.clone());
        }
        let spelling = if tx.get(TALLY, &tally::key(part, RELATION_TYPE, Some(&fold(requested))))?.is_some() {
            requested.to_owned()
        } else {
            live_type_with_key(tx, part, &key)?.unwrap_or_else(|| requested.to_owned())
        };
        self.resolved.insert(key, spelling.clone());
        Ok(spelling)
    }
}

/// The spelling of a live relation type of `part` whose `rule_key` is `key`, from the partition's
/// counts (`tally.rs`: one key per live type, its first spelling in the value).
fn live_type_with_key(tx: &mut WriteTxn<'_>, part: &Partition, key: &str) -> Result<Option<String>> {
    for (_, value) in tx.prefix(TALLY, &tally::key(part, RELATION_TYPE, None))? {
        let (count, spelling) = tally::decode(&value)?;
        if count > 0 && rule_key(&spelling) == key {
            return Ok(Some(spelling));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::derive::rule_key;

    #[test]
    fn spellings_of_one_type_share_a_rule_key() {
        for spelling in
            ["works_at", "works at", "Works-At", "WORKS_AT", "worksAt", "WorksAt", " works  at ", "works__at"]
        {
            assert_eq!(rule_key(spelling), "works_at", "{spelling}");
        }
        assert_eq!(rule_key("hasCEO"), "has_ceo");
        assert_eq!(rule_key("member_of_2024Team"), "member_of_2024_team");
        assert_ne!(rule_key("works_at"), rule_key("worked_at"));
        assert_ne!(rule_key("owns"), rule_key("owned_by"));
        assert_eq!(rule_key("位于"), "位于");
    }
}
