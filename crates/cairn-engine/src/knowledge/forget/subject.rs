//! Forgetting a subject. A subject goes with its relations (from both ends) and every passage that
//! mentions it (with their postings and mention links); a document left with no passage goes too.
//! Other passages of its documents stay (they say other things), as do the other entities the
//! forgotten passages named.

use super::super::docs::{Document, PassageSpan, passage_text, remove_hash};
use super::super::graph::{Entity, Relation, entities_in};
use super::super::part::Partition;
use super::super::recall::{SUGGESTIONS, add_suggestions};
use super::super::records::decode;
use super::super::tally::Tally;
use super::super::trees::{
    ADJ, ADJ_PAST, DOC, ENT, ENT_NAME, FORGOTTEN, HASHED, IN, MENTION, OUT, PSG, REL, adj_key, adj_prefix, ent_key,
    forgotten_key, hashed_forgotten, legacy_forgotten_key, name_prefix, rel_key, trailing_id,
};
use super::{bury, bury_document, bury_relation, fact_target, name_of, unlink_passage};
use crate::error::{Error, Result};
use crate::fts;
use crate::text::{LookupOptions, NameIndex, fold, mentions_name};
use crate::write::WriteTxn;
use std::collections::{BTreeMap, BTreeSet};
use unicode_normalization::UnicodeNormalization;

/// What `forget_subject` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forgot {
    /// The subject and everything resting on it went.
    Forgotten {
        /// The entity that went; `None` when it had gone before and only passages naming it since
        /// went now.
        entity: Option<u64>,
        relations: u32,
        passages: u32,
        documents: u32,
        /// Attributes the entity held.
        attributes: u32,
        kept_entities: Vec<u64>,
        /// Documents that keep passages not naming the subject (the others' text is blanked).
        kept_documents: u32,
    },
    /// This name was forgotten before and no passage has named it since; nothing changed.
    AlreadyForgotten,
    /// No entity has this name; up to three names of the same partition that are near.
    NotFound { did_you_mean: Vec<String> },
}

fn corrupt(what: &str) -> Error {
    Error::corrupt(None, what.to_owned())
}

