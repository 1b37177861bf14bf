//! Leaf and branch pages: slotted layout, zero-copy views for reads, owned nodes for writes.
//!
//! After the header, `count` u16 slots hold the offsets of cells packed from the end of the page.
//! Leaf cell: `key_len u16 | value_len u32 (bit 31: value is in an overflow chain) | key | value`,
//! where an overflowed value is stored as the u64 id of its first overflow page.
//! Branch cell: `key_len u16 | child u64 | key`; the header's link is the leftmost child, and
//! cell `i`'s child holds the keys `>= key_i` (and `< key_{i+1}`).

use super::bytes::Bytes;
use crate::error::{Error, Result};
use crate::limits::PAGE_SIZE;
use crate::page::{self, HEADER_LEN, Kind, Page, PageBuilder, PageId, u16_at, u32_at, u64_at};

/// Payload bytes available in a page.
pub(crate) const CAPACITY: usize = PAGE_SIZE - HEADER_LEN;
/// A leaf cell larger than this has its value moved to overflow pages, so every page holds at
/// least two cells.
pub(crate) const MAX_INLINE_CELL: usize = 2000;
/// A node filled below this after a delete is merged with a sibling.
pub(crate) const MIN_FILL: usize = CAPACITY / 4;

pub(super) const OVERFLOW_FLAG: u32 = 1 << 31;

/// A leaf value: inline bytes or a reference to an overflow chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Inline(Bytes),
    Overflow { first: PageId, len: u32 },
}

impl Value {
    fn stored_len(&self) -> usize {
        match self {
            Value::Inline(v) => v.len(),
            Value::Overflow { .. } => 8,
        }
    }
}

/// Bytes a leaf entry takes in a page, slot included.
pub(crate) fn leaf_entry_size(key: &[u8], value: &Value) -> usize {
    leaf_size(key.len(), value.stored_len())
}

/// Bytes a leaf entry of a `key_len`-byte key takes in a page, slot included, its value stored in
/// `stored` bytes (inline, or 8 for the first page of an overflow chain).
pub(crate) fn leaf_size(key_len: usize, stored: usize) -> usize {
    2 + 6 + key_len + stored
}

/// Bytes a branch entry takes in a page, slot included.
pub(crate) fn branch_entry_size(key: &[u8]) -> usize {
    2 + 10 + key.len()
}

/// Whether a value of `len` bytes under `key` is stored inline.
pub(crate) fn fits_inline(key: &[u8], len: usize) -> bool {
    6 + key.len() + len <= MAX_INLINE_CELL
}

/// A bounds-checked view of a leaf or branch page.
pub(crate) struct NodeView<'a> {
    id: PageId,
    bytes: &'a [u8],
    count: usize,
    kind: Kind,
}

impl<'a> NodeView<'a> {
    #[inline]
    pub(crate) fn new(id: PageId, bytes: &'a [u8]) -> Result<Self> {
        let kind = match page::kind(bytes) {
            Some(k @ (Kind::Leaf | Kind::Branch)) => k,
            other => return Err(Error::corrupt(Some(id), format!("expected a tree page, found {other:?}"))),
        };
        let count = page::count(bytes);
        if HEADER_LEN + 2 * count > PAGE_SIZE {
            return Err(Error::corrupt(Some(id), "slot array overruns the page"));
        }
        Ok(NodeView { id, bytes, count, kind })
    }

    pub(crate) fn is_leaf(&self) -> bool {
        self.kind == Kind::Leaf
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    fn bad(&self, what: &str) -> Error {
        Error::corrupt(Some(self.id), what.to_owned())
    }

    /// The raw offset of cell `i` as its slot records it (unchecked; for free-space arithmetic
    /// on a page already verified by a read).
    #[inline]
    pub(crate) fn cell_offset(&self, i: usize) -> usize {
        u16_at(self.bytes, HEADER_LEN + 2 * i) as usize
    }

    #[inline]
    fn cell(&self, i: usize) -> Result<usize> {
        let off = u16_at(self.bytes, HEADER_LEN + 2 * i) as usize;
        if off < HEADER_LEN + 2 * self.count || off + 6 > PAGE_SIZE {
            return Err(self.bad("cell offset out of range"));
        }
        Ok(off)
    }

    #[inline]
    fn slice(&self, start: usize, len: usize) -> Result<&'a [u8]> {
        self.bytes.get(start..start + len).ok_or_else(|| self.bad("cell overruns the page"))
    }

    /// Where the key of entry `i` lies in the page: (start, len).
    #[inline]
    fn key_span(&self, i: usize) -> Result<(usize, usize)> {
        let off = self.cell(i)?;
        let klen = u16_at(self.bytes, off) as usize;
        let start = if self.is_leaf() { off + 6 } else { off + 10 };
        self.slice(start, klen)?;
        Ok((start, klen))
    }

