import { seedTokenRefusal } from '../auth/seed-token.js';
import { readLimitsRefusal } from '../documents/read-limits.js';
import { StoreError } from '../engine/errors.js';
import { startNode } from '../server/node.js';
import { findRunningNode, type NodeFile } from '../server/node-file.js';
import { loadPieceRefusal } from '../service/import-file.js';
import { foreignDataDir } from './foreign-dir.js';
import { reportStart, START_FD } from './start-report.js';
import { unwritableDataDir } from './writable.js';

/** `cairn serve` options after flags and environment are merged. */
export interface ServeArgs {
  dataDir: string;
  host: string | undefined;
  port: string | undefined;
  profile: string | undefined;
}

/** The profiles DESIGN §4 names; only `lite` (the embedded engine) is built. */
const PROFILES = ['lite', 'team'];

/**
 * Why the options cannot start a node, or null. Checked before anything is opened or created, so
 * a refused start touches nothing.
 */
function refusal(profile: string, rateLimit: string | undefined, perUser: string | undefined): string | null {
  if (!PROFILES.includes(profile)) return `--profile must be lite or team, got ${JSON.stringify(profile)}`;
  if (profile === 'team') {
    return 'the team profile (PostgreSQL) is not available in this version; run the lite profile (the default)';
  }
  if (rateLimit !== undefined && !/^[1-9]\d{0,8}$/.test(rateLimit)) {
    return `CAIRN_RATE_LIMIT must be a whole number of requests per minute per token, 1–999999999, got ${JSON.stringify(rateLimit)}`;
  }
  if (perUser !== undefined && !/^[1-9]\d{0,8}$/.test(perUser)) {
    return `CAIRN_RATE_LIMIT_PER_USER must be a whole number of requests per minute one end user of a token makes, 1–999999999, got ${JSON.stringify(perUser)}`;
  }
  return null;
}

/**
 * Why `CAIRN_IDEMPOTENCY_HOURS` cannot be used, or null: a whole number of hours, 1–8760 (the
 * engine's range; checked here too so a bad value is refused before the store is opened).
 */
function idempotencyRefusal(hours: string | undefined): string | null {
  if (hours === undefined || (/^\d{1,4}$/.test(hours) && Number(hours) >= 1 && Number(hours) <= 8760)) return null;
  return `CAIRN_IDEMPOTENCY_HOURS must be a whole number of hours a retried write is recognised, 1–8760, got ${JSON.stringify(hours)}`;
}

/**
 * Why `CAIRN_NAME_CACHE_MB` cannot be used, or null: a whole number of MiB, 0–1048576 (0 keeps
 * only the partition in use).
 */
function nameCacheRefusal(mb: string | undefined): string | null {
  if (mb === undefined || (/^\d{1,7}$/.test(mb) && Number(mb) <= 1048576)) return null;
  return `CAIRN_NAME_CACHE_MB must be a whole number of MiB of name indexes kept between calls, 0–1048576, got ${JSON.stringify(mb)}`;
}

/** The MCP session caps an operator may set, each a whole number 1–100000, and what it bounds. */
const SESSION_SETTINGS = {
  CAIRN_MCP_SESSIONS: ['maxSessions', 'MCP sessions the node holds at once'],
  CAIRN_MCP_SESSIONS_PER_USER: ['maxPerUser', 'MCP sessions the tokens of one user hold together'],
  CAIRN_MCP_SESSIONS_PER_TOKEN: ['maxPerToken', 'MCP sessions one token holds'],
} as const;

type SessionCaps = Partial<Record<(typeof SESSION_SETTINGS)[keyof typeof SESSION_SETTINGS][0], number>>;

/** The session caps set in `env`, or why one cannot be used (checked before the store is opened). */
function sessionCaps(env: NodeJS.ProcessEnv): { caps: SessionCaps } | { refused: string } {
  const caps: SessionCaps = {};
  for (const [name, [field, what]] of Object.entries(SESSION_SETTINGS)) {
    const text = env[name];
    if (text === undefined) continue;
    if (!/^[1-9]\d{0,5}$/.test(text) || Number(text) > 100_000) {
      return { refused: `${name} must be a whole number of ${what}, 1–100000, got ${JSON.stringify(text)}` };
    }
    caps[field] = Number(text);
  }
  return { caps };
}

