//! The entities an imported document's passages name. Linked against every entity of the scope,
//! read whole for each import call that held a document: found by QA at 50k entities, a page
//! holding documents took 2.2–2.6 s (every entity read and a linker built over 50k names), so
//! an import of a scope of many documents paid that per page. When the caller gives the store's
//! directory, the names are taken from the cache of the scope's names (`cache.rs`, kept between
//! calls) as they were before the call created any entity, and the entities the call wrote are
//! linked apart: together they are every entity of the scope (a name never changes).
use super::cache::{Names, names_in};
use super::graph::{entities_in, entity_exists_in};
use super::part::Partition;
use crate::error::Result;
use crate::text::Linker;
use crate::write::WriteTxn;
use std::path::Path;
use std::sync::Arc;

/// How a call links its documents' passages.
pub(super) enum Links {
    /// Every entity of the scope, read when the first document comes.
    Whole(Option<Linker>),
    /// The scope's names before the call, and a linker of those the call wrote, built when the
    /// first document comes.
    Cached(Arc<Names>, Option<Linker>),
}

impl Links {
    /// Links for a call of `part` in `tx`, before it writes any entity; `dir` keys the cache.
    pub(super) fn before(tx: &mut WriteTxn<'_>, part: &Partition, dir: Option<&Path>) -> Result<Links> {
        Ok(match dir {
            Some(dir) => Links::Cached(names_in(dir, tx, part)?, None),
            None => Links::Whole(None),
        })
    }

    /// The entities `passage` names, ascending, each once; `written` lists the (family, name,
    /// id) the call wrote so far, whose entities the cached names may lack.
    pub(super) fn find(
        &mut self,
        tx: &mut WriteTxn<'_>,
        part: &Partition,
        passage: &str,
        written: &[(&'static str, String, u64)],
    ) -> Result<Vec<u64>> {
        let mut ids: Vec<u64> = match self {
            Links::Whole(linker) => {
                if linker.is_none() {
                    let names = entities_in(tx, part)?;
                    *linker = Some(Linker::new(names.iter().map(|e| (e.id, e.name.as_str()))));
                }
                linker.as_ref().expect("built above").find(passage).into_iter().map(|m| m.entity).collect()
            }
            Links::Cached(names, linker) => {
                let wrote = linker.get_or_insert_with(|| {
                    Linker::new(written.iter().filter(|w| w.0 == "entity").map(|(_, name, id)| (*id, name.as_str())))
                });
                let mut ids: Vec<u64> = wrote.find(passage).into_iter().map(|m| m.entity).collect();
                for m in names.find(passage) {
                    // The cache may still hold a forgotten entity: link only what exists.
                    if entity_exists_in(tx, part, m.entity)? {
                        ids.push(m.entity);
                    }
                }
                ids
            }
        };
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }
}