/// Forgets the entity named exactly `name` (as stored, outer spaces aside: DESIGN.md §2 "exact
/// name only"), its relations and the passages that mention it. A spelling that differs only in
/// case, accents or spacing names the entity but forgets nothing: it is suggested instead. A name
/// forgotten before still takes the passages that named it since (a chat log stored again): it
/// answers "already forgotten" only when none is left.
pub fn forget_subject(tx: &mut WriteTxn<'_>, part: &Partition, name: &str, now: i64) -> Result<Forgot> {
    let folded = fold(name.trim());
    let (entity, name_key) = match named(tx, part, name)? {
        Named::Stored(entity, key) => (entity, key),
        Named::Gone => return forget_gone(tx, part, name.trim(), &folded, now),
        Named::Missing(outcome) => return Ok(outcome),
    };
    let stored = tx.get(ENT, &ent_key(part, entity))?.map(|b| decode::<Entity>(&b, "entity")).transpose()?;
    let attributes = stored.as_ref().map_or(0, |e| u32::try_from(e.attributes.len()).unwrap_or(u32::MAX));
    let mut tally = Tally::default();
    let mut relations = 0;
    // Its relations, and the copies they keep of themselves filed apart (`past_adjacency.rs`).
    let mut listed = tx.prefix(ADJ, &adj_prefix(part, entity))?;
    listed.extend(tx.prefix(ADJ_PAST, &adj_prefix(part, entity))?);
    for (key, _) in listed {
        let rel_id = trailing_id(&key)?;
        let Some(bytes) = tx.get(REL, &rel_key(part, rel_id))? else { continue };
        let rel: Relation = decode(&bytes, "relation")?;
        let target = fact_target(&name_of(tx, part, rel.from)?, &rel.rel_type, &name_of(tx, part, rel.to)?);
        let folded_type = fold(&rel.rel_type);
        for tree in [ADJ, ADJ_PAST] {
            tx.delete(tree, &adj_key(part, rel.from, OUT, &folded_type, rel_id))?;
            tx.delete(tree, &adj_key(part, rel.to, IN, &folded_type, rel_id))?;
        }
        if tx.delete(REL, &rel_key(part, rel_id))? {
            tally.relation(part, Some(&rel), None);
        }
        super::super::fact_writes::remove(tx, part, rel_id)?;
        super::super::source_index::refile(tx, part, Some(&rel), None)?;
        // Its id and ends answer "already" through the `fact` form, as if forgotten one by one.
        bury_relation(tx, part, &rel, &target, now)?;
        relations += 1;
    }
    // Its attributes went with it: the `attribute` form answers "already" for each of them.
    for key in stored.iter().flat_map(|e| e.attributes.keys()) {
        bury(tx, part, "attribute", &format!("{folded}\0{key}"), now)?;
    }
    // Passages naming the subject: those linked to it, and any that name it without a link (stored
    // before the entity existed), found by full text and confirmed by a whole-word match.
    let subject_name = stored.as_ref().map_or_else(|| name.trim().to_owned(), |e| e.name.clone());
    let mut naming: BTreeSet<(u64, u32)> = BTreeSet::new();
    for (key, _) in tx.prefix(MENTION, &part.key(&[&entity.to_be_bytes()]))? {
        let at = key.get(key.len() - 12..).ok_or_else(|| corrupt("a mention key is too short"))?;
        naming.insert((
            u64::from_be_bytes(at[..8].try_into().expect("8 bytes")),
            u32::from_be_bytes(at[8..].try_into().expect("4 bytes")),
        ));
    }
    naming.extend(unlinked_naming(tx, part, &subject_name, &naming)?);
    let gone = forget_passages(tx, part, &naming.into_iter().collect::<Vec<_>>(), Some(entity), (&mut tally, now))?;
    tx.delete(ENT, &ent_key(part, entity))?;
    super::super::attr_index::remove(tx, part, entity, None)?;
    tally.entity(part, stored.as_ref(), None);
    tally.flush(tx)?;
    tx.delete(ENT_NAME, &name_key)?;
    tx.put(FORGOTTEN, &forgotten_key(part, &folded), &now.to_be_bytes())?;
    super::strip_events(tx, part, &super::Strip::Subject(&folded))?;
    super::strip_events(tx, part, &super::Strip::Documents(&gone.removed_docs))?;
    Ok(Forgot::Forgotten {
        entity: Some(entity),
        relations,
        passages: gone.passages,
        documents: gone.documents,
        attributes,
        kept_entities: gone.kept_entities.into_iter().collect(),
        kept_documents: gone.kept_documents,
    })
}

/// A subject forgotten before (no entity has the name now): the passages stored since that name
/// it go, as the first forget took those stored before; with none, it is already forgotten.
fn forget_gone(tx: &mut WriteTxn<'_>, part: &Partition, name: &str, folded: &str, now: i64) -> Result<Forgot> {
    let naming = unlinked_naming(tx, part, name, &BTreeSet::new())?;
    if naming.is_empty() {
        return Ok(Forgot::AlreadyForgotten);
    }
    let mut tally = Tally::default();
    let gone = forget_passages(tx, part, &naming, None, (&mut tally, now))?;
    tally.flush(tx)?;
    // Whichever key the name was kept under (a plain one until `compact --purge`), the hashed one
    // now says when it last went.
    tx.put(FORGOTTEN, &forgotten_key(part, folded), &now.to_be_bytes())?;
    super::strip_events(tx, part, &super::Strip::Documents(&gone.removed_docs))?;
    Ok(Forgot::Forgotten {
        entity: None,
        relations: 0,
        passages: gone.passages,
        documents: gone.documents,
        attributes: 0,
        kept_entities: gone.kept_entities.into_iter().collect(),
        kept_documents: gone.kept_documents,
    })
}

