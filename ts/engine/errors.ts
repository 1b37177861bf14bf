/** The stable codes of engine errors (the engine's `Error::code()`), plus the loader's own. */
export type StoreErrorCode =
  | 'STORE_IO'
  | 'STORE_CORRUPT'
  | 'STORE_LOCKED'
  | 'STORE_FORMAT_TOO_NEW'
  | 'STORE_NOT_A_STORE'
  | 'STORE_CLOSED'
  | 'STORE_FAILED'
  | 'INVALID_ARGUMENT'
  | 'STORE_PANIC';

const CODES: ReadonlySet<string> = new Set<StoreErrorCode>([
  'STORE_IO',
  'STORE_CORRUPT',
  'STORE_LOCKED',
  'STORE_FORMAT_TOO_NEW',
  'STORE_NOT_A_STORE',
  'STORE_CLOSED',
  'STORE_FAILED',
  'INVALID_ARGUMENT',
  'STORE_PANIC',
]);

/** An error from the storage engine; callers match on `code`, never on the message. */
export class StoreError extends Error {
  override readonly name = 'StoreError';

  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The code of an error the native side raised: the engine's own, or `INVALID_ARGUMENT` for napi's
 * argument conversion failures (`InvalidArg`, `StringExpected`, …: a value of the wrong type).
 */
function codeOf(err: Error): StoreErrorCode | undefined {
  const code: unknown = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  if (CODES.has(code)) return code as StoreErrorCode;
  if (code === 'InvalidArg' || code.endsWith('Expected')) return 'INVALID_ARGUMENT';
  return undefined;
}

/**
 * Turns an error thrown by the binding into a `StoreError` (keeping the original as `cause`);
 * anything else is returned unchanged.
 */
export function toStoreError(err: unknown): unknown {
  if (err instanceof StoreError || !(err instanceof Error)) return err;
  const code = codeOf(err);
  return code === undefined ? err : new StoreError(code, err.message, { cause: err });
}

/** Rethrows `err` as a `StoreError` when it came from the binding. */
export function rethrow(err: unknown): never {
  throw toStoreError(err);
}

/** Runs a synchronous binding call, turning what it throws into a `StoreError`. */
export function coded<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    throw toStoreError(err);
  }
}
