/** The engine's data file: a data dir without it holds no store. */
export const DATA_FILE = 'data.cairn';

/** The engine's write-ahead log: acknowledged writes not yet checkpointed into `DATA_FILE`. */
export const LOG_FILE = 'wal.cairn';
