import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

import type { TokenRecord, Tokens } from '../auth/tokens.js';
import { nfc } from '../protocol/unicode.js';

/**
 * Bounds on MCP sessions: how many the node holds at once, how many one token may hold (its
 * share), how many the tokens bound to one user may hold together, how many of a token that may
 * act for several users one end user's initializes may hold (`endUserOf`), and how long one may
 * sit idle.
 */
export interface SessionLimits {
  maxSessions: number;
  maxPerToken: number;
  maxPerUser: number;
  maxPerEndUser: number;
  idleMs: number;
}

/** One MCP session: its transport and tool server, bound to the token that opened it. */
export interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** The token that opened it: only that token may use it. */
  token: Pick<TokenRecord, 'id' | 'hash'>;
  /** Whose share it counts against beside its token's (`ownerOf`). */
  owner: string;
  /** The end user whose share of its token it counts against, when its initialize named one (`endUserOf`). */
  endUser?: string | undefined;
  lastSeen: number;
  /** Ids of the requests whose replies are still owed in this session. */
  inFlight: Set<RequestId>;
}

/**
 * The share a token's sessions count against beside its own: the user it is bound to (so an
 * operator's several tokens of one user cannot fill the node: found by an audit, eight tokens of
 * one user at 16 sessions each held all 128), else the token alone (one bound to no user may act
 * for any, as the node's own clients do; its 16 bound it).
 */
export function ownerOf(token: Pick<TokenRecord, 'id' | 'tenant' | 'user'>): string {
  return token.user === undefined ? `token\0${token.id}` : `user\0${token.tenant}\0${token.user}`;
}

/**
 * The end user share a session of `token` opened naming `headerUser` (`X-Cairn-User` on its
 * initialize) counts against: only of a token that may act for several users (an app's), whose
 * 16 one end user's looping client could otherwise hold all of, closing every other user's
 * (found by a review). A bound token's sessions are its user's already (`ownerOf`); a session
 * opened naming no user (a team's agents) has the token's whole share.
 */
export function endUserOf(token: Pick<TokenRecord, 'id' | 'user'>, headerUser: string | undefined): string | undefined {
  return token.user !== undefined || headerUser === undefined ? undefined : `${token.id}\0${nfc(headerUser)}`;
}

/**
 * The node's MCP sessions and their bounds. A session whose token is revoked or has expired holds
 * no place: revoking closes the token's sessions at once (`closeToken`, from the revoke route),
 * and the idle sweep and a full node's admission drop any left whose token no longer works (found
 * by an audit: the sessions of revoked tokens kept the node full, refusing every new client until
 * the idle sweep half an hour later).
 */
export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  /** Initializes admitted but not yet sessions: counted against the node's cap so a burst cannot pass it. */
  private opening = 0;

  constructor(
    readonly limits: SessionLimits,
    private readonly tokens: Tokens,
  ) {}

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /**
   * Adds session `id` for `s.token`, first closing the least recently used sessions of its end
   * user past their share (so they make room before anyone else's), then of that token past its
   * share, then of its user past theirs.
   */
  add(id: string, s: Session): void {
    if (s.endUser !== undefined) this.evict(this.ofEndUser(s.endUser), this.limits.maxPerEndUser);
    this.evict(this.ofToken(s.token.id), this.limits.maxPerToken);
    this.evict(this.ofOwner(s.owner), this.limits.maxPerUser);
    this.sessions.set(id, s);
  }

  /** Closes the first of `held` (least recently used first) so that a new one fits in `share`. */
  private evict(held: [string, Session][], share: number): void {
    for (const [old] of held.slice(0, Math.max(0, held.length - share + 1))) this.close(old);
  }

  close(id: string): void {
    const s = this.sessions.get(id);
    if (s === undefined) return;
    this.sessions.delete(id);
    void s.transport.close().catch(() => undefined);
    void s.server.close().catch(() => undefined);
  }

  /** Closes every session token `tokenId` opened (it was revoked); returns how many. */
  closeToken(tokenId: string): number {
    const held = this.ofToken(tokenId);
    for (const [id] of held) this.close(id);
    return held.length;
  }

  closeAll(): void {
    for (const id of [...this.sessions.keys()]) this.close(id);
  }

  /** Closes the sessions idle past the limit, and those whose token no longer works. */
  sweep(now = Date.now()): void {
    for (const [id, s] of this.sessions) if (now - s.lastSeen > this.limits.idleMs) this.close(id);
    this.dropDead();
  }

  /**
   * Whether a new session for `token` (naming `endUser`) fits: an end user, a token or a user at
   * its share replaces its own least recently used session (the node's count does not grow); otherwise the node
   * must have room, once the sessions of tokens that no longer work are dropped. The session of
   * another user (or of another token bound to none) is never closed to make room.
   */
  fits(token: Pick<TokenRecord, 'id' | 'tenant' | 'user'>, endUser?: string): boolean {
    if (endUser !== undefined && this.ofEndUser(endUser).length >= this.limits.maxPerEndUser) return true;
    if (this.ofToken(token.id).length >= this.limits.maxPerToken) return true;
    if (this.ofOwner(ownerOf(token)).length >= this.limits.maxPerUser) return true;
    if (this.sessions.size + this.opening < this.limits.maxSessions) return true;
    this.dropDead();
    return this.sessions.size + this.opening < this.limits.maxSessions;
  }

  /** Holds a place for an initialize until it becomes a session or is refused; the returned function frees it, once. */
  reserve(): () => void {
    this.opening++;
    let held = true;
    return () => {
      if (held) this.opening--;
      held = false;
    };
  }

  private ofToken(tokenId: string): [string, Session][] {
    return this.heldBy((s) => s.token.id === tokenId);
  }

  private ofOwner(owner: string): [string, Session][] {
    return this.heldBy((s) => s.owner === owner);
  }

  private ofEndUser(endUser: string): [string, Session][] {
    return this.heldBy((s) => s.endUser === endUser);
  }

  /**
   * The sessions `which` picks, in the order they are closed to make room: those with no request
   * in flight first (closing one would lose the reply owed), each group least recently used first.
   */
  private heldBy(which: (s: Session) => boolean): [string, Session][] {
    return [...this.sessions.entries()]
      .filter(([, s]) => which(s))
      .sort((a, b) => Number(a[1].inFlight.size > 0) - Number(b[1].inFlight.size > 0) || a[1].lastSeen - b[1].lastSeen);
  }

  /** Closes the sessions whose token is revoked, expired or gone (one lookup per token). */
  private dropDead(): void {
    const alive = new Map<string, boolean>();
    for (const [id, s] of this.sessions) {
      let ok = alive.get(s.token.hash);
      if (ok === undefined) {
        ok = this.stillLive(s.token.hash);
        alive.set(s.token.hash, ok);
      }
      if (!ok) this.close(id);
    }
  }

  private stillLive(hash: string): boolean {
    try {
      return this.tokens.isLive(hash);
    } catch {
      // A store that cannot be read now (stopped, closing) cannot say a token is dead: kept.
      return true;
    }
  }
}
