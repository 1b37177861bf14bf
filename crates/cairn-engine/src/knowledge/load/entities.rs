//! What a load knows of its entities while planning: source ids and folded names to entity
//! indexes, and each entity's folded name. Where a fact's end resolves is read from it alone, so
//! a copy of it taken before the facts are planned lets a helper resolve ends ahead of the
//! planning (`Plan::facts`).

use super::folded::FoldedNames;
use super::{End, FactRec, Found, Resolved, Src};
use crate::text::{FastMap, fold, folds_to};

#[derive(Default, Clone)]
pub(super) struct Entities {
    /// Source ids (with their origin) → local entity index (the `k.import_map` entries).
    pub(super) map: FastMap<Src, usize>,
    /// Folded name → local entity index.
    pub(super) names: FastMap<String, usize>,
    /// Each entity's `fold` of its trimmed name.
    pub(super) folded: FoldedNames,
}

impl Entities {
    /// Whether entity `at` is the one fact end `end` names, if it names one.
    pub(super) fn same_name(&self, end: &End<'_>, at: usize) -> bool {
        end.named().is_none_or(|n| folds_to(n, self.folded.get(at)))
    }

    /// The entity a fact end's id maps to, unless its name names another.
    pub(super) fn mapped_end(&self, end: &End<'_>) -> Option<usize> {
        let at = *self.map.get(&end.id?)?;
        self.same_name(end, at).then_some(at)
    }

    /// Where `r`'s ends resolve now.
    pub(super) fn resolved(&self, r: &FactRec<'_>) -> Resolved {
        // One lookup of the id answers both whether it is known and where it maps.
        let end = |e: &End<'_>| -> (bool, Option<Found<'static>>) {
            let mapped = e.id.and_then(|s| self.map.get(&s).copied());
            // An end its id maps is never folded: an export's always are.
            let found = match mapped.filter(|&at| self.same_name(e, at)) {
                Some(at) => Some(Found::Mapped(at)),
                None => e.named().and_then(|n| self.names.get(&fold(n))).map(|&at| Found::Named(at)),
            };
            (mapped.is_some(), found)
        };
        let [(known_from, from), (known_to, to)] = [end(&r.ends[0]), end(&r.ends[1])];
        Resolved { known: [known_from, known_to], found: [from, to] }
    }
}