    /// The key of entry `i`.
    #[inline]
    pub(crate) fn key(&self, i: usize) -> Result<&'a [u8]> {
        let (start, len) = self.key_span(i)?;
        Ok(&self.bytes[start..start + len])
    }

    /// The value of leaf entry `i`: an overflow reference, or the span of its inline bytes.
    pub(crate) fn value_span(&self, i: usize) -> Result<std::result::Result<(usize, usize), Value>> {
        let off = self.cell(i)?;
        let klen = u16_at(self.bytes, off) as usize;
        let vlen = u32_at(self.bytes, off + 2);
        let start = off + 6 + klen;
        if vlen & OVERFLOW_FLAG != 0 {
            let first = u64::from_le_bytes(self.slice(start, 8)?.try_into().expect("8 bytes"));
            Ok(Err(Value::Overflow { first, len: vlen & !OVERFLOW_FLAG }))
        } else {
            self.slice(start, vlen as usize)?;
            Ok(Ok((start, vlen as usize)))
        }
    }

    /// The bytes of leaf entry `i`'s value when it is inline (`None` for an overflow chain).
    #[inline]
    pub(crate) fn inline_value(&self, i: usize) -> Result<Option<&'a [u8]>> {
        Ok(match self.value_span(i)? {
            Ok((start, len)) => Some(&self.bytes[start..start + len]),
            Err(_) => None,
        })
    }

    /// The value of leaf entry `i`, copied out of the page.
    pub(crate) fn value(&self, i: usize) -> Result<Value> {
        Ok(match self.value_span(i)? {
            Ok((start, len)) => Value::Inline(Bytes::Owned(self.bytes[start..start + len].to_vec())),
            Err(v) => v,
        })
    }

    /// The child of branch slot `i`, where slot 0 is the leftmost child and slot `i + 1` is the
    /// child of cell `i`.
    #[inline]
    pub(crate) fn child(&self, i: usize) -> Result<PageId> {
        if i == 0 {
            return Ok(page::link(self.bytes));
        }
        let off = self.cell(i - 1)?;
        Ok(u64_at(self.bytes, off + 2))
    }

    /// Leaf: `Ok(i)` when entry `i` has `key`, else `Err(i)` with its insertion point.
    #[inline]
    pub(crate) fn search(&self, key: &[u8]) -> Result<std::result::Result<usize, usize>> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = usize::midpoint(lo, hi);
            match self.key(mid)?.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Ok(mid)),
            }
        }
        Ok(Err(lo))
    }

    /// Branch: the child slot whose subtree holds `key`.
    #[inline]
    pub(crate) fn child_slot(&self, key: &[u8]) -> Result<usize> {
        Ok(match self.search(key)? {
            Ok(i) => i + 1,
            Err(i) => i,
        })
    }

    pub(crate) fn child_count(&self) -> usize {
        self.count + 1
    }
}

/// An owned node, decoded for modification.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Leaf(Vec<(Bytes, Value)>),
    /// Children with the separator that leads to each; the first separator is unused (empty).
    Branch(Vec<(Bytes, PageId)>),
}

impl Node {
    /// Decodes a page for modification; keys and inline values borrow the page image.
    pub(crate) fn decode(id: PageId, page: &Page) -> Result<Node> {
        let view = NodeView::new(id, page)?;
        if view.is_leaf() {
            let mut entries = Vec::with_capacity(view.len() + 1);
            for i in 0..view.len() {
                let (ks, kl) = view.key_span(i)?;
                let value = match view.value_span(i)? {
                    Ok((vs, vl)) => Value::Inline(Bytes::shared(page, vs, vl)),
                    Err(v) => v,
                };
                entries.push((Bytes::shared(page, ks, kl), value));
            }
            Ok(Node::Leaf(entries))
        } else {
            let mut children = Vec::with_capacity(view.child_count() + 1);
            children.push((Bytes::default(), view.child(0)?));
            for i in 0..view.len() {
                let (ks, kl) = view.key_span(i)?;
                children.push((Bytes::shared(page, ks, kl), view.child(i + 1)?));
            }
            Ok(Node::Branch(children))
        }
    }

    /// Payload bytes this node needs in one page.
    pub(crate) fn size(&self) -> usize {
        match self {
            Node::Leaf(e) => e.iter().map(|(k, v)| leaf_entry_size(k, v)).sum(),
            Node::Branch(c) => c[1..].iter().map(|(k, _)| branch_entry_size(k)).sum(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Node::Leaf(e) => e.is_empty(),
            Node::Branch(c) => c.is_empty(),
        }
    }

    /// Splits this node into pieces that each fit a page, balanced by size. Each piece comes with
    /// the separator that leads to it (the first one's is empty).
    /// With `packed`, every piece but the last is filled to capacity: the split an append at the
    /// end of a tree wants, so that keys inserted in ascending order leave full pages behind
    /// instead of half-full ones.
    pub(crate) fn split(self, packed: bool) -> Vec<(Bytes, Node)> {
        let total = self.size();
        if total <= CAPACITY {
            return vec![(Bytes::default(), self)];
        }
        let pieces = total.div_ceil(CAPACITY);
        let target = if packed { CAPACITY } else { total.div_ceil(pieces) };
        match self {
            Node::Leaf(entries) => {
                let sizes: Vec<usize> = entries.iter().map(|(k, v)| leaf_entry_size(k, v)).collect();
                let cuts = cut_points(&sizes, target);
                let mut out = Vec::new();
                let mut rest = entries;
                for &cut in cuts.iter().rev() {
                    let tail = rest.split_off(cut);
                    out.push((tail[0].0.clone(), Node::Leaf(tail)));
                }
                out.push((Bytes::default(), Node::Leaf(rest)));
                out.reverse();
                out
            }
            Node::Branch(children) => {
                // children[0] costs nothing in its page (it is the link); a child that starts a new
                // page moves its separator up, so it costs nothing in that page either.
                let sizes: Vec<usize> = children
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| if i == 0 { 0 } else { branch_entry_size(k) })
                    .collect();
                let cuts = cut_points(&sizes, target);
                let mut out = Vec::new();
                let mut rest = children;
                for &cut in cuts.iter().rev() {
                    let mut tail = rest.split_off(cut);
                    let sep = std::mem::take(&mut tail[0].0);
                    out.push((sep, Node::Branch(tail)));
                }
                out.push((Bytes::default(), Node::Branch(rest)));
                out.reverse();
                out
            }
        }
    }

