//! Tree names and key shapes of the knowledge model (see docs/design/knowledge-keys.md).

use super::part::Partition;
use crate::error::{Error, Result};
use crate::key_text::fit;
use crate::write::WriteTxn;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// `part` → u64 BE: the partition's next id (`ids.rs`); `id` → the store-wide counter of stores
/// written before, read only.
pub(crate) const SEQ: &str = "k.seq";
/// `part | entity id` → entity record.
pub(crate) const ENT: &str = "k.ent";
/// What each source label stored and which relation records cite each document
/// (`source_index.rs`): `part | 'd' | keyed label \0 | doc id`, `part | 'f' | keyed label \0 |
/// relation id` and `part | 'c' | doc id | relation id` → (); the empty key → `[1]` marks it
/// built (`source_index_build.rs`).
pub(crate) const SOURCES: &str = "k.source";
/// `part | folded name \0 | entity id` → () (a name too long for the key is kept as its head and
/// a digest: `keyed_name`).
pub(crate) const ENT_NAME: &str = "k.ent_name";
/// `part | relation id` → relation record.
pub(crate) const REL: &str = "k.rel";
/// `part | entity id | direction | folded type \0 | relation id` → () (`keyed_type`), or for a
/// fact that keeps earlier lives in `ADJ_PAST`, their bound (`past_adjacency.rs`).
pub(crate) const ADJ: &str = "k.adj";
/// `ADJ`'s keys of the copies a fact keeps of itself under other ids (earlier versions, earlier
/// lives), which no `relate` plan reads in most cases (`past_adjacency.rs`); the empty key → `[1]`
/// marks the earlier versions of stores written before moved here (`past_adjacency_build.rs`).
pub(crate) const ADJ_PAST: &str = "k.adj_past";

/// `part | doc id` → document record.
pub(crate) const DOC: &str = "k.doc";
/// `part | sha256(text) | date` → doc id: the document index of stores written before
/// `DOC_HASH8`, still read (and emptied by forgetting), never added to.
pub(crate) const DOC_HASH: &str = "k.doc_hash";
/// `part | first 8 bytes of sha256(sha256(text) | date)` → the ids (u64 BE each) of the documents
/// filed there: the same text with the same date is stored once (`docs::stored_doc`).
pub(crate) const DOC_HASH8: &str = "k.doc_hash8";
/// `part | doc id | ordinal` → passage span.
pub(crate) const PSG: &str = "k.psg";
/// The empty key → the version of the tokenizer whose terms the full-text index holds
/// (`fts_terms_build.rs`); absent in a store indexed before identifiers were cut into parts.
pub(crate) const FTS_TERMS: &str = "k.fts_terms";
/// `part | entity id | doc id | ordinal` → (): the passages that mention an entity.
pub(crate) const MENTION: &str = "k.mention";
/// `part | doc id | ordinal | entity id` → (): the entities a passage mentions.
pub(crate) const MENTIONED: &str = "k.mentioned";

/// `part | digest(key, value) | entity id` → (): the entities that ever held `value` under `key`
/// (the digest: `attr_index::digest`, 16 bytes); the empty key → `[1]` marks the index built
/// (`attr_index_build.rs`).
pub(crate) const ATTR: &str = "k.attr";
/// `part | entity id | digest(key, value)` → the key: an entity's `ATTR` entries, found by entity
/// when it or one of its attributes is forgotten.
pub(crate) const ATTR_OF: &str = "k.attr_of";

/// `part | entity id | digest(attribute key) | !ord(start) | !seq` → the value (JSON) that the
/// entity event `seq` set the key to, true from `start` (ms): an entity's attribute writes, latest
/// start first, so a read of what is true now seeks to it (`attr_writes.rs`); the empty key → `[1]`
/// marks it complete (`attr_writes_build.rs`).
pub(crate) const ATTR_WRITES: &str = "k.attr_writes";

/// `part | HASHED | sha256(folded name as a key holds it)` → forgotten-at (ms): a name forgotten
/// once answers "already forgotten", and the store keeps no word of it (`forgotten_key`). Stores
/// written before hold `part | folded name` (`legacy_forgotten_key`): still read, never written,
/// rewritten to the hashed form by `compact --purge` (`forget::rehash_forgotten`).
pub(crate) const FORGOTTEN: &str = "k.forgotten";

/// The byte after the partition that marks a hashed `FORGOTTEN` key. Keyed text holds no control
/// character (names refuse them), so no plain entry of a store written before starts with it.
pub(crate) const HASHED: u8 = 0x00;

/// `part` → u64 BE: bumped in the transaction that creates an entity or changes its types, so a
/// cached name index of the partition knows when it is stale (`cache.rs`).
pub(crate) const NAMES_GEN: &str = "k.names_gen";

/// `part | generation` → entity id (u64 BE): which entity each name generation added or retyped,
/// so a cached name index can be brought up to date from the few entities changed since.
pub(crate) const NAMES_LOG: &str = "k.names_log";

/// Adjacency direction bytes.
pub(crate) const OUT: u8 = 0;
pub(crate) const IN: u8 = 1;

/// Bumps the name generation of `part` for `entity` (see `NAMES_GEN`, `NAMES_LOG`).
pub(crate) fn bump_names(tx: &mut WriteTxn<'_>, part: &Partition, entity: u64) -> Result<()> {
    let next = names_gen_in(tx, part)? + 1;
    tx.put(NAMES_GEN, part.prefix(), &next.to_be_bytes())?;
    tx.put(NAMES_LOG, &part.key(&[&next.to_be_bytes()]), &entity.to_be_bytes())
}

