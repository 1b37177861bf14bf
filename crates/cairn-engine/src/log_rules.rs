//! Which of the log's records an open replays, from its header and the two meta pages; and when
//! the log holds acknowledged writes that cannot be taken back, a refusal naming the damage
//! instead of an open that would drop them and reset the log over them.
//!
//! Every checkpoint's meta names the salt of the log generation after it (`meta.rs`), and the
//! log is reset to that salt only once the meta is durable. So at open the log's salt is the
//! chosen meta's, or the other meta's (a checkpoint that stopped between its meta and the
//! reset: those records are all in the data file). Anything else is damage:
//! - a damaged header: the records are read under the chosen meta's salt all the same;
//! - a log under a salt neither meta names: it follows a checkpoint whose meta is gone (the
//!   newest meta page damaged), and falling back to the older meta would silently lose the
//!   writes between the two checkpoints;
//! - a log of another store (its store id), or a log with no data file beside it, holding
//!   records: they are some store's writes, and a new store must not reset the log over them.
//!
//! A meta written before metas named salts (log salt 0) keeps the older rule: the header's salt
//! when it is valid; a damaged header is refused, as its records cannot be verified.

use crate::error::{Error, Result};
use crate::meta::Chosen;
use crate::vfs::VfsFile;
use crate::wal::{self, Header, Wal};
use std::sync::Arc;

/// What a person does about a refused log: the writes in it are not in `data.cairn`.
const WHAT_TO_DO: &str = "restore the store from a backup, or move wal.cairn aside to open it without those writes";

/// The salt whose records the open of a store at `chosen` replays (`None`: no records).
pub(crate) fn replay_salt(header: Header, chosen: &Chosen, log: &Arc<dyn VfsFile>) -> Result<Option<u64>> {
    let meta = &chosen.meta;
    match header {
        Header::Fresh => Ok((meta.log_salt != 0).then_some(meta.log_salt)),
        Header::Damaged if meta.log_salt != 0 => Ok(Some(meta.log_salt)),
        Header::Damaged => Err(Error::corrupt(
            None,
            format!("the header of wal.cairn is damaged, so the writes logged in it cannot be read back: {WHAT_TO_DO}"),
        )),
        Header::Valid { salt, store_id } if store_id != meta.store_id => {
            if holds_records(log, meta.store_id, salt)? {
                return Err(Error::corrupt(
                    None,
                    format!(
                        "wal.cairn holds the writes of another store (id {store_id:016x}), not of this data.cairn's ({:016x}): {WHAT_TO_DO}",
                        meta.store_id
                    ),
                ));
            }
            Ok(None)
        }
        Header::Valid { salt, .. } if meta.log_salt == 0 || chosen.names_log(salt) => Ok(Some(salt)),
        Header::Valid { .. } => Err(Error::corrupt(
            Some(1 - chosen.slot),
            format!(
                "the newest meta page is damaged: wal.cairn follows a checkpoint it recorded, so the writes after transaction {} cannot be read back: restore the store from a backup",
                meta.txn
            ),
        )),
    }
}

/// Refuses to make a new store beside a log that holds records: with `data.cairn` gone (deleted,
/// or not restored with its log), a new data file would reset the log over another store's writes.
pub(crate) fn refuse_orphan_log(log: &Arc<dyn VfsFile>) -> Result<()> {
    if let Header::Valid { salt, store_id } = wal::read_header(&**log)?
        && holds_records(log, store_id, salt)?
    {
        return Err(Error::corrupt(
            None,
            format!("data.cairn is missing, but wal.cairn beside it holds a store's logged writes: {WHAT_TO_DO}"),
        ));
    }
    Ok(())
}

/// Whether the log holds at least one record that verifies under `salt`.
fn holds_records(log: &Arc<dyn VfsFile>, store_id: u64, salt: u64) -> Result<bool> {
    let (_, records) = Wal::open(log.clone(), store_id, Some(salt))?;
    Ok(!records.is_empty())
}
