import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';

import { seedTokenRefusal } from '../auth/seed-token.js';
import { Tokens } from '../auth/tokens.js';
import { Store } from '../engine/store.js';
import { DATA_FILE } from '../engine/store-files.js';
import type { ReopenEvent } from '../engine/store-reopen.js';
import { buildApp } from './app.js';
import { isLoopback, isWildcard } from './guard.js';
import { removeLeftovers } from './leftovers.js';
import { hostForm, reachableAddresses } from './machine-hosts.js';
import { NODE_FILE, type NodeFile } from './node-file.js';
import { privateDataDir, removeMadeDirs, removeNewStore } from './private-dir.js';
import { VERSION } from './version.js';

/** How to run a node. */
export interface NodeOptions {
  dataDir: string;
  host?: string;
  port?: number;
  /** Seeds the admin token on a first start (`CAIRN_ADMIN_TOKEN`). */
  adminToken?: string | undefined;
  allowedHosts?: string[];
  rateLimit?: number;
  /** Requests a minute one end user of a shared token makes (`CAIRN_RATE_LIMIT_PER_USER`). */
  rateLimitPerUser?: number;
  bodyLimit?: number;
  sessions?: {
    maxSessions?: number;
    maxPerToken?: number;
    maxPerUser?: number;
    maxPerEndUser?: number;
    idleMs?: number;
  };
  logLevel?: string;
  /** Where log lines go (default stdout). */
  logStream?: { write(line: string): void };
  allowPrivate?: boolean;
  /** Hours a write's `idempotencyKey` is remembered (`CAIRN_IDEMPOTENCY_HOURS`; default 24). */
  idempotencyHours?: number;
  /** MiB of entity-name indexes kept between calls (`CAIRN_NAME_CACHE_MB`; default 512). */
  nameCacheMb?: number;
  /** Where first-start messages go (the admin token, once). Default stderr. */
  announce?: (line: string) => void;
  /**
   * Started in the background by `cairn mcp`, its stderr going to `node.log`: on a store with no
   * live token it refuses rather than make an admin token, which would be written there unseen.
   */
  background?: boolean;
}

/** A running node. */
export interface RunningNode {
  /** The URL for clients on this machine (also in `node.json`). */
  url: string;
  /** On a bind wider than loopback, the URLs clients on the network use (its addresses and host name); else empty. */
  networkUrls: string[];
  port: number;
  app: FastifyInstance;
  store: Store;
  /** The admin token when this start created one (shown once), else null. */
  createdAdminToken: string | null;
  /** Stops accepting, lets in-flight requests (and writes) finish, closes the store; idempotent. */
  close(): Promise<void>;
}

/** What the log says at each step of a store's stop and reopen (`Store.reopenAfterFailure`). */
const STORE_EVENTS: Record<ReopenEvent['event'], string> = {
  stopped: 'store stopped taking writes after a failed write; reads go on, and it reopens once the disk takes writes',
  probe_failed: 'the disk does not take writes yet; the store stays stopped',
  reopen_failed: 'reopening the store failed; trying again later',
  reopened: 'store reopened; writes resumed',
};

/**
 * Opens the store, makes sure a token exists (seeding `adminToken`, or on a loopback bind creating
 * one and announcing it once), then listens and writes `node.json`. A non-loopback bind with no
 * token refuses to start. A first start that fails removes the store it made.
 */
