import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { VERSION } from '../server/version.js';
import { CliFailure } from './failure.js';
import { isolatedFetch } from './isolated-fetch.js';
import { failureBody, nodeRefusal } from './mcp-refusal.js';
import { connectionLost, refused } from './net-errors.js';
import { silentNode, watchNode } from './node-wait.js';

/** How the bridge finds and reaches its node. */
export interface LinkOptions {
  /** The node's base URL now: re-read on every reconnect, since a restarted node may move. */
  url: () => string;
  headers: Record<string, string>;
  /** How long a reconnect keeps retrying a node that is restarting (default 15 s). */
  retryMs?: number;
  /**
   * How long opening a session waits for the node's reply (default 15 s): `initialize` is quick,
   * so a node silent that long is stopped or hung, and the bridge says so instead of waiting.
   */
  answerMs?: number;
  /**
   * Starts a node when none runs (given when the bridge has no `--url`: it started one itself at
   * start-up, and does again when that one is gone). Resolves once one announces itself; rejects
   * (an UNAVAILABLE CliFailure) with why none did.
   */
  start?: () => Promise<void>;
}

/**
 * Whether the node refused a request before running it because the session is gone (404: it
 * restarted, evicted the session at its cap, or dropped it when idle; 503: it is shutting down),
 * or could not be reached at all. Re-sending such a request on a new session runs it once.
 */
export function sessionLost(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === 404 || err.code === 503;
  return refused(err);
}

/**
 * Whether opening a session failed in a way a node being restarted shows, so opening is tried
 * again: nothing listens yet, the old node closed the connection, or it answered that it is
 * shutting down (a `503` with its §3 `UNAVAILABLE` body; a full node's `503` is JSON-RPC's).
 */
function restarting(err: unknown): boolean {
  return refused(err) || connectionLost(err) || nodeRefusal(err)?.body.error.code === 'UNAVAILABLE';
}

/** What to do about a write whose outcome is unknown. */
const CHECK_FIRST =
  'Check what is stored before repeating it (memory_recall or memory_history for facts, memory_query for ' +
  'a document); memory_note_write and memory_handoff_create are applied once however often they are sent, ' +
  'so the bridge re-sends those itself';

/**
 * Why a request that may have run was not sent again: its connection closed before the reply
 * (`connectionLost`), and it changes the store unless a repeat is known to change nothing.
 */
function outcomeUnknown(url: string): CliFailure {
  return new CliFailure(
    'UNAVAILABLE',
    `the connection to the node at ${url} closed before it replied (the node stopped or restarted): ` +
      `this call may or may not have been applied, so it was not sent again. ${CHECK_FIRST}`,
    undefined,
    [{ applied: 'unknown' }],
  );
}

/**
 * A write the bridge gave the `idempotencyKey` `key` (the model does not know it) that may have
 * run and got no reply, said with `why` and how to apply it once: send it again with that key.
 */
function keyedUnknown(why: string, key: string): CliFailure {
  const message =
    `${why}. This call may or may not have been applied: send it again with "idempotencyKey": ` +
    `${JSON.stringify(key)} (the bridge added it) within the node's idempotency window (24 hours by default) and it ` +
    'is applied once; if it was, its receipt comes ' +
    'back marked replayed: true';
  return new CliFailure('UNAVAILABLE', message, undefined, [{ applied: 'unknown', idempotencyKey: key }]);
}

/**
 * `silent` (the node stopped answering a write in flight), saying the write may yet be applied;
 * `key`: the `idempotencyKey` the bridge gave it, which a repeat needs.
 */
function unanswered(silent: CliFailure, key: string | undefined): CliFailure {
  if (key !== undefined) return keyedUnknown(silent.message, key);
  const message = `${silent.message}. This call may or may not have been applied. ${CHECK_FIRST}`;
  return new CliFailure('UNAVAILABLE', message, undefined, [{ applied: 'unknown' }]);
}

/**
 * The bridge's MCP session with its node, renewed transparently: a request that fails because the
 * session is lost, or whose connection closed when a repeat is safe, opens a new session (retrying
 * a node that is restarting for up to `retryMs`) and is sent once more. Concurrent failures share
 * one reconnect.
 */
export class NodeLink {
  private client: Client | undefined;
  /** The URL the newest session was opened at: the node a request is watched at. */
  private at = '';
  private opening: Promise<Client> | undefined;

  constructor(private readonly opts: LinkOptions) {}

  /** Opens the first session; throws when the node cannot be reached. */
  async connect(): Promise<Client> {
    this.client = await this.open();
    return this.client;
  }

  /** The instructions the node sent when the first session opened. */
  instructions(): string | undefined {
    return this.client?.getInstructions();
  }

