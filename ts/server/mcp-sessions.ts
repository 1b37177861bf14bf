import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

import type { TokenRecord, Tokens } from '../auth/tokens.js';

/**
 * Bounds on MCP sessions: how many the node holds at once, how many one token may hold (its
 * share), and how long one may sit idle.
 */
export interface SessionLimits {
  maxSessions: number;
  maxPerToken: number;
  idleMs: number;
}

/** One MCP session: its transport and tool server, bound to the token that opened it. */
export interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** The token that opened it: only that token may use it. */
  token: Pick<TokenRecord, 'id' | 'hash'>;
  lastSeen: number;
  /** Ids of the requests whose replies are still owed in this session. */
  inFlight: Set<RequestId>;
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
   * Adds session `id` for `s.token`, first closing that token's least recently used sessions past
   * its share.
   */
  add(id: string, s: Session): void {
    const own = this.heldBy(s.token.id);
    for (const [old] of own.slice(0, Math.max(0, own.length - this.limits.maxPerToken + 1))) this.close(old);
    this.sessions.set(id, s);
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
    const held = this.heldBy(tokenId);
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
   * Whether a new session for `tokenId` fits: a token at its share replaces its own least recently
   * used session (the node's count does not grow); otherwise the node must have room, once the
   * sessions of tokens that no longer work are dropped. Another live token's session is never
   * closed to make room.
   */
  fits(tokenId: string): boolean {
    if (this.heldBy(tokenId).length >= this.limits.maxPerToken) return true;
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

  /** The sessions `tokenId` holds, least recently used first. */
  private heldBy(tokenId: string): [string, Session][] {
    return [...this.sessions.entries()]
      .filter(([, s]) => s.token.id === tokenId)
      .sort((a, b) => a[1].lastSeen - b[1].lastSeen);
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
