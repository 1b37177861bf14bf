//! A batch of puts and deletes in one byte buffer. The same encoding crosses the N-API boundary
//! (one `Buffer` per write) and is the payload of a write-ahead-log record.
//!
//! Layout, repeated until the end of the buffer (integers little-endian):
//! `op u8 (1 put, 2 delete) | tree_len u16 | tree | key_len u32 | key | [value_len u32 | value]`.

use crate::error::{Error, Result};
use crate::limits::{MAX_KEY_LEN, MAX_TREE_NAME_LEN, MAX_VALUE_LEN};

const OP_PUT: u8 = 1;
const OP_DELETE: u8 = 2;

/// One change to one tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put { tree: String, key: Vec<u8>, value: Vec<u8> },
    Delete { tree: String, key: Vec<u8> },
}

/// An ordered list of changes applied atomically.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    pub ops: Vec<Op>,
}

impl Batch {
    /// Adds a put.
    pub fn put(&mut self, tree: &str, key: &[u8], value: &[u8]) -> &mut Self {
        self.ops.push(Op::Put { tree: tree.to_owned(), key: key.to_vec(), value: value.to_vec() });
        self
    }

    /// Adds a delete.
    pub fn delete(&mut self, tree: &str, key: &[u8]) -> &mut Self {
        self.ops.push(Op::Delete { tree: tree.to_owned(), key: key.to_vec() });
        self
    }

    /// Appends the encoding of this batch to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        for op in &self.ops {
            match op {
                Op::Put { tree, key, value } => encode_op(out, tree, key, Some(value)),
                Op::Delete { tree, key } => encode_op(out, tree, key, None),
            }
        }
    }

    /// The encoding of this batch.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Decodes and validates a batch; any malformed byte is an `InvalidArgument` naming its offset.
    pub fn decode(bytes: &[u8]) -> Result<Batch> {
        let mut r = Reader { bytes, pos: 0 };
        let mut ops = Vec::new();
        while r.pos < bytes.len() {
            let at = r.pos;
            let code = r.u8()?;
            let tree_len = r.u16()? as usize;
            let tree =
                std::str::from_utf8(r.take(tree_len)?).map_err(|_| bad(at, "tree name is not UTF-8"))?.to_owned();
            validate_tree_name(&tree)?;
            let key_len = r.u32()? as usize;
            let key = r.take(key_len)?.to_vec();
            validate_key(&key)?;
            match code {
                OP_PUT => {
                    let value_len = r.u32()? as usize;
                    if value_len > MAX_VALUE_LEN {
                        return Err(bad(at, "value is larger than the value limit"));
                    }
                    let value = r.take(value_len)?.to_vec();
                    ops.push(Op::Put { tree, key, value });
                }
                OP_DELETE => ops.push(Op::Delete { tree, key }),
                _ => return Err(bad(at, "unknown operation code")),
            }
        }
        Ok(Batch { ops })
    }
}

/// Appends one operation: a put when `value` is given, else a delete.
pub(crate) fn encode_op(out: &mut Vec<u8>, tree: &str, key: &[u8], value: Option<&[u8]>) {
    out.push(if value.is_some() { OP_PUT } else { OP_DELETE });
    out.extend_from_slice(&(tree.len() as u16).to_le_bytes());
    out.extend_from_slice(tree.as_bytes());
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    if let Some(v) = value {
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v);
    }
}

/// Checks a tree name against the engine's limits.
pub fn validate_tree_name(tree: &str) -> Result<()> {
    if tree.is_empty() || tree.len() > MAX_TREE_NAME_LEN {
        return Err(Error::InvalidArgument(format!(
            "tree name must be 1..={MAX_TREE_NAME_LEN} bytes, got {}",
            tree.len()
        )));
    }
    Ok(())
}

/// Checks a key against the engine's limits.
pub fn validate_key(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_LEN {
        return Err(Error::InvalidArgument(format!("key is {} bytes; the limit is {MAX_KEY_LEN}", key.len())));
    }
    Ok(())
}

/// Checks a value against the engine's limits.
pub fn validate_value(value: &[u8]) -> Result<()> {
    if value.len() > MAX_VALUE_LEN {
        return Err(Error::InvalidArgument(format!("value is {} bytes; the limit is {MAX_VALUE_LEN}", value.len())));
    }
    Ok(())
}

fn bad(at: usize, what: &str) -> Error {
    Error::InvalidArgument(format!("malformed batch at byte {at}: {what}"))
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| bad(self.pos, "truncated"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut b = Batch::default();
        b.put("t", b"k", b"v").delete("other", b"");
        assert_eq!(Batch::decode(&b.encode()).unwrap(), b);
    }

    #[test]
    fn truncation_is_named() {
        let mut b = Batch::default();
        b.put("t", b"key", b"value");
        let bytes = b.encode();
        let err = Batch::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert!(err.to_string().contains("truncated"));
    }
}
