//! Errors of the storage engine. Each variant has a stable `code()` that the binding passes to
//! TypeScript unchanged, so callers match on codes, never on message text.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Every failure the engine reports.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused an operation on a store file.
    Io { context: String, source: io::Error },
    /// A page or record failed its checksum or structural check.
    Corruption(Corruption),
    /// Another process holds the store directory.
    Locked { path: PathBuf, holder_pid: Option<u32> },
    /// The file was written by a newer format than this build reads.
    FormatTooNew { found: u32, supported: u32 },
    /// The file is not a Cairn store at all.
    NotAStore { path: PathBuf },
    /// The handle was closed; no further operations are accepted.
    Closed,
    /// A caller passed something the engine cannot store (named in the message).
    InvalidArgument(String),
    /// A write transaction closure panicked; its changes were rolled back.
    Panicked(String),
    /// An earlier write failed part-way (I/O error); the store accepts no more writes until it
    /// is reopened, which recovers it from the log.
    Failed(String),
    /// A read run on its caller's thread under `budget::within` ran out of time or reached a
    /// wait; it changed nothing and runs again elsewhere. Never leaves `within`'s caller.
    Deferred,
}

/// Where corruption was found and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    /// The page that failed, when the damage is in a page.
    pub page: Option<u64>,
    /// A human-readable description of the damage.
    pub what: String,
}

impl Error {
    /// The stable machine-readable code of this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io { .. } => "STORE_IO",
            Error::Corruption(_) => "STORE_CORRUPT",
            Error::Locked { .. } => "STORE_LOCKED",
            Error::FormatTooNew { .. } => "STORE_FORMAT_TOO_NEW",
            Error::NotAStore { .. } => "STORE_NOT_A_STORE",
            Error::Closed => "STORE_CLOSED",
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::Panicked(_) => "STORE_PANIC",
            Error::Failed(_) => "STORE_FAILED",
            Error::Deferred => "STORE_DEFERRED",
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }

    pub(crate) fn corrupt(page: Option<u64>, what: impl Into<String>) -> Self {
        Error::Corruption(Corruption { page, what: what.into() })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { context, source } => write!(f, "{context}: {source}"),
            Error::Corruption(c) => match c.page {
                Some(p) => write!(f, "store is corrupt at page {p}: {}", c.what),
                None => write!(f, "store is corrupt: {}", c.what),
            },
            Error::Locked { path, holder_pid: Some(pid) } if *pid == std::process::id() => {
                write!(f, "store {} is already open in this process (pid {pid}); share that handle", path.display())
            }
            Error::Locked { path, holder_pid: Some(pid) } => {
                write!(f, "store {} is held by another process (pid {pid}); stop it or use its node", path.display())
            }
            Error::Locked { path, holder_pid: None } => {
                write!(f, "store {} is held by another process", path.display())
            }
            Error::FormatTooNew { found, supported } => {
                write!(f, "store format version {found} is newer than this build supports ({supported}); upgrade Cairn")
            }
            Error::NotAStore { path } => write!(f, "{} is not a Cairn store", path.display()),
            Error::Closed => write!(f, "store is closed"),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Panicked(m) => write!(f, "write transaction panicked and was rolled back: {m}"),
            Error::Failed(m) => {
                write!(f, "store stopped accepting writes after an I/O failure ({m}); reopen it to recover")
            }
            Error::Deferred => write!(f, "the read ran out of the time it had on its caller's thread"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Result alias used throughout the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;
