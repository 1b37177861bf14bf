import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

import { WriteBatch } from '../engine/batch.js';
import type { Store } from '../engine/store.js';
import type { ROLES } from '../protocol/admin.js';
import { ApiError } from '../protocol/errors.js';
import { nfc } from '../protocol/unicode.js';

/** The tree that holds token records, keyed by the SHA-256 of the token. */
export const TOKEN_TREE = 'auth.tokens';
const PREFIX = 'cairn_';

/**
 * What a token may do: `admin` also manages tokens; `agent` uses the memory verbs; `reader` only
 * the verbs that write nothing (a reviewer, a dashboard).
 */
export type Role = (typeof ROLES)[number];

/** A stored token: never the token itself, only its hash and what it names. */
export interface TokenRecord {
  /** A short public id used to list and revoke (not secret). */
  id: string;
  /** Hex SHA-256 of the token. */
  hash: string;
  tenant: string;
  agent: string;
  /** The only user this token may act for, when fixed. */
  user?: string;
  /** The only scopes this token may use, when restricted. */
  scopes?: string[];
  role: Role;
  createdAt: string;
  /** When the token stops working (ISO 8601 UTC); absent (as in records written before) means never. */
  expiresAt?: string;
  revokedAt?: string;
}

/** What a new token names. */
export interface TokenSpec {
  agent: string;
  user?: string;
  scopes?: string[];
  role?: Role;
  tenant?: string;
  /** RFC 3339; stored as ISO 8601 UTC. */
  expiresAt?: string;
}

/** The public view of a record, as `token list` shows it. */
export type TokenInfo = Omit<TokenRecord, 'hash'>;

