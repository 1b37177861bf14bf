//! How knowledge records are stored: JSON, so fields can be added without a format change. Bytes
//! that do not decode are corruption, named by record kind.

use crate::error::{Error, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes a stored record of kind `what`.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| Error::corrupt(None, format!("a stored {what} does not decode: {e}")))
}

/// Encodes a record for storage.
pub(crate) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("records serialise")
}