/** The log levels of the node's logger (pino's, and `silent`). */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Why the admin token or the log level cannot be used, or null. Checked with the others, before
 * the store is opened: a short token would otherwise be refused only after an empty store was
 * created, and a bad level by the logger, in words that do not name the setting.
 */
/** CAIRN_ALLOWED_HOSTS as a list: `a.lan:4534, b.lan:4534` as people write lists (a name with a
 * space before it matched no Host). */
function allowedHosts(env: NodeJS.ProcessEnv): string[] {
  return (env.CAIRN_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
}

/**
 * Why a CAIRN_ALLOWED_HOSTS entry can never match a `Host` header, or null. Found by a review: an
 * entry written as a URL (`http://cairn.lan:4534`) was taken and matched nothing, so the clients
 * it was meant for got 403 with nothing saying why.
 */
function allowedHostsRefusal(env: NodeJS.ProcessEnv): string | null {
  for (const entry of allowedHosts(env)) {
    if (!/[\s/@]/.test(entry)) continue;
    let host: string | null = null;
    try {
      host = new URL(entry).host || null;
    } catch {}
    const instead = host === null ? '' : ` (${JSON.stringify(host)})`;
    return (
      `CAIRN_ALLOWED_HOSTS: ${JSON.stringify(entry)} is not a host name as a Host header carries it: ` +
      `give host or host:port${instead}, comma-separated`
    );
  }
  return null;
}

function tokenAndLogRefusal(env: NodeJS.ProcessEnv): string | null {
  const token = env.CAIRN_ADMIN_TOKEN;
  const refused = token === undefined || token === '' ? null : seedTokenRefusal(token);
  if (refused !== null) return `CAIRN_ADMIN_TOKEN ${refused}`;
  // Empty is unset (`info`), as it always was: an env file's `CAIRN_LOG_LEVEL=` is no mistake to refuse.
  const level = env.CAIRN_LOG_LEVEL;
  if (level !== undefined && level !== '' && !LOG_LEVELS.includes(level)) {
    return `CAIRN_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`;
  }
  return null;
}

/**
 * Why the address cannot be listened on, naming the setting it came from (`hostFrom`,
 * `portFrom`), or null. An empty host (`CAIRN_HOST=` in an env file) would listen on every
 * interface; a port is plain decimal, as `Number` would also take `0x50`, ` 12` and `1e3`.
 */
function addressRefusal(host: string, hostFrom: string, portText: string, portFrom: string): string | null {
  if (host.trim() === '' || /\s/.test(host)) {
    return `${hostFrom} must name an address to listen on (127.0.0.1, 0.0.0.0, a host name), got ${JSON.stringify(host)}`;
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    return `${portFrom} must be a port number 0–65535 (0: any free port), got ${JSON.stringify(portText)}`;
  }
  return null;
}

/** What a user does instead of opening a store a node already serves (DESIGN.md §4). */
const THROUGH_THE_NODE =
  'CLI commands (token, memories, export, import, check, backup, compact) go through that node with ' +
  'CAIRN_ADMIN_TOKEN; stop it (`cairn stop`) before starting another on this store';

/** Why a second node does not start on a store `holder` serves: who holds it and what to do. */
function heldBy(dataDir: string, holder: NodeFile): string {
  return `${dataDir} is already served by the node at ${holder.url} (pid ${holder.pid}); ${THROUGH_THE_NODE}`;
}

/**
 * Says why the node could not start (exit 2), on stderr and to a `cairn mcp` that started it
 * (`held`: another process holds the store, so that bridge waits for its node).
 */
function couldNotRun(env: NodeJS.ProcessEnv, message: string, held: boolean, portTaken = false): number {
  process.stderr.write(`cairn serve: ${message}\n`);
  reportStart(env, { held, message, ...(portTaken ? { portTaken: true } : {}) });
  return 2;
}

/**
 * Runs a node until SIGTERM/SIGINT, then shuts down gracefully: stops accepting, lets in-flight
 * requests and writes finish, closes the store, removes `node.json`. Resolves with the exit code:
 * 2 when it could not start (bad options, a store another node holds, a port in use), 1 when the
 * shutdown failed.
 */
export async function runServe(args: ServeArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const host = args.host ?? env.CAIRN_HOST ?? '127.0.0.1';
  const portText = args.port ?? env.CAIRN_PORT ?? '4000';
  const refused =
    addressRefusal(
      host,
      args.host === undefined ? 'CAIRN_HOST' : '--host',
      portText,
      args.port === undefined ? 'CAIRN_PORT' : '--port',
    ) ??
    refusal(args.profile ?? env.CAIRN_PROFILE ?? 'lite', env.CAIRN_RATE_LIMIT, env.CAIRN_RATE_LIMIT_PER_USER) ??
    readLimitsRefusal(env) ??
    idempotencyRefusal(env.CAIRN_IDEMPOTENCY_HOURS) ??
    nameCacheRefusal(env.CAIRN_NAME_CACHE_MB) ??
    loadPieceRefusal(env) ??
    allowedHostsRefusal(env) ??
    tokenAndLogRefusal(env);
  if (refused !== null) return couldNotRun(env, refused, false);
  const sessions = sessionCaps(env);
  if ('refused' in sessions) return couldNotRun(env, sessions.refused, false);
  const holder = findRunningNode(args.dataDir);
  if (holder !== null) return couldNotRun(env, heldBy(args.dataDir, holder), true);
  const unwritable = unwritableDataDir(args.dataDir);
  if (unwritable !== null) return couldNotRun(env, unwritable.message, false);
  const foreign = foreignDataDir(args.dataDir);
  if (foreign !== null) return couldNotRun(env, foreign, false);
  let node: Awaited<ReturnType<typeof startNode>>;
  try {
    node = await startNode({
      dataDir: args.dataDir,
      host,
      port: Number(portText),
      adminToken: env.CAIRN_ADMIN_TOKEN,
      allowedHosts: allowedHosts(env),
      ...(env.CAIRN_RATE_LIMIT === undefined ? {} : { rateLimit: Number(env.CAIRN_RATE_LIMIT) }),
      ...(env.CAIRN_RATE_LIMIT_PER_USER === undefined
        ? {}
        : { rateLimitPerUser: Number(env.CAIRN_RATE_LIMIT_PER_USER) }),
      logLevel: env.CAIRN_LOG_LEVEL || 'info',
      allowPrivate: env.CAIRN_ALLOW_PRIVATE === '1' || env.CAIRN_ALLOW_PRIVATE === 'true',
      ...(env.CAIRN_IDEMPOTENCY_HOURS === undefined ? {} : { idempotencyHours: Number(env.CAIRN_IDEMPOTENCY_HOURS) }),
      ...(env.CAIRN_NAME_CACHE_MB === undefined ? {} : { nameCacheMb: Number(env.CAIRN_NAME_CACHE_MB) }),
      sessions: sessions.caps,
      background: env[START_FD] !== undefined,
    });
  } catch (err) {
    // A node that did not start could not run (exit 2, as --help says), whatever stopped it.
    const message = err instanceof Error ? err.message : String(err);
    const held = err instanceof StoreError && err.code === 'STORE_LOCKED';
    const portTaken = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    const then = held
      ? `; if that process is a node, ${THROUGH_THE_NODE}`
      : portTaken
        ? '; another program listens there: choose another --port (or CAIRN_PORT; 0 takes any free port)'
        : '';
    return couldNotRun(env, `${message}${then}`, held, portTaken);
  }
  process.stderr.write(`cairn: serving ${args.dataDir} at ${node.url} (MCP: ${node.url}/v1/mcp)\n`);
  reportStart(env);
  // A wider bind is announced by every URL that reaches it, and the Host names it accepts are these.
  if (node.networkUrls.length > 0) {
    process.stderr.write(`cairn: from the network: ${node.networkUrls.join(', ')} (MCP: <url>/v1/mcp)\n`);
  }
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`cairn: ${signal}, shutting down\n`);
      node.close().then(
        () => resolve(0),
        (err: unknown) => {
          process.stderr.write(`cairn: shutdown failed: ${String(err)}\n`);
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
