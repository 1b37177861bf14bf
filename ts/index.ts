// The public surface of the engine wrapper; the service layer builds on these.
export { WriteBatch } from './engine/batch.js';
export type { Bytes } from './engine/bytes.js';
export { StoreError, type StoreErrorCode } from './engine/errors.js';
export type { Caller, KnowledgeVerb, Refusal } from './engine/knowledge.js';
export type { NotesVerb } from './engine/notes.js';
export { ReadOnlyStore } from './engine/read-only-store.js';
export { decodeEntries, type Entry, type RangeOptions } from './engine/scan.js';
export { Snapshot } from './engine/snapshot.js';
export {
  type BackupReport,
  type CheckReport,
  type CompactReport,
  Store,
  type StoreOptions,
  type StoreStats,
} from './engine/store.js';