    /// Encodes a node that fits one page.
    pub(crate) fn encode(&self, id: PageId, txn: u64) -> Page {
        debug_assert!(self.size() <= CAPACITY, "node must be split before encoding");
        let (kind, count) = match self {
            Node::Leaf(e) => (Kind::Leaf, e.len()),
            Node::Branch(c) => (Kind::Branch, c.len() - 1),
        };
        let mut b = PageBuilder::new(kind);
        b.set_count(count as u16);
        let mut end = PAGE_SIZE;
        let mut slot = HEADER_LEN;
        let mut put_cell = |b: &mut PageBuilder, cell: &[u8]| {
            end -= cell.len();
            b.bytes_mut()[end..end + cell.len()].copy_from_slice(cell);
            b.bytes_mut()[slot..slot + 2].copy_from_slice(&(end as u16).to_le_bytes());
            slot += 2;
        };
        let mut cell = Vec::with_capacity(MAX_INLINE_CELL);
        match self {
            Node::Leaf(entries) => {
                for (k, v) in entries {
                    cell.clear();
                    cell.extend_from_slice(&(k.len() as u16).to_le_bytes());
                    match v {
                        Value::Inline(bytes) => {
                            let bytes: &[u8] = bytes;
                            cell.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                            cell.extend_from_slice(&k[..]);
                            cell.extend_from_slice(bytes);
                        }
                        Value::Overflow { first, len } => {
                            cell.extend_from_slice(&(len | OVERFLOW_FLAG).to_le_bytes());
                            cell.extend_from_slice(&k[..]);
                            cell.extend_from_slice(&first.to_le_bytes());
                        }
                    }
                    put_cell(&mut b, &cell);
                }
            }
            Node::Branch(children) => {
                b.set_link(children[0].1);
                for (k, child) in &children[1..] {
                    cell.clear();
                    cell.extend_from_slice(&(k.len() as u16).to_le_bytes());
                    cell.extend_from_slice(&child.to_le_bytes());
                    cell.extend_from_slice(&k[..]);
                    put_cell(&mut b, &cell);
                }
            }
        }
        b.seal(id, txn)
    }
}

/// Indices at which to start new pieces so that each piece stays near `target` bytes and never
/// exceeds `CAPACITY`; every piece holds at least one item.
fn cut_points(sizes: &[usize], target: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut fill = 0;
    for (i, &s) in sizes.iter().enumerate() {
        let starts_piece = i == 0 || cuts.last() == Some(&i);
        if !starts_piece && (fill + s > CAPACITY || fill >= target) {
            cuts.push(i);
            fill = 0;
        }
        fill += s;
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(n: usize, vlen: usize) -> Node {
        Node::Leaf(
            (0..n)
                .map(|i| (Bytes::from(format!("{i:08}").into_bytes()), Value::Inline(vec![7; vlen].into())))
                .collect(),
        )
    }

    #[test]
    fn encode_decode_round_trip() {
        let node = leaf(20, 30);
        let page = node.encode(5, 1);
        page::verify(5, &page).unwrap();
        match Node::decode(5, &page).unwrap() {
            Node::Leaf(e) => assert_eq!(e.len(), 20),
            Node::Branch(_) => panic!("leaf expected"),
        }
    }

    #[test]
    fn split_pieces_fit_and_keep_order() {
        for (n, vlen) in [(400, 10), (40, 300), (40, 1900)] {
            let node = leaf(n, vlen);
            let pieces = node.split(false);
            assert!(pieces.len() >= 2);
            let mut all = Vec::new();
            for (i, (sep, piece)) in pieces.iter().enumerate() {
                assert!(piece.size() <= CAPACITY);
                if let Node::Leaf(e) = piece {
                    if i > 0 {
                        assert_eq!(sep, &e[0].0);
                    }
                    all.extend(e.iter().map(|(k, _)| k.to_vec()));
                }
            }
            assert_eq!(all.len(), n);
            assert!(all.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
