//! Size limits. They follow from the 4 KiB page: a branch page must hold at least two keys.

/// Bytes in a page.
pub const PAGE_SIZE: usize = 4096;
/// The longest key.
pub const MAX_KEY_LEN: usize = 1536;
/// The longest tree name.
pub const MAX_TREE_NAME_LEN: usize = 255;
/// The longest value (larger values spill to overflow pages).
pub const MAX_VALUE_LEN: usize = 256 * 1024 * 1024;