  /**
   * Runs `fn` on the current session; on a lost session, once more on a new one. A request whose
   * connection closed before the reply may have run: it is sent again only when `repeatable` (a
   * repeat changes nothing more), else it fails with UNAVAILABLE saying its outcome is unknown. A
   * node that stops answering meanwhile (`watchNode`: neither the reply nor `/health` for
   * `answerMs`) fails the request with UNAVAILABLE instead of the SDK's 60 s timeout. `ownKey`:
   * the `idempotencyKey` the bridge added to a write, which makes it repeatable; a failure after it
   * may have run says the outcome is unknown and names the key, which only the bridge knew.
   */
  async request<T>(fn: (client: Client) => Promise<T>, repeatable: boolean, ownKey?: string): Promise<T> {
    let client = this.client ?? (await this.renew(undefined, true));
    let mayHaveRun = false;
    for (let resent = false; ; resent = true) {
      try {
        return await this.watched(() => fn(client));
      } catch (err) {
        // The node stopped answering (`watched`): a write may be applied when it comes back.
        if (err instanceof CliFailure) throw repeatable && ownKey === undefined ? err : unanswered(err, ownKey);
        const lost = connectionLost(err);
        // Whether sent once or again (after a 404, say), a cut-off write may have been applied.
        if (lost && !repeatable) throw outcomeUnknown(this.at);
        mayHaveRun ||= lost;
        const gaveUp = (e: unknown) => (mayHaveRun && ownKey !== undefined ? this.unknownOutcome(e, ownKey) : e);
        if (resent || (!lost && !sessionLost(err))) throw gaveUp(err);
        // A call that never reached the node may start one, and so may one cut off in flight that
        // a repeat cannot apply twice (a read, a keyed write: the node stores a write's key in the
        // write's own transaction, so the node started on the same store replays it if it ran).
        // Found by QA: a keyed write cut by kill -9 with no node left answered "outcome unknown"
        // though re-sending it to a node the bridge started was as safe as the model's repeat.
        client = await this.renew(client, !mayHaveRun || repeatable).catch((e: unknown) => Promise.reject(gaveUp(e)));
      }
    }
  }

  /** `err`, which ended a write keyed `key` that may have run, as `keyedUnknown` when it is the node's failure. */
  private unknownOutcome(err: unknown, key: string): unknown {
    const body = failureBody(err, this.at, this.opts.start !== undefined);
    return body === null ? err : keyedUnknown(body.error.message, key);
  }

  /**
   * `call`, failed with the UNAVAILABLE `silentNode` when the node stops answering while it is
   * outstanding. The wait is on the node's `/health`, not on the reply: a tool call on a big store
   * may take long, and a node that answers `/health` is busy with it, not hung.
   */
  private watched<T>(call: () => Promise<T>): Promise<T> {
    // The session's node: `opts.url()` reads node.json, I/O each request need not pay.
    const url = this.at;
    const waitMs = this.opts.answerMs ?? 15_000;
    return new Promise<T>((resolve, reject) => {
      const stop = watchNode(url, waitMs, () => reject(silentNode(url, waitMs)));
      call().then(resolve, reject).finally(stop);
    });
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
  }

  /**
   * A new session replacing `stale`, unless another request already replaced it. The stale client
   * is dropped, not closed: closing it would fail other requests still awaiting its replies, which
   * then renew onto the new session themselves. `mayStart`: the request never reached the node, or
   * running it again changes nothing, so finding none running, the bridge may start one
   * (`LinkOptions.start`); a reopen under way learns it too.
   */
  private renew(stale: Client | undefined, mayStart: boolean): Promise<Client> {
    if (this.client !== stale && this.client !== undefined) return Promise.resolve(this.client);
    this.startWanted ||= mayStart;
    this.opening ??= this.reopen().finally(() => {
      this.opening = undefined;
      this.startWanted = false;
    });
    return this.opening;
  }

  /** Whether a request waiting on the reopen under way may have it start a node. */
  private startWanted = false;

  private async reopen(): Promise<Client> {
    const deadline = Date.now() + (this.opts.retryMs ?? 15_000);
    let started = false;
    for (;;) {
      try {
        const client = await this.open();
        this.client = client;
        return client;
      } catch (err) {
        // Nothing listens where the node was: it is gone (killed, out of memory), not restarting.
        if (refused(err) && this.startWanted && this.opts.start !== undefined && !started) {
          started = true;
          await this.opts.start();
          continue;
        }
        if (!restarting(err) || Date.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  private async open(): Promise<Client> {
    const url = this.opts.url();
    this.at = url;
    const client = new Client({ name: 'cairn-mcp-bridge', version: VERSION });
    const transport = new StreamableHTTPClientTransport(new URL('/v1/mcp', url), {
      requestInit: { headers: this.opts.headers },
      fetch: isolatedFetch(),
    });
    // The SDK closes the client (and so its open requests) when this fails.
    await client.connect(transport, { timeout: this.opts.answerMs ?? 15_000 });
    return client;
  }
}
