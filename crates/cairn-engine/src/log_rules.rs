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

#[cfg(test)]
mod tests {
    use crate::limits::PAGE_SIZE;
    use crate::meta::{Meta, Slot};
    use crate::vfs::fault::{CrashMode, FaultFs};
    use crate::{Batch, Store, StoreOptions};
    use std::path::Path;
    use std::sync::Arc;

    fn options(fs: &FaultFs) -> StoreOptions {
        StoreOptions { checkpoint_bytes: 64 << 20, vfs: Arc::new(fs.clone()), ..StoreOptions::default() }
    }

    /// What the disk holds after power loss with `keys` acknowledged since the last checkpoint,
    /// both metas rewritten as a build before the log salt wrote them (0 there).
    fn older_build_store(keys: &[&str]) -> FaultFs {
        let fs = FaultFs::new();
        let store = Store::open("/s", options(&fs)).unwrap();
        for key in keys {
            let mut b = Batch::default();
            b.put("t", key.as_bytes(), b"v");
            store.apply(b).unwrap();
        }
        let image = fs.crash_image(CrashMode::SyncedOnly, 0);
        drop(store);
        let path = Path::new("/s/data.cairn");
        let mut data = image.read_durable(path).unwrap();
        for slot in 0..2u64 {
            let at = slot as usize * PAGE_SIZE;
            let Slot::Valid(mut meta) = Meta::decode(slot, &data[at..at + PAGE_SIZE]) else { panic!("meta {slot}") };
            meta.log_salt = 0;
            data[at..at + PAGE_SIZE].copy_from_slice(&meta.encode(slot));
        }
        image.write_durable(path, &data);
        image
    }

    #[test]
    fn a_store_of_an_older_build_replays_its_log_and_then_names_the_salt() {
        let fs = older_build_store(&["a", "b", "c"]);
        let store = Store::open("/s", options(&fs)).unwrap();
        for key in ["a", "b", "c"] {
            assert!(store.get("t", key.as_bytes()).unwrap().is_some(), "{key}");
        }
        drop(store);
        // The open's checkpoint wrote a meta naming the log's salt: a damaged header is read through now.
        let data = fs.read(Path::new("/s/data.cairn")).unwrap();
        let named = (0..2u64).any(|slot| {
            let at = slot as usize * PAGE_SIZE;
            matches!(Meta::decode(slot, &data[at..at + PAGE_SIZE]), Slot::Valid(m) if m.log_salt != 0)
        });
        assert!(named);
    }

    #[test]
    fn a_damaged_log_header_of_an_older_build_is_refused_not_reset() {
        let fs = older_build_store(&["a", "b"]);
        let log = Path::new("/s/wal.cairn");
        let mut bytes = fs.read_durable(log).unwrap();
        bytes[20] ^= 0x10;
        fs.write_durable(log, &bytes);
        let Err(err) = Store::open("/s", options(&fs)) else { panic!("opened") };
        assert_eq!(err.code(), "STORE_CORRUPT", "{err}");
        assert!(err.to_string().contains("header of wal.cairn is damaged"), "{err}");
        assert_eq!(fs.read_durable(log).unwrap(), bytes, "the log is left as it was");
    }
}
