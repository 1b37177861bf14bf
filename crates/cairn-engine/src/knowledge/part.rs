//! Partitions: whose data a key belongs to. Every knowledge key starts with the partition's
//! prefix, `len u16 BE | tenant \0 user \0 scope`, so two partitions never share a key prefix and
//! a read built from the caller's identity cannot reach another partition.

use crate::error::{Error, Result};
use sha2::{Digest, Sha256};

/// Longest tenant, user or scope, in bytes (DESIGN.md §1).
pub const MAX_PART_FIELD: usize = 256;

/// `tenant \0 user \0 scope` → (): every partition that has been written (`Partition::register`).
pub(crate) const SCOPES: &str = "k.scopes";

/// The key prefix in `SCOPES` of one user's scopes.
pub(crate) fn user_scopes_prefix(tenant: &str, user: &str) -> Vec<u8> {
    [tenant.as_bytes(), b"\0", user.as_bytes(), b"\0"].concat()
}

/// The scopes `tenant`'s `user` has written (`Partition::register`), in key order.
pub(crate) fn user_scopes(snap: &crate::snapshot::Snapshot, tenant: &str, user: &str) -> Result<Vec<String>> {
    let prefix = user_scopes_prefix(tenant, user);
    let mut scopes = Vec::new();
    for item in snap.prefix(SCOPES, &prefix)? {
        let (key, _) = item?;
        scopes.push(String::from_utf8_lossy(&key[prefix.len()..]).into_owned());
    }
    Ok(scopes)
}

/// The tenant of every retired partition (`Partition::retired`). It holds a `:`, which no
/// caller's tenant may, so no caller's identity names a retired partition.
const RETIRED_TENANT: &str = "retired:";

/// One (tenant, user, scope) partition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Partition {
    /// `tenant \0 user \0 scope`.
    raw: Vec<u8>,
    /// `len u16 BE | raw`.
    prefix: Vec<u8>,
}

fn check(field: &str, what: &str) -> Result<()> {
    if field.is_empty() || field.len() > MAX_PART_FIELD {
        return Err(Error::InvalidArgument(format!("{what} must be 1..={MAX_PART_FIELD} bytes, got {}", field.len())));
    }
    if field.contains(':') || field.contains('\0') {
        return Err(Error::InvalidArgument(format!("{what} must not contain ':' or NUL")));
    }
    Ok(())
}

impl Partition {
    /// A partition; each part is 1–256 bytes without `:` or NUL.
    pub fn new(tenant: &str, user: &str, scope: &str) -> Result<Partition> {
        check(tenant, "tenant")?;
        check(user, "user")?;
        check(scope, "scope")?;
        let raw = [tenant.as_bytes(), b"\0", user.as_bytes(), b"\0", scope.as_bytes()].concat();
        let len = u16::try_from(raw.len()).expect("at most 770 bytes");
        let prefix = [&len.to_be_bytes()[..], &raw].concat();
        Ok(Partition { raw, prefix })
    }

    /// The partition whose prefix starts `key` (a stored key of any partitioned tree).
    pub(crate) fn of_key(key: &[u8]) -> Result<Partition> {
        let bad = || Error::corrupt(None, "a stored key does not start with a partition");
        let len = usize::from(u16::from_be_bytes(key.get(..2).ok_or_else(bad)?.try_into().expect("2 bytes")));
        let raw = std::str::from_utf8(key.get(2..2 + len).ok_or_else(bad)?).map_err(|_| bad())?;
        let mut parts = raw.splitn(3, '\0');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(tenant), Some(user), Some(scope)) => Partition::new(tenant, user, scope).map_err(|_| bad()),
            _ => Err(bad()),
        }
    }

    /// `tenant \0 user \0 scope`, as the full-text index takes it.
    #[must_use]
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The key prefix of every record of this partition.
    #[must_use]
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// The tenant, user and scope this partition was built from.
    #[must_use]
    pub fn parts(&self) -> (&str, &str, &str) {
        let text = std::str::from_utf8(&self.raw).expect("built from strings");
        let mut it = text.splitn(3, '\0');
        let (t, u, s) = (it.next(), it.next(), it.next());
        (t.unwrap_or(""), u.unwrap_or(""), s.unwrap_or(""))
    }

    /// Notes that `tx` writes into this partition, so a user's scopes can be listed (status) and
    /// a whole user forgotten. Every write verb calls it; only the first write of a partition
    /// writes its key.
    pub fn register(&self, tx: &mut crate::write::WriteTxn<'_>) -> Result<()> {
        let (tenant, user, scope) = self.parts();
        let key: Vec<u8> = user_scopes_prefix(tenant, user).into_iter().chain(scope.bytes()).collect();
        // Most writes land in a known partition: a lookup is cheaper than rewriting its leaf.
        if tx.get(SCOPES, &key)?.is_some() {
            return Ok(());
        }
        crate::history::mark_if_new(tx)?;
        super::attr_writes::mark_if_new(tx)?;
        tx.put(SCOPES, &key, &[])
    }

    /// Where this partition's keepsakes go once it is forgotten whole (`forget_scope`): its id
    /// counter, name generation and tombstones, and the event of the forgetting, so ids continue,
    /// "already forgotten" still answers and the caller's audit still lists it. The retired
    /// partition is named by the SHA-256 of this one's `tenant \0 user \0 scope`, so once
    /// `compact --purge` has run no key or value on disk spells the user or the scope.
    pub(crate) fn retired(&self) -> Partition {
        let digest = Sha256::digest(&self.raw).iter().fold(String::with_capacity(64), |mut hex, b| {
            use std::fmt::Write;
            let _ = write!(hex, "{b:02x}");
            hex
        });
        let raw = [RETIRED_TENANT.as_bytes(), b"\0", digest.as_bytes(), b"\0", b"-"].concat();
        let len = u16::try_from(raw.len()).expect("a digest is short");
        let prefix = [&len.to_be_bytes()[..], &raw].concat();
        Partition { raw, prefix }
    }

    /// Whether this is a retired partition (`retired`).
    pub(crate) fn is_retired(&self) -> bool {
        self.raw.starts_with(RETIRED_TENANT.as_bytes())
    }

    /// `prefix | parts...`: a key inside this partition.
    pub(crate) fn key(&self, parts: &[&[u8]]) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.prefix.len() + parts.iter().map(|p| p.len()).sum::<usize>());
        k.extend_from_slice(&self.prefix);
        for p in parts {
            k.extend_from_slice(p);
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_never_share_a_prefix() {
        let a = Partition::new("local", "u", "s").unwrap();
        let b = Partition::new("local", "u", "s2").unwrap();
        assert!(!b.prefix().starts_with(a.prefix()));
        assert!(!a.prefix().starts_with(b.prefix()));
    }

    #[test]
    fn bad_parts_are_refused_by_name() {
        for (t, u, s, what) in [("", "u", "s", "tenant"), ("t", "a:b", "s", "user"), ("t", "u", "x\0", "scope")] {
            let err = Partition::new(t, u, s).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT");
            assert!(err.to_string().contains(what), "{err}");
        }
        assert!(Partition::new("t", &"u".repeat(257), "s").is_err());
        assert!(Partition::new("t", &"u".repeat(256), "s").is_ok());
    }
}