/// The entities the name generations `(after, upto]` of `part` added or retyped, as `snap` sees them.
pub(crate) fn names_log(snap: &crate::snapshot::Snapshot, part: &Partition, after: u64, upto: u64) -> Result<Vec<u64>> {
    let from = part.key(&[&(after + 1).to_be_bytes()]);
    let to = part.key(&[&upto.to_be_bytes()]);
    let mut out = Vec::new();
    for item in
        snap.range(NAMES_LOG, std::ops::Bound::Included(from.as_slice()), std::ops::Bound::Included(to.as_slice()))?
    {
        out.push(gen_value(&item?.1)?);
    }
    Ok(out)
}

/// `names_log` inside a write transaction.
pub(crate) fn names_log_in(tx: &mut WriteTxn<'_>, part: &Partition, after: u64, upto: u64) -> Result<Vec<u64>> {
    let from = part.key(&[&(after + 1).to_be_bytes()]);
    let to = part.key(&[&upto.to_be_bytes()]);
    let mut out = Vec::new();
    for (_, v) in
        tx.range(NAMES_LOG, std::ops::Bound::Included(from.as_slice()), std::ops::Bound::Included(to.as_slice()))?
    {
        out.push(gen_value(&v)?);
    }
    Ok(out)
}

/// The name generation of `part` as `tx` sees it (0 before any entity).
pub(crate) fn names_gen_in(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<u64> {
    // A partition forgotten whole continues from its retired generation (`forget::retire`).
    super::forget::kept(tx, NAMES_GEN, part, &[])?.map_or(Ok(0), |v| gen_value(&v))
}

/// The name generation of `part` in `snap`.
pub(crate) fn names_gen(snap: &crate::snapshot::Snapshot, part: &Partition) -> Result<u64> {
    super::forget::kept_in(snap, NAMES_GEN, part, &[])?.map_or(Ok(0), |v| gen_value(&v))
}

fn gen_value(v: &[u8]) -> Result<u64> {
    Ok(u64::from_be_bytes(v.try_into().map_err(|_| Error::corrupt(None, "a name generation is not 8 bytes"))?))
}

pub(crate) fn ent_key(part: &Partition, id: u64) -> Vec<u8> {
    part.key(&[&id.to_be_bytes()])
}

/// A folded name as `ENT_NAME` keys hold it (`key_text::fit`: a name too long for the key is
/// kept as its head and a digest).
pub(crate) fn keyed_name<'a>(part: &Partition, folded: &'a str) -> Cow<'a, [u8]> {
    fit(folded, part.prefix().len() + 1 + 8)
}

pub(crate) fn name_prefix(part: &Partition, folded: &str) -> Vec<u8> {
    part.key(&[&keyed_name(part, folded), b"\0"])
}

pub(crate) fn name_key(part: &Partition, folded: &str, id: u64) -> Vec<u8> {
    part.key(&[&keyed_name(part, folded), b"\0", &id.to_be_bytes()])
}

/// `part | HASHED | sha256(name)` in `FORGOTTEN`, where `name` is the folded name as the plain key
/// of stores written before held it (`legacy_forgotten_key`: whole, or for a name too long for a
/// key its head and digest), so a plain entry is rewritten to exactly this key.
pub(crate) fn forgotten_key(part: &Partition, folded: &str) -> Vec<u8> {
    hashed_forgotten(part, &fit(folded, part.prefix().len()))
}

/// The hashed `FORGOTTEN` key of a name as a plain key held it.
pub(crate) fn hashed_forgotten(part: &Partition, keyed: &[u8]) -> Vec<u8> {
    part.key(&[&[HASHED], &Sha256::digest(keyed)])
}

/// `part | folded name` in `FORGOTTEN`: the plain key of stores written before `forgotten_key`.
pub(crate) fn legacy_forgotten_key(part: &Partition, folded: &str) -> Vec<u8> {
    part.key(&[&fit(folded, part.prefix().len())])
}

pub(crate) fn rel_key(part: &Partition, id: u64) -> Vec<u8> {
    part.key(&[&id.to_be_bytes()])
}

pub(crate) fn adj_prefix(part: &Partition, entity: u64) -> Vec<u8> {
    part.key(&[&entity.to_be_bytes()])
}

/// A folded relation type as `ADJ` keys hold it (see `keyed_name`).
pub(crate) fn keyed_type<'a>(part: &Partition, folded_type: &'a str) -> Cow<'a, [u8]> {
    fit(folded_type, part.prefix().len() + 8 + 1 + 1 + 8)
}

/// `part | entity id | direction | folded type \0`: one entity's relations of one type one way.
pub(crate) fn adj_type_prefix(part: &Partition, entity: u64, dir: u8, folded_type: &str) -> Vec<u8> {
    part.key(&[&entity.to_be_bytes(), &[dir], &keyed_type(part, folded_type), b"\0"])
}

pub(crate) fn adj_key(part: &Partition, entity: u64, dir: u8, folded_type: &str, rel: u64) -> Vec<u8> {
    part.key(&[&entity.to_be_bytes(), &[dir], &keyed_type(part, folded_type), b"\0", &rel.to_be_bytes()])
}

/// The id at the end of a key.
pub(crate) fn trailing_id(key: &[u8]) -> Result<u64> {
    let tail = key.len().checked_sub(8).map(|at| &key[at..]);
    tail.and_then(|t| t.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| Error::corrupt(None, "a knowledge index key is too short"))
}