/// The passages (document, ordinal) that name `name` as a whole word without a mention link to
/// it (none of `linked`): found by full text, confirmed by `mentions_name`. In order, once each:
/// a subject named in thousands of passages is looked up once for each.
fn unlinked_naming(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    name: &str,
    linked: &BTreeSet<(u64, u32)>,
) -> Result<Vec<(u64, u32)>> {
    let mut found = BTreeSet::new();
    for (doc, ordinal) in fts::passages_with_all_terms(tx, part.raw(), name)? {
        if !linked.contains(&(doc, ordinal))
            && passage_text(tx, part, doc, ordinal)?.is_some_and(|text| mentions_name(&text, name))
        {
            found.insert((doc, ordinal));
        }
    }
    Ok(found.into_iter().collect())
}

/// What `forget_passages` removed and kept.
struct PassagesGone {
    passages: u32,
    documents: u32,
    kept_documents: u32,
    kept_entities: BTreeSet<u64>,
    /// Documents removed whole, sorted (as `Strip` reads them).
    removed_docs: Vec<u64>,
}

/// Removes passages `naming` (sorted) of the subject `entity` (if stored): their postings, links
/// and spans; a document left with none goes, one that keeps others has their text blanked.
fn forget_passages(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    naming: &[(u64, u32)],
    entity: Option<u64>,
    (tally, now): (&mut Tally, i64),
) -> Result<PassagesGone> {
    let mut gone = PassagesGone {
        passages: 0,
        documents: 0,
        kept_documents: 0,
        kept_entities: BTreeSet::new(),
        removed_docs: Vec::new(),
    };
    // By document, in id order, so the documents removed below are listed sorted, as `Strip`
    // reads them.
    let mut spans: BTreeMap<u64, Vec<PassageSpan>> = BTreeMap::new();
    // Their full-text postings go all together (`fts::remove_passages`), not one passage at a time.
    fts::remove_passages(tx, part.raw(), naming)?;
    for &(doc, ordinal) in naming {
        let at = [&doc.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
        let of_doc = spans.entry(doc).or_default();
        if let Some(span) = tx.get(PSG, &part.key(&[&at]))? {
            of_doc.push(decode(&span, "passage")?);
        }
        let linked = unlink_passage(tx, part, (doc, ordinal), tally)?;
        gone.kept_entities.extend(linked.into_iter().filter(|&e| Some(e) != entity));
        gone.passages += 1;
    }
    for (doc, spans_gone) in spans {
        if !tx.prefix(PSG, &part.key(&[&doc.to_be_bytes()]))?.is_empty() {
            // The document keeps passages that do not name the subject; the text of those that
            // did is blanked, so no read (export included) can return it.
            super::blank_spans(tx, part, doc, &spans_gone)?;
            gone.kept_documents += 1;
            continue;
        }
        let doc_key = part.key(&[&doc.to_be_bytes()]);
        if let Some(bytes) = tx.get(DOC, &doc_key)? {
            let d: Document = decode(&bytes, "document")?;
            remove_hash(tx, part, &d.text, d.date.as_deref(), doc)?;
            tx.delete(DOC, &doc_key)?;
            super::super::source_index::unfile_document(tx, part, &d)?;
            tally.documents(part, -1);
            // The `passage` form of a document that went with the subject answers "already".
            bury_document(tx, part, &d, now)?;
            gone.removed_docs.push(doc);
            gone.documents += 1;
        }
    }
    Ok(gone)
}

/// Rewrites every plain `FORGOTTEN` entry (`part | folded name`, as stores written before hashed
/// names hold it) to its hashed key, keeping its time; returns how many it rewrote. `compact
/// --purge` runs it first, so no forgotten name survives the purge, while "already forgotten"
/// answers as before.
pub fn rehash_forgotten(tx: &mut WriteTxn<'_>) -> Result<u64> {
    let mut rewritten = 0;
    for (key, value) in tx.prefix(FORGOTTEN, b"")? {
        let part = Partition::of_key(&key)?;
        let keyed = &key[part.prefix().len()..];
        if keyed.first() == Some(&HASHED) {
            continue;
        }
        let hashed = hashed_forgotten(&part, keyed);
        // A name forgotten again since (hashed then) keeps the later time.
        let later = match tx.get(FORGOTTEN, &hashed)? {
            Some(have) if have.as_slice() > value.as_slice() => have,
            _ => value,
        };
        tx.put(FORGOTTEN, &hashed, &later)?;
        tx.delete(FORGOTTEN, &key)?;
        rewritten += 1;
    }
    Ok(rewritten)
}

/// What a subject's name finds.
enum Named {
    /// The entity of that exact name: its id and name key.
    Stored(u64, Vec<u8>),
    /// No entity, but the name was forgotten before.
    Gone,
    /// Neither: what forgetting it answers (not found, with the names meant).
    Missing(Forgot),
}

/// Up to three stored names of `part` that `name`, which names no entity, may mean. Forget takes
/// exact names only, so a name that would recall (a word of a longer name, a near spelling) is a
/// suggestion here, as are names it begins, then the names it holds or abbreviates word by word
/// ("Dr. Priya Raman", "Priya R."), as recall's misses offer them.
pub(super) fn names_meant(tx: &mut WriteTxn<'_>, part: &Partition, name: &str) -> Result<Vec<String>> {
    let names = entities_in(tx, part)?;
    let index = NameIndex::new(names.iter().map(|e| (e.id, e.name.as_str())));
    let spelled = index.lookup(name, LookupOptions { prefix: true, limit: SUGGESTIONS, as_name: false });
    let held = index.held_or_abbreviated(name, 16);
    let mut meant: Vec<String> = Vec::new();
    add_suggestions(&mut meant, spelled.into_iter().map(|m| m.name).chain(held.into_iter().map(|(_, n)| n)));
    Ok(meant)
}

/// What `name` finds (see `Named`).
fn named(tx: &mut WriteTxn<'_>, part: &Partition, name: &str) -> Result<Named> {
    let folded = fold(name.trim());
    if folded.is_empty() {
        return Err(Error::InvalidArgument("subject must not be empty".into()));
    }
    let Some((name_key, _)) = tx.prefix(ENT_NAME, &name_prefix(part, &folded))?.into_iter().next() else {
        // Hashed, or plain in a store written before (until `compact --purge` rehashes it).
        if tx.get(FORGOTTEN, &forgotten_key(part, &folded))?.is_some()
            || tx.get(FORGOTTEN, &legacy_forgotten_key(part, &folded))?.is_some()
        {
            return Ok(Named::Gone);
        }
        return Ok(Named::Missing(Forgot::NotFound { did_you_mean: names_meant(tx, part, name)? }));
    };
    let entity = trailing_id(&name_key)?;
    let stored: Entity =
        decode(&tx.get(ENT, &ent_key(part, entity))?.ok_or_else(|| corrupt("a named entity is missing"))?, "entity")?;
    // Exact up to canonical equivalence: "Rene\u{301}e" and "Ren\u{e9}e" are one spelling, as every
    // other verb reads them (found by an audit: the suggestion looked exactly like the name sent).
    if !stored.name.nfc().eq(name.trim().nfc()) {
        return Ok(Named::Missing(Forgot::NotFound { did_you_mean: vec![stored.name] }));
    }
    Ok(Named::Stored(entity, name_key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::testing::{assertion, fresh, seeded_with};
    use crate::knowledge::trees::{DOC_HASH, DOC_HASH8, MENTIONED};
    use crate::knowledge::{Recall, When, recall, relate, remember_text};
    use crate::store::Store;
    use serde_json::Map;

    const TEXT: &str = "Priya Raman joined Acme in 2024 to lead the lighthouse project.";

    fn seeded() -> (tempfile::TempDir, Store, Partition) {
        seeded_with(|tx, p| {
            let none = Map::new();
            relate(tx, p, assertion("Priya Raman", "Acme", "works_at", &none, "a"), 1)?;
            relate(tx, p, assertion("Jonas Weber", "Acme", "works_at", &none, "a"), 2)?;
            remember_text(tx, p, TEXT, Some("chat"), None, 3)
        })
    }

    fn forget(store: &Store, part: &Partition, name: &'static str) -> Forgot {
        let p = part.clone();
        store.write(move |tx| forget_subject(tx, &p, name, 9)).unwrap().0
    }

    #[test]
    fn a_forgotten_subject_is_unreachable_everywhere() {
        let (_dir, store, part) = seeded();
        // Exact name only (DESIGN.md §2): another case names her but forgets nothing.
        assert_eq!(forget(&store, &part, "priya raman"), Forgot::NotFound { did_you_mean: vec!["Priya Raman".into()] });
        let snap = store.snapshot().unwrap();
        assert!(matches!(recall(&snap, &part, "Priya Raman", &When::default()).unwrap(), Recall::Answered { .. }));
        let Forgot::Forgotten { relations, passages, documents, kept_entities, .. } =
            forget(&store, &part, " Priya Raman ")
        else {
            panic!("Priya should be forgotten")
        };
        assert_eq!((relations, passages, documents), (1, 1, 1));
        assert_eq!(kept_entities.len(), 1, "Acme was mentioned too and is kept");
        let snap = store.snapshot().unwrap();
        assert!(matches!(recall(&snap, &part, "Priya Raman", &When::default()).unwrap(), Recall::NothingStored { .. }));
        assert!(fts::search(&snap, part.raw(), "lighthouse", 5).unwrap().is_empty());
        let Recall::Answered { facts, .. } = recall(&snap, &part, "Acme", &When::default()).unwrap() else {
            panic!("Acme stays")
        };
        assert_eq!(facts.len(), 1, "only Jonas's relation is left");
        for tree in [DOC, DOC_HASH, DOC_HASH8, PSG, MENTION, MENTIONED] {
            assert_eq!(snap.prefix(tree, part.prefix()).unwrap().count(), 0, "{tree} kept forgotten data");
        }
        for tree in [fts::POST_TREE, fts::DOC_TREE] {
            assert_eq!(snap.tree_len(tree).unwrap(), 0, "{tree} kept forgotten data");
        }
    }

    #[test]
    fn a_name_sent_in_another_normal_form_is_the_same_exact_name() {
        let (_dir, store, part) = seeded_with(|tx, p| {
            relate(tx, p, assertion("Rene\u{301}e Mu\u{308}ller", "Acme", "works_at", &Map::new(), "a"), 1)
        });
        assert!(matches!(forget(&store, &part, "Ren\u{e9}e M\u{fc}ller"), Forgot::Forgotten { relations: 1, .. }));
        assert_eq!(forget(&store, &part, "Rene\u{301}e Mu\u{308}ller"), Forgot::AlreadyForgotten);
    }

    #[test]
    fn passages_stored_before_the_entity_existed_go_too() {
        let (_dir, store, part) = fresh();
        let p = part.clone();
        store
            .write(move |tx| {
                remember_text(tx, &p, "Jonas Weber met the team.", None, None, 1)?;
                remember_text(tx, &p, "Weber is also a unit of magnetic flux.", None, None, 2)?;
                relate(tx, &p, assertion("Priya Raman", "Jonas Weber", "knows", &Map::new(), "a"), 3)
            })
            .unwrap();
        let Forgot::Forgotten { passages, documents, .. } = forget(&store, &part, "Jonas Weber") else {
            panic!("forgotten")
        };
        assert_eq!((passages, documents), (1, 1), "the unlinked passage naming him goes; the one naming a unit stays");
        let snap = store.snapshot().unwrap();
        assert!(fts::search(&snap, part.raw(), "Jonas", 5).unwrap().is_empty());
        assert_eq!(fts::search(&snap, part.raw(), "flux", 5).unwrap().len(), 1);
    }

    /// Found by an audit: once Priya was forgotten, a passage naming her stored later (a chat log
    /// stored again) could not be forgotten: the form answered "already forgotten" and kept it.
    #[test]
    fn text_naming_a_forgotten_subject_since_goes_when_forgotten_again() {
        let (_dir, store, part) = seeded();
        assert!(matches!(forget(&store, &part, "Priya Raman"), Forgot::Forgotten { entity: Some(_), .. }));
        let p = part.clone();
        store
            .write(move |tx| {
                remember_text(tx, &p, "Priya Raman says her new PIN is 9931.", None, None, 10)?;
                remember_text(tx, &p, "Jonas Weber reviewed the budget.", None, None, 11)
            })
            .unwrap();
        let again = forget(&store, &part, "Priya Raman");
        assert_eq!(
            again,
            Forgot::Forgotten {
                entity: None,
                relations: 0,
                passages: 1,
                documents: 1,
                attributes: 0,
                kept_entities: vec![],
                kept_documents: 0
            }
        );
        let snap = store.snapshot().unwrap();
        assert!(fts::search(&snap, part.raw(), "9931", 5).unwrap().is_empty(), "the new PIN is gone");
        assert_eq!(fts::search(&snap, part.raw(), "budget", 5).unwrap().len(), 1, "other text stays");
        assert_eq!(forget(&store, &part, "Priya Raman"), Forgot::AlreadyForgotten, "nothing is left now");
    }

    /// Found by an audit: a passage writing the name in full-width letters stayed.
    #[test]
    fn a_name_in_full_width_letters_is_the_name() {
        let (_dir, store, part) = seeded();
        let p = part.clone();
        store
            .write(move |tx| {
                let text = "\u{ff30}\u{ff52}\u{ff49}\u{ff59}\u{ff41} \u{ff32}\u{ff41}\u{ff4d}\u{ff41}\u{ff4e} paid the deposit.";
                remember_text(tx, &p, text, None, None, 5)
            })
            .unwrap();
        let Forgot::Forgotten { passages, documents, .. } = forget(&store, &part, "Priya Raman") else {
            panic!("forgotten")
        };
        assert_eq!((passages, documents), (2, 2));
        assert!(fts::search(&store.snapshot().unwrap(), part.raw(), "deposit", 5).unwrap().is_empty());
    }

    #[test]
    fn forgetting_again_is_already_and_a_miss_suggests_own_names() {
        let (_dir, store, part) = seeded();
        assert!(matches!(forget(&store, &part, "Priya Raman"), Forgot::Forgotten { .. }));
        assert_eq!(forget(&store, &part, "Priya Raman"), Forgot::AlreadyForgotten);
        assert_eq!(forget(&store, &part, "Jonas"), Forgot::NotFound { did_you_mean: vec!["Jonas Weber".into()] });
        let other = Partition::new("local", "u2", "default").unwrap();
        assert_eq!(forget(&store, &other, "Jonas"), Forgot::NotFound { did_you_mean: vec![] });
    }

    /// Found by an audit: recall offered "Priya Raman" for "Dr. Priya Raman" and "Priya R.", forget
    /// offered nothing for the same names.
    #[test]
    fn a_miss_that_holds_or_abbreviates_a_stored_name_is_offered_it_from_its_own_partition_only() {
        let (_dir, store, part) = seeded();
        let theirs = Partition::new("local", "u2", "default").unwrap();
        let elsewhere = Partition::new("local", "u1", "work").unwrap();
        for p in [theirs.clone(), elsewhere.clone()] {
            let none = Map::new();
            store
                .write(move |tx| relate(tx, &p, assertion("Priya Rao", "Acme Group", "works_at", &none, "a"), 4))
                .unwrap();
        }
        for (name, meant) in [("Dr. Priya Raman", "Priya Raman"), ("Priya R.", "Priya Raman"), ("Acme Inc", "Acme")] {
            assert_eq!(forget(&store, &part, name), Forgot::NotFound { did_you_mean: vec![meant.into()] }, "{name}");
        }
        assert_eq!(forget(&store, &theirs, "Dr. Priya Raman"), Forgot::NotFound { did_you_mean: vec![] });
        assert_eq!(forget(&store, &elsewhere, "Jonas W."), Forgot::NotFound { did_you_mean: vec![] });
        let snap = store.snapshot().unwrap();
        assert!(matches!(recall(&snap, &part, "Priya Raman", &When::default()).unwrap(), Recall::Answered { .. }));
    }
}
