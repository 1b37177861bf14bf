//! Byte strings that either borrow a range of a shared page image or own their bytes. Decoding a
//! node for modification borrows every key and value from its page instead of allocating one
//! buffer per entry.

use crate::page::Page;
use std::fmt;
use std::ops::Deref;

#[derive(Clone)]
pub(crate) enum Bytes {
    Shared { page: Page, start: u16, len: u16 },
    Owned(Vec<u8>),
}

impl Bytes {
    pub(crate) fn shared(page: &Page, start: usize, len: usize) -> Self {
        Bytes::Shared { page: page.clone(), start: start as u16, len: len as u16 }
    }
}

impl Default for Bytes {
    fn default() -> Self {
        Bytes::Owned(Vec::new())
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Shared { page, start, len } => &page[*start as usize..*start as usize + *len as usize],
            Bytes::Owned(v) => v,
        }
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Self {
        Bytes::Owned(v)
    }
}

impl From<&[u8]> for Bytes {
    fn from(v: &[u8]) -> Self {
        Bytes::Owned(v.to_vec())
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Bytes {}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
