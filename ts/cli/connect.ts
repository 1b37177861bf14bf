import {
  chmodSync,
  copyFileSync,
  existsSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parse as parseToml } from 'smol-toml';

import { Tokens } from '../auth/tokens.js';
import { TokenCreateInput } from '../protocol/admin.js';
import { makeDirs } from '../server/make-dirs.js';
import { findRunningNode } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { CLIENTS, type ClientName, clientSpec, type Entry, jsonEntry, tomlEntry } from './clients.js';
import { needStore } from './data-dir.js';
import { asFailure, CliFailure, EXIT_FAILED, usage } from './failure.js';
import { openStore } from './store-owner.js';
import { refuseFirstNonAdmin } from './token.js';

/** Arguments of `cairn connect CLIENT`. */
export interface ConnectArgs {
  dataDir: string;
  client: string;
  json: boolean;
  force: boolean;
  /** The name of the server entry (default `cairn`). */
  name?: string | undefined;
  /** Another config file than the client's usual one. */
  config?: string | undefined;
  /** The node's URL for HTTP clients (default: the running node's, else http://127.0.0.1:4000). */
  url?: string | undefined;
  user?: string | undefined;
}

class Refused extends Error {}

/** This CLI's entry point as stdio clients will start it: a real path, never a temporary one. */
export function cliPath(): string {
  const path = realpathSync(fileURLToPath(new URL('./main.js', import.meta.url)));
  // npx runs packages it fetched from a cache it may clear at any time.
  if (/[\\/]_npx[\\/]/.test(path) || /[\\/]\.npm[\\/]/.test(path)) {
    throw new Refused(
      `this cairn runs from npx's temporary cache (${path}); a client config must not point there: install ` +
        'Cairn for good (a checkout with npm install, or npm install -g) and run connect from that install',
    );
  }
  return path;
}

/**
 * The node connect makes and revokes tokens through: the one at `--url` (whose store may be on
 * another machine, or a service's this user cannot read), else the one running on the data dir;
 * null: none, the store is used directly.
 */
function adminNode(a: ConnectArgs): { url: string; pid?: number } | null {
  if (a.url !== undefined) return { url: a.url.replace(/\/+$/, '') };
  return findRunningNode(a.dataDir);
}

/**
 * A token for agent `agent`, made through the node (`adminNode`, with the admin token) or on the
 * store.
 */
async function agentToken(a: ConnectArgs, agent: string, env: NodeJS.ProcessEnv) {
  const input = { agent, ...(a.user === undefined ? {} : { user: a.user }) };
  const node = adminNode(a);
  if (node !== null) {
    const made = await adminCall(node, env.CAIRN_ADMIN_TOKEN, 'POST', '/v1/admin/tokens', input);
    return { token: String(made.token), id: String(made.id), url: node.url };
  }
  // NOT_FOUND as every command says a missing store (FORBIDDEN for one this user may not read).
  needStore(a.dataDir, 'run `cairn init` (or `cairn serve`) first');
  const store = await openStore(a.dataDir);
  try {
    const tokens = new Tokens(store);
    await refuseFirstNonAdmin(tokens, undefined, a.dataDir);
    const { token, record } = await tokens.create(input);
    return { token, id: record.id, url: null };
  } finally {
    await store.close();
  }
}

/** The token the entry `name` of the file holds now, if any (what `--force` replaces). */
function replacedToken(format: 'json' | 'toml', text: string | null, name: string): string | null {
  if (text === null) return null;
  try {
    const doc = format === 'json' ? JSON.parse(text) : parseToml(text);
    const entry = (format === 'json' ? doc.mcpServers : doc.mcp_servers)?.[name] as Record<string, unknown> | undefined;
    const bearer = (entry?.headers as Record<string, string> | undefined)?.Authorization?.replace(/^Bearer /, '');
    const token = bearer ?? (entry?.env as Record<string, string> | undefined)?.CAIRN_TOKEN;
    return typeof token === 'string' && token.startsWith('cairn_') ? token : null;
  } catch {
    return null;
  }
}

/**
 * Whether the replaced entry's token is an admin token, which connect leaves live (said on
 * stderr): one pasted into a client config by hand is most likely the operator's own (found by
 * QA: connect revoked it, or, the last one, failed after writing the config).
 */
function keptAdmin(id: string, role: string): boolean {
  if (role !== 'admin') return false;
  process.stderr.write(
    `cairn connect: the replaced entry held admin token ${id}, which is left live (\`cairn token revoke ${id}\` if it should go)\n`,
  );
  return true;
}

/**
 * Revokes the token of an entry `--force` replaced, so a reconnect leaves no credential behind;
 * returns its id, or null when it is not one of this store's live tokens or is an admin token.
 */