export async function startNode(opts: NodeOptions): Promise<RunningNode> {
  const host = opts.host ?? '127.0.0.1';
  const loopback = isLoopback(host);
  const announce = opts.announce ?? ((l: string) => process.stderr.write(`${l}\n`));
  const seeded = opts.adminToken !== undefined && opts.adminToken !== '';
  const noToken = `refusing to listen on ${host} with no token: run \`cairn init --data-dir ${opts.dataDir}\` or set CAIRN_ADMIN_TOKEN`;
  // A data dir holding no store holds no token: refused before the dir or a store is made there
  // (found by an audit: the refused start left an empty store behind).
  if (!loopback && !seeded && !existsSync(join(opts.dataDir, DATA_FILE))) throw new Error(noToken);
  const fresh = !existsSync(join(opts.dataDir, DATA_FILE));
  const { warning: dirWarning, made } = privateDataDir(opts.dataDir);
  let store: Store;
  try {
    store = await Store.open(opts.dataDir, {
      ...(opts.idempotencyHours === undefined ? {} : { idempotencyHours: opts.idempotencyHours }),
      ...(opts.nameCacheMb === undefined ? {} : { nameCacheBytes: opts.nameCacheMb * 2 ** 20 }),
    });
  } catch (err) {
    // Only the directories made for it, and only when empty: a store another process opened
    // there meanwhile (STORE_LOCKED) is not this start's to remove.
    removeMadeDirs(made);
    throw err;
  }
  // Holding the store's lock, so no other node is backing it up now.
  removeLeftovers(opts.dataDir);
  let createdAdminToken: string | null = null;
  let app: FastifyInstance | undefined;
  try {
    const tokens = new Tokens(store);
    let makeAdminToken = false;
    if (!(await tokens.any())) {
      if (opts.adminToken !== undefined && seeded) {
        const refused = seedTokenRefusal(opts.adminToken);
        if (refused !== null) throw new Error(`CAIRN_ADMIN_TOKEN ${refused}`);
        await tokens.create({ agent: 'admin', role: 'admin' }, opts.adminToken);
      } else if (!loopback) {
        throw new Error(noToken);
      } else if (opts.background === true) {
        throw new Error(
          `${opts.dataDir} holds no live token, and a node started by \`cairn mcp\` makes no admin token (it would be written only to node.log): run \`cairn init --data-dir ${opts.dataDir}\`, then give the bridge a token made there (\`cairn token create --agent NAME\`)`,
        );
      } else {
        // Made once listening succeeded: a token shown by a start that then failed (a port in
        // use) would be lost, and the next start, finding it, would show none.
        makeAdminToken = true;
      }
    } else if (
      opts.adminToken !== undefined &&
      opts.adminToken !== '' &&
      tokens.verify(opts.adminToken)?.role !== 'admin'
    ) {
      // An operator who "rotates" the token in the env file would otherwise find it refused later.
      announce(
        'cairn: warning: CAIRN_ADMIN_TOKEN is not an admin token of this store, and is not made one (it seeds only a store with no token): make one with `cairn token create --agent NAME --role admin` and set that',
      );
    }
    let port = opts.port ?? 4000;
    app = await buildApp({
      store,
      node: { version: VERSION, startedAt: Date.now(), profile: 'lite', allowPrivate: opts.allowPrivate ?? false },
      loopback,
      bind: host,
      ...(opts.allowedHosts === undefined ? {} : { allowedHosts: opts.allowedHosts }),
      port: () => port,
      ...(opts.rateLimit === undefined ? {} : { rateLimit: opts.rateLimit }),
      ...(opts.rateLimitPerUser === undefined ? {} : { rateLimitPerUser: opts.rateLimitPerUser }),
      ...(opts.bodyLimit === undefined ? {} : { bodyLimit: opts.bodyLimit }),
      ...(opts.sessions === undefined ? {} : { sessions: opts.sessions }),
      ...(opts.logLevel === undefined ? {} : { logLevel: opts.logLevel }),
      ...(opts.logStream === undefined ? {} : { logStream: opts.logStream }),
    });
    if (dirWarning !== null) app.log.warn(dirWarning);
    const log = app.log;
    store.reopenAfterFailure((e) => {
      const level = e.event === 'reopened' ? 'info' : e.event === 'probe_failed' ? 'warn' : 'error';
      log[level](e, STORE_EVENTS[e.event]);
    });
    await app.listen({ host, port });
    port = (app.server.address() as AddressInfo).port;
    if (makeAdminToken) {
      createdAdminToken = (await tokens.create({ agent: 'admin', role: 'admin' })).token;
      announce(`cairn: first start; admin token (shown once, keep it): ${createdAdminToken}`);
    }
    // A wildcard bind is announced by its loopback address: the URL is for clients on this machine.
    const reach = isWildcard(host) ? (host.includes(':') ? '::1' : '127.0.0.1') : host.replace(/^\[|\]$/g, '');
    const url = `http://${reach.includes(':') ? `[${reach}]` : reach}:${port}`;
    const file: NodeFile = { url, pid: process.pid, dataDir: opts.dataDir, startedAt: new Date().toISOString() };
    const nodeFile = join(opts.dataDir, NODE_FILE);
    // Written aside and renamed, so a client looking for the node (the CLI, `cairn mcp`) never
    // reads it half-written (a test read it empty: "Unexpected end of JSON input").
    writeFileSync(`${nodeFile}.tmp`, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    renameSync(`${nodeFile}.tmp`, nodeFile);
    let closing: Promise<void> | undefined;
    const running = app;
    const networkUrls = loopback
      ? []
      : [...reachableAddresses(host).map(hostForm), hostname()].map((h) => `http://${h}:${port}`);
    return {
      url,
      networkUrls,
      port,
      app: running,
      store,
      createdAdminToken,
      close: () => {
        closing ??= (async () => {
          rmSync(nodeFile, { force: true });
          await running.close();
          await store.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    await app?.close();
    await store.close();
    // A first start that failed (found by a review: a port in use left an empty store, and the
    // directories made for it, behind) leaves the disk as it found it.
    if (fresh) removeNewStore(opts.dataDir, made);
    throw err;
  }
}