function sha256(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A new token: 32 random bytes (256 bits), base64url, with a recognisable prefix. */
export function newToken(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

/** Whether `r` has passed its expiry (never, without one). */
export function expired(r: Pick<TokenRecord, 'expiresAt'>, now = Date.now()): boolean {
  return r.expiresAt !== undefined && Date.parse(r.expiresAt) <= now;
}

/** Whether `r` still works: neither revoked nor expired. */
export function live(r: Pick<TokenRecord, 'revokedAt' | 'expiresAt'>): boolean {
  return r.revokedAt === undefined && !expired(r);
}

function infoOf(r: TokenRecord): TokenInfo {
  const { hash: _hash, ...info } = r;
  return info;
}

/**
 * Token records in a store. Lookups go by hash (the token never touches disk) and the stored hash
 * is compared with the presented one in constant time.
 */
export class Tokens {
  constructor(private readonly store: Store) {}

  /** Creates a token for `spec`; returns the token (shown once) and its record. */
  async create(spec: TokenSpec, token: string = newToken()): Promise<{ token: string; record: TokenRecord }> {
    // An empty allow-list would read as "every scope" (no `scopes` field): refused, never widened.
    if (spec.scopes !== undefined && spec.scopes.length === 0) {
      const message = 'give at least one scope, or leave scopes out for a token that may use every scope';
      throw new ApiError('VALIDATION_ERROR', `scopes: ${message}`, [{ field: 'scopes', message }]);
    }
    const hash = sha256(token);
    const record: TokenRecord = {
      id: randomBytes(6).toString('hex'),
      hash: hash.toString('hex'),
      tenant: spec.tenant ?? 'local',
      // NFC, as the node reads every identity name (`service/identity.ts`).
      agent: nfc(spec.agent),
      ...(spec.user === undefined ? {} : { user: nfc(spec.user) }),
      ...(spec.scopes === undefined ? {} : { scopes: spec.scopes.map(nfc) }),
      role: spec.role ?? 'agent',
      createdAt: new Date().toISOString(),
      ...(spec.expiresAt === undefined ? {} : { expiresAt: new Date(spec.expiresAt).toISOString() }),
    };
    await this.store.write(new WriteBatch().put(TOKEN_TREE, hash, JSON.stringify(record)));
    return { token, record };
  }

  /** The unrevoked record of `token` (which may have expired: see `expired`), or null when unknown or revoked. */
  verify(token: string): TokenRecord | null {
    // Any string may be a token (CAIRN_ADMIN_TOKEN is chosen by the operator); only the hash is looked up.
    if (token.length === 0 || token.length > 256) return null;
    const hash = sha256(token);
    const raw = this.store.get(TOKEN_TREE, hash);
    if (raw === null) return null;
    const record = JSON.parse(raw.toString('utf8')) as TokenRecord;
    const stored = Buffer.from(record.hash, 'hex');
    if (stored.length !== hash.length || !timingSafeEqual(stored, hash)) return null;
    return record.revokedAt === undefined ? record : null;
  }

  /** Whether the token whose record is at `hash` (hex) still works: stored, unrevoked and unexpired. */
  isLive(hash: string): boolean {
    const raw = this.store.get(TOKEN_TREE, Buffer.from(hash, 'hex'));
    return raw !== null && live(JSON.parse(raw.toString('utf8')) as TokenRecord);
  }

  /** Every record (revoked ones too), without hashes. */
  async list(): Promise<TokenInfo[]> {
    const entries = await this.store.range(TOKEN_TREE);
    return entries
      .map((e) => infoOf(JSON.parse(e.value.toString('utf8')) as TokenRecord))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Whether any live (unrevoked, unexpired) token exists. */
  async any(): Promise<boolean> {
    return (await this.list()).some(live);
  }

  /**
   * Revokes every unrevoked token of `tenant` bound to `user` (expired ones too, so none reads as
   * merely lapsed), in one write; returns how many. `delete_user` calls it once the user is erased:
   * a token bound to an erased user would otherwise still authenticate and start the user anew.
   * No such token is an admin with neither a user nor a scope limit, so the node keeps its last one.
   */
  async revokeUser(tenant: string, user: string): Promise<number> {
    const entries = await this.store.range(TOKEN_TREE);
    const batch = new WriteBatch();
    const revokedAt = new Date().toISOString();
    let n = 0;
    for (const e of entries) {
      const record = JSON.parse(e.value.toString('utf8')) as TokenRecord;
      if (record.revokedAt !== undefined || record.tenant !== tenant || record.user === undefined) continue;
      if (nfc(record.user) !== nfc(user)) continue;
      batch.put(TOKEN_TREE, e.key, JSON.stringify({ ...record, revokedAt }));
      n++;
    }
    if (n > 0) await this.store.write(batch);
    return n;
  }

  /**
   * Revokes the token with public id `id`; returns its record, or null when no token has that
   * id. Revoking twice keeps the first revocation time. A live admin token is revoked only while
   * another live (unexpired) admin token of its tenant with neither a user nor a scope limit
   * remains: the store-wide admin work (tokens, backup, compact, check) needs one, and without it
   * nobody could administer the node again. A limited admin does not count.
   */
  async revoke(id: string): Promise<TokenInfo | null> {
    const entries = await this.store.range(TOKEN_TREE);
    const records = entries.map((e) => ({ key: e.key, record: JSON.parse(e.value.toString('utf8')) as TokenRecord }));
    for (const { key: entryKey, record } of records) {
      if (record.id !== id) continue;
      if (record.revokedAt === undefined) {
        const unlimitedAdmin = (r: TokenRecord) =>
          live(r) && r.role === 'admin' && r.tenant === record.tenant && r.user === undefined && r.scopes === undefined;
        if (
          live(record) &&
          record.role === 'admin' &&
          !records.some((o) => o.record.id !== id && unlimitedAdmin(o.record))
        ) {
          throw new ApiError(
            'VALIDATION_ERROR',
            'id: this is the last admin token with neither a user nor a scope limit; create another ' +
              '(`cairn token create --agent NAME --role admin`) before revoking it',
            [{ field: 'id', message: 'the last unlimited admin token' }],
          );
        }
        record.revokedAt = new Date().toISOString();
        await this.store.write(new WriteBatch().put(TOKEN_TREE, entryKey, JSON.stringify(record)));
      }
      return infoOf(record);
    }
    return null;
  }
}