async function revokeReplaced(a: ConnectArgs, token: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const node = adminNode(a);
  if (node !== null) {
    const who = await fetch(`${node.url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
    if (!who.ok) return null;
    const body = (await who.json()) as { role?: string; token?: { id?: string } };
    const id = body.token?.id;
    if (id === undefined || keptAdmin(id, String(body.role))) return null;
    await adminCall(node, env.CAIRN_ADMIN_TOKEN, 'DELETE', `/v1/admin/tokens/${encodeURIComponent(id)}`);
    return id;
  }
  const store = await openStore(a.dataDir);
  try {
    const tokens = new Tokens(store);
    const record = tokens.verify(token);
    if (record === null || keptAdmin(record.id, record.role)) return null;
    return (await tokens.revoke(record.id))?.id ?? null;
  } finally {
    await store.close();
  }
}

/**
 * Writes `next` over `file` (text `text`, null when missing) atomically, 0600, after a backup of
 * the old file; says where the backup is and whether the old file was readable by others.
 */
function writeConfig(file: string, text: string | null, next: string): { backup: string | null; widened: boolean } {
  let backup: string | null = null;
  if (text !== null) {
    backup = `${file}.cairn-backup-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    copyFileSync(file, backup);
    chmodSync(backup, 0o600);
  }
  makeDirs(dirname(file));
  // The file now holds a token: it is the user's alone, whatever its mode was.
  const widened = text !== null && (statSync(file).mode & 0o077) !== 0;
  // A config kept as a symlink (into a dotfiles repository) is written where it points: renamed
  // over, the link would become a file of its own, and the user's copy would miss the entry.
  const target = text !== null ? realpathSync(file) : file;
  const tmp = `${target}.cairn-tmp-${process.pid}`;
  try {
    writeFileSync(tmp, next, { mode: 0o600 });
    renameSync(tmp, target);
  } finally {
    rmSync(tmp, { force: true });
  }
  return { backup, widened };
}

/** Revokes the token `id` this run made, through the running node or on the store. */
async function revokeMade(a: ConnectArgs, id: string, env: NodeJS.ProcessEnv): Promise<void> {
  const node = adminNode(a);
  if (node !== null) {
    await adminCall(node, env.CAIRN_ADMIN_TOKEN, 'DELETE', `/v1/admin/tokens/${encodeURIComponent(id)}`);
    return;
  }
  const store = await openStore(a.dataDir);
  try {
    await new Tokens(store).revoke(id);
  } finally {
    await store.close();
  }
}

/** The config file's new text with `entry` under `name`; refuses to replace one without `force`. */
function edit(
  file: string,
  format: 'json' | 'toml',
  text: string | null,
  name: string,
  entry: Entry,
  force: boolean,
): string {
  try {
    return editText(format, text, name, entry, force);
  } catch (err) {
    throw err instanceof Refused ? new Refused(`${file}: ${err.message}`) : err;
  }
}

function editText(format: 'json' | 'toml', text: string | null, name: string, entry: Entry, force: boolean): string {
  if (format === 'json') {
    let doc: Record<string, unknown>;
    try {
      doc = text === null || text.trim() === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch (err) {
      throw new Refused(`not valid JSON (${err instanceof Error ? err.message : String(err)}); fix or move it first`);
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Refused('not a JSON object');
    const servers = (doc.mcpServers ?? {}) as Record<string, unknown>;
    if (typeof servers !== 'object' || Array.isArray(servers)) throw new Refused('its mcpServers is not an object');
    if (name in servers && !force) throw new Refused(`it already has an MCP server named ${name}; --force replaces it`);
    return `${JSON.stringify({ ...doc, mcpServers: { ...servers, [name]: jsonEntry(entry) } }, null, 2)}\n`;
  }
  if (entry.kind !== 'stdio') throw new Error('TOML clients take stdio entries');
  const before = text ?? '';
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(before);
  } catch (err) {
    throw new Refused(`not valid TOML (${err instanceof Error ? err.message : String(err)}); fix or move it first`);
  }
  const servers = (doc.mcp_servers ?? {}) as Record<string, unknown>;
  let kept = before;
  if (name in servers) {
    if (!force) throw new Refused(`it already has an MCP server named ${name}; --force replaces it`);
    kept = withoutTable(before, name);
  }
  // Appended as text, so the user's comments and layout stay as they were.
  const after = `${kept}${kept === '' || kept.endsWith('\n\n') ? '' : kept.endsWith('\n') ? '\n' : '\n\n'}${tomlEntry(name, entry)}`;
  let parsed: Record<string, unknown>;
  try {
    parsed = parseToml(after);
  } catch {
    throw new Refused(
      'its mcp_servers is written in a form connect cannot add a table to (an inline table?); add the entry by hand',
    );
  }
  const check = (parsed.mcp_servers as Record<string, Record<string, unknown>> | undefined)?.[name];
  if (check?.command !== entry.command) {
    throw new Refused(`its ${name} server is defined in a way connect cannot replace; remove it by hand first`);
  }
  return after;
}

/** `text` without the table `[mcp_servers.NAME]` and its sub-tables. */
function withoutTable(text: string, name: string): string {
  const quoted = (k: string) => `(?:${k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|"${k}"|'${k}')`;
  const own = new RegExp(`^\\s*\\[\\s*mcp_servers\\s*\\.\\s*${quoted(name)}\\s*(\\.[^\\]]*)?\\]\\s*(#.*)?$`);
  const out: string[] = [];
  let skipping = false;
  for (const line of text.split('\n')) {
    if (/^\s*\[/.test(line)) skipping = own.test(line);
    if (!skipping) out.push(line);
  }
  return out.join('\n');
}

/**
 * `cairn connect CLIENT [--force] [--name N] [--config FILE] [--url URL] [--user ID]`: makes a token
 * for the agent CLIENT and writes CLIENT's MCP config to reach this node (DESIGN.md §4): a backup
 * of the file first, no entry of the same name replaced without `--force`, stdio entries pointing
 * at this install's CLI by its real path (never npx's temporary cache).
 */
export async function runConnect(a: ConnectArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (!(CLIENTS as readonly string[]).includes(a.client)) {
    throw usage('CLIENT', `give one of ${CLIENTS.join(', ')}`);
  }
  if (a.url !== undefined && !/^https?:\/\/[^\s/]+\/*$/.test(a.url)) {
    throw usage('--url', `give the node's base URL, as http://HOST:PORT, got ${JSON.stringify(a.url)}`);
  }
  const valid = TokenCreateInput.safeParse({ agent: a.client, ...(a.user === undefined ? {} : { user: a.user }) });
  if (!valid.success) {
    throw usage('--user', valid.error.issues[0]?.message ?? 'invalid');
  }
  const spec = clientSpec(a.client as ClientName, env, a.config);
  const file = spec.file;
  const name = a.name ?? 'cairn';
  try {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : null;
    const command = process.execPath;
    const cli = spec.transport === 'stdio' ? cliPath() : '';
    // Checked before a token is made: a refusal leaves neither a token nor a changed file.
    const probe: Entry =
      spec.transport === 'http'
        ? { kind: 'http', url: 'http://127.0.0.1/v1/mcp', token: 'probe', httpType: spec.httpType }
        : { kind: 'stdio', command, args: [cli], token: 'probe' };
    edit(file, spec.format, text, name, probe, a.force);

    const made = await agentToken(a, spec.name, env);
    const base = (a.url ?? made.url ?? `http://127.0.0.1:${env.CAIRN_PORT ?? '4000'}`).replace(/\/+$/, '');
    const entry: Entry =
      spec.transport === 'http'
        ? { kind: 'http', url: `${base}/v1/mcp`, token: made.token, httpType: spec.httpType }
        : {
            kind: 'stdio',
            command,
            // With --url the bridge forwards to that node; else to the data dir's (started if need be).
            args: a.url !== undefined ? [cli, 'mcp', '--url', base] : [cli, 'mcp', '--data-dir', a.dataDir],
            token: made.token,
          };
    const next = edit(file, spec.format, text, name, entry, a.force);
    const old = a.force ? replacedToken(spec.format, text, name) : null;
    let written: { backup: string | null; widened: boolean };
    try {
      written = writeConfig(file, text, next);
    } catch (err) {
      // No config holds the new token, so nothing should be able to use it.
      await revokeMade(a, made.id, env);
      throw new Refused(
        `cannot write ${file}: ${err instanceof Error ? err.message : String(err)}; the token made for it (id ${made.id}) was revoked`,
      );
    }
    const { backup, widened } = written;
    const revoked = old === null ? null : await revokeReplaced(a, old, env);
    const report = {
      client: spec.name,
      file,
      backup,
      name,
      transport: spec.transport,
      tokenId: made.id,
      revokedTokenId: revoked,
      madePrivate: widened,
    };
    process.stdout.write(
      a.json
        ? `${JSON.stringify(report)}\n`
        : `connected ${spec.name}: ${name} (${spec.transport}) in ${file}${backup === null ? '' : ` (backup: ${backup})`}; ` +
            `token id ${made.id} for agent ${spec.name}${revoked === null ? '' : `; the replaced entry's token ${revoked} revoked`}` +
            `${widened ? `; ${file} was readable by others and is now 0600` : ''}. Restart ${spec.name} to load it.\n`,
    );
    return 0;
  } catch (err) {
    // A refusal (an entry already there, a config it cannot edit) is about what the user has: 1;
    // so is a missing store, a node that does not answer, a missing or refused admin token.
    // Bad usage carries its own exit code (2).
    if (err instanceof Refused) throw new CliFailure('VALIDATION_ERROR', err.message, EXIT_FAILED);
    throw asFailure(err, EXIT_FAILED);
  }
}
