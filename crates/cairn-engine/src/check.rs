//! The integrity checker: reads every reachable page from disk (bypassing the cache), verifies its
//! checksum and kind, every B+tree invariant (key order, separator bounds, uniform depth, entry
//! counts, overflow chain lengths), and that every page is exactly one of reachable or free.

use crate::btree::{CAPACITY, NodeView, Value};
use crate::error::Error;
use crate::page::{self, Kind, NO_PAGE, Page, PageId};
use crate::snapshot::TreeInfo;
use crate::store::Writer;
use std::collections::HashSet;

/// What `check` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// No problems.
    pub ok: bool,
    /// The transaction checked.
    pub txn: u64,
    pub pages_total: u64,
    pub pages_reachable: u64,
    pub pages_free: u64,
    pub trees: Vec<TreeInfo>,
    pub problems: Vec<Problem>,
}

/// One thing wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub page: Option<u64>,
    pub tree: Option<String>,
    pub what: String,
}

struct Checker<'a> {
    w: &'a Writer,
    seen: HashSet<PageId>,
    problems: Vec<Problem>,
    tree: Option<String>,
}

impl Checker<'_> {
    fn problem(&mut self, page: Option<PageId>, what: impl Into<String>) {
        self.problems.push(Problem { page, tree: self.tree.clone(), what: what.into() });
    }

    fn record_error(&mut self, e: &Error, fallback: PageId) {
        match e {
            Error::Corruption(c) => self.problem(c.page.or(Some(fallback)), c.what.clone()),
            other => self.problem(Some(fallback), other.to_string()),
        }
    }

    /// Reads a page for checking; records a problem and returns `None` when it cannot be used.
    fn visit(&mut self, id: PageId) -> Option<Page> {
        if id < 2 || id >= self.w.page_count() {
            self.problem(Some(id), format!("reference to page {id}, outside the file's {} pages", self.w.page_count()));
            return None;
        }
        if !self.seen.insert(id) {
            self.problem(Some(id), "page is reachable twice");
            return None;
        }
        match self.w.core.file.read_uncached(id) {
            Ok(p) => Some(p),
            Err(e) => {
                self.record_error(&e, id);
                None
            }
        }
    }

    /// Walks a subtree whose keys must lie in `[lo, hi)`; returns (depth, entries).
    fn walk(&mut self, id: PageId, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Option<(usize, u64)> {
        let page = self.visit(id)?;
        let view = match NodeView::new(id, &page) {
            Ok(v) => v,
            Err(e) => {
                self.record_error(&e, id);
                return None;
            }
        };
        let mut keys = Vec::with_capacity(view.len());
        for i in 0..view.len() {
            match view.key(i) {
                Ok(k) => keys.push(k.to_vec()),
                Err(e) => {
                    self.record_error(&e, id);
                    return None;
                }
            }
        }
        if keys.windows(2).any(|w| w[0] >= w[1]) {
            self.problem(Some(id), "keys are not in strictly ascending order");
        }
        if let (Some(lo), Some(first)) = (lo, keys.first())
            && first.as_slice() < lo
        {
            self.problem(Some(id), "a key is below its parent's separator");
        }
        if let (Some(hi), Some(last)) = (hi, keys.last())
            && last.as_slice() >= hi
        {
            self.problem(Some(id), "a key is at or above the next separator");
        }
        if view.is_leaf() {
            if keys.is_empty() {
                self.problem(Some(id), "empty leaf");
            }
            for i in 0..view.len() {
                match view.value(i) {
                    Ok(Value::Overflow { first, len }) => self.overflow(first, len),
                    Ok(Value::Inline(_)) => {}
                    Err(e) => self.record_error(&e, id),
                }
            }
            return Some((1, keys.len() as u64));
        }
        let mut depth = None;
        let mut entries = 0;
        for slot in 0..view.child_count() {
            let child = match view.child(slot) {
                Ok(c) => c,
                Err(e) => {
                    self.record_error(&e, id);
                    return None;
                }
            };
            let clo = if slot == 0 { lo } else { Some(keys[slot - 1].as_slice()) };
            let chi = if slot < keys.len() { Some(keys[slot].as_slice()) } else { hi };
            let (d, n) = self.walk(child, clo, chi)?;
            entries += n;
            match depth {
                None => depth = Some(d),
                Some(x) if x != d => self.problem(Some(id), "children at different depths"),
                Some(_) => {}
            }
        }
        Some((depth.unwrap_or(0) + 1, entries))
    }

    fn overflow(&mut self, first: PageId, len: u32) {
        let mut remaining = len as usize;
        let mut id = first;
        while remaining > 0 {
            if id == NO_PAGE {
                self.problem(Some(first), "overflow chain ends before its value does");
                return;
            }
            let Some(p) = self.visit(id) else { return };
            if page::kind(&p) != Some(Kind::Overflow) {
                self.problem(Some(id), "expected an overflow page");
                return;
            }
            let n = page::count(&p);
            if n == 0 || n > CAPACITY || n > remaining {
                self.problem(Some(id), "overflow page length does not match its value");
                return;
            }
            remaining -= n;
            id = page::link(&p);
        }
    }
}

/// Checks the writer's current state. Runs on the writer thread, so nothing moves meanwhile.
pub(crate) fn run(w: &Writer) -> CheckReport {
    let mut c = Checker { w, seen: HashSet::new(), problems: Vec::new(), tree: None };
    if let Err(e) = w.core.file.read_uncached(w.meta_slot()) {
        c.record_error(&e, w.meta_slot());
    }
    if w.core.catalog_root != NO_PAGE {
        c.tree = Some("(catalog)".into());
        c.walk(w.core.catalog_root, None, None);
    }
    let mut trees = Vec::new();
    for (name, t) in w.core.trees.iter() {
        c.tree = Some(name.clone());
        if let Some((_, n)) = c.walk(t.root, None, None)
            && n != t.len
        {
            c.problem(Some(t.root), format!("tree counts {} entries but holds {n}", t.len));
        }
        trees.push(TreeInfo { name: name.clone(), entries: t.len });
    }
    c.tree = None;
    for &id in &w.core.alloc.list_pages {
        if let Some(p) = c.visit(id)
            && page::kind(&p) != Some(Kind::Freelist)
        {
            c.problem(Some(id), "expected a free-list page");
        }
    }
    let pages_reachable = c.seen.len() as u64;
    let mut pages_free = 0;
    let structural = !c.problems.is_empty();
    for id in 2..w.page_count() {
        let free = w.core.alloc.is_free(id) && !w.core.alloc.list_pages.contains(&id);
        if free {
            pages_free += 1;
            if c.seen.contains(&id) {
                c.problem(Some(id), "page is both free and in use");
            }
        } else if !c.seen.contains(&id) && !structural {
            // Unreachable because of damage above is already reported; otherwise it is a leak.
            c.problem(Some(id), "page is neither reachable nor free (leaked)");
        }
    }
    CheckReport {
        ok: c.problems.is_empty(),
        txn: w.core.last_txn,
        pages_total: w.page_count(),
        pages_reachable,
        pages_free,
        trees,
        problems: c.problems,
    }
}
