import { existsSync, readFileSync } from 'node:fs';

import { parse as parseToml } from 'smol-toml';

import { missingCpuFlags } from '../native/cpu.js';
import { findRunningNode } from '../server/node-file.js';
import { CLIENTS, type ClientSpec, clientSpec } from './clients.js';
import { counted } from './counted.js';
import { storeProblem } from './data-dir.js';
import { claudeProjectServers, type ProjectServers, type Servers } from './doctor-claude.js';
import { cursorProjectServers } from './doctor-cursor.js';
import { noStoreRemedy, unopenable } from './doctor-store.js';
import { CliFailure } from './failure.js';
import { nodeSupported, SUPPORTED_NODE_SAID } from './node-version.js';
import { FROM_ENV, optionsOf } from './options.js';

/** One line of the doctor's report: `problem` makes the exit code 1; `note` is for information. */
export interface Finding {
  check: string;
  state: 'ok' | 'problem' | 'note';
  detail: string;
}

/** How long the doctor waits for each answer of the node. */
const ANSWER_MS = 3000;

/** What /health's reply adds: the version, or why the store takes no writes (docs/operations.md). */
function healthDetail(status: number, body: Record<string, unknown>): string {
  if (status === 200) return `, version ${String(body.version)}, profile ${String(body.profile)}`;
  const store = body.store as
    | { writes?: unknown; reason?: unknown; since?: unknown; damaged?: { reason?: unknown } }
    | undefined;
  if (body.status !== 'degraded' || store === undefined) return '';
  const said: string[] = [];
  if (store.writes === 'stopped') {
    said.push(
      `: writes stopped since ${String(store.since)} (${String(store.reason)}); free space on the data dir's disk and the node resumes by itself`,
    );
  }
  if (store.damaged !== undefined) {
    said.push(
      `: the store is damaged (${String(store.damaged.reason)}); run \`cairn database check\` and restore it from a backup`,
    );
  }
  return said.join('');
}

async function get(url: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(ANSWER_MS),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

/** How a request to the node failed, as a person says it (fetch's own errors are for programs). */
function unanswered(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') {
    return `does not answer within ${ANSWER_MS / 1000} s: it may be stopped or hung; restart it (cairn serve)`;
  }
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return `does not answer (${cause instanceof Error ? cause.message : String(cause)})`;
}

function runtime(): Finding[] {
  const version = process.versions.node;
  const out: Finding[] = [
    nodeSupported(version)
      ? { check: 'node.js', state: 'ok', detail: `Node ${version}` }
      : { check: 'node.js', state: 'problem', detail: `Node ${version}; Cairn needs ${SUPPORTED_NODE_SAID}` },
  ];
  if (process.platform === 'linux' && process.arch === 'x64') {
    const missing = missingCpuFlags(readFileSync('/proc/cpuinfo', 'utf8'));
    out.push(
      missing.length === 0
        ? { check: 'cpu', state: 'ok', detail: 'AVX2, FMA, SSE4.2 and PCLMULQDQ present' }
        : { check: 'cpu', state: 'problem', detail: `this CPU lacks ${missing.join(', ')}; the engine cannot load` },
    );
  }
  return out;
}

/** The store and the node serving it; returns the node's URL when one answers. */
async function store(dataDir: string, env: NodeJS.ProcessEnv, out: Finding[]): Promise<string | null> {
  const problem = storeProblem(dataDir, noStoreRemedy(dataDir));
  if (problem !== null) {
    out.push({ check: 'store', state: 'problem', detail: problem.message });
    return null;
  }
  const node = findRunningNode(dataDir);
  const blocked = node === null ? unopenable(dataDir) : null;
  out.push(
    blocked === null
      ? { check: 'store', state: 'ok', detail: dataDir }
      : { check: 'store', state: 'problem', detail: `${dataDir}: ${blocked}` },
  );
  if (node === null) {
    if (blocked !== null) return null;
    out.push({
      check: 'node',
      state: 'note',
      detail: 'no node runs on this store: `cairn serve` (stdio clients start one when they need it)',
    });
    // Only a node can say whether it takes the token: doctor says so rather than leave it out.
    if (env.CAIRN_TOKEN) {
      out.push({
        check: 'CAIRN_TOKEN',
        state: 'note',
        detail: 'not tried: no node runs to ask (`cairn serve`, then `cairn doctor` again)',
      });
    }
    return null;
  }
  try {
    const health = await get(`${node.url}/health`);
    out.push({
      check: 'node',
      state: health.status === 200 ? 'ok' : 'problem',
      detail: `${node.url} (pid ${node.pid}) answers /health ${health.status}${healthDetail(health.status, health.body)}`,
    });
  } catch (err) {
    out.push({
      check: 'node',
      state: 'problem',
      detail: `${node.url} (pid ${node.pid}) ${unanswered(err)}`,
    });
    return null;
  }
  out.push(await adminToken(node.url, env.CAIRN_ADMIN_TOKEN));
  const token = env.CAIRN_TOKEN;
  if (token !== undefined && token !== '') {
    const who = await get(`${node.url}/v1/whoami`, token);
    out.push(
      who.status === 200
        ? {
            check: 'CAIRN_TOKEN',
            state: 'ok',
            detail: `agent ${String(who.body.agent)}, user ${String(who.body.user)}`,
          }
        : {
            check: 'CAIRN_TOKEN',
            state: 'problem',
            detail: `the node refuses it (${who.status}): make a token with \`cairn token create --agent NAME\``,
          },
    );
  }
  return node.url;
}

/**
 * Whether `CAIRN_ADMIN_TOKEN` lets the CLI work on this store through its node: memories, export
 * and import need an admin token; token, backup, compact and check one with no user or scope
 * limit, which is what listing the tokens needs too (reads, so asking changes nothing).
 */
async function adminToken(url: string, token: string | undefined): Promise<Finding> {
  const check = 'CAIRN_ADMIN_TOKEN';
  if (token === undefined || token === '') {
    return {
      check,
      state: 'note',
      detail: `not set: while this node runs, CLI commands on its store (token, memories, export, import, backup, compact, check) go through it and need its admin token`,
    };
  }
  const make = '`cairn token create --agent NAME --role admin`';
  try {
    const who = await get(`${url}/v1/whoami`, token);
    if (who.status !== 200) {
      const said = (who.body.error as { message?: unknown } | undefined)?.message;
      return {
        check,
        state: 'problem',
        detail: `the node refuses it (${who.status}: ${String(said)}): set it to one of its admin tokens (lost: stop the node with cairn stop, run ${make} on its data dir, start it again)`,
      };
    }
    if (who.body.role !== 'admin') {
      return {
        check,
        state: 'problem',
        detail: `agent ${String(who.body.agent)}'s token (role ${String(who.body.role)}), not an admin's: CLI commands refuse it; make an admin token with ${make}`,
      };
    }
    const tokens = await get(`${url}/v1/admin/tokens`, token);
    return tokens.status === 200
      ? { check, state: 'ok', detail: `an admin token of the node at ${url}` }
      : {
          check,
          state: 'note',
          detail: `an admin token limited to a user or scopes: memories, export and import work within its limits; token, backup, compact and check need one with no limit (${make})`,
        };
  } catch (err) {
    return { check, state: 'problem', detail: `not tried: the node at ${url} ${unanswered(err)}` };
  }
}

/** Where an entry is, when not in the client's user-level file: named in the check, with how to replace it. */
interface Place {
  where: string;
  remedy: string;
}

/** Each client's config: connected or not, and whether its entry would reach this node. */
async function clients(dataDir: string, nodeUrl: string | null, env: NodeJS.ProcessEnv, out: Finding[]) {
  for (const name of CLIENTS) {
    const check = `client ${name}`;
    let spec: ClientSpec;
    try {
      spec = clientSpec(name, env);
    } catch (err) {
      // No absolute home to find the file in: a file found relative to here is not the client's.
      if (!(err instanceof CliFailure)) throw err;
      out.push({ check, state: 'problem', detail: `cannot find its config: ${err.message}` });
      continue;
    }
    let doc: Record<string, unknown> | null = null;
    let servers: Servers = {};
    if (existsSync(spec.file)) {
      try {
        const text = readFileSync(spec.file, 'utf8');
        doc = spec.format === 'json' ? JSON.parse(text) : parseToml(text);
        servers = ((spec.format === 'json' ? doc?.mcpServers : doc?.mcp_servers) ?? {}) as Servers;
      } catch (err) {
        out.push({ check, state: 'problem', detail: `${spec.file} does not parse: ${String(err)}` });
        continue;
      }
    }
    const inProjects =
      name === 'claude'
        ? claudeProjectServers(doc, process.cwd(), env)
        : name === 'cursor'
          ? cursorProjectServers(process.cwd(), spec.file, env)
          : [];
    const projects = await projectFindings(name, inProjects, dataDir, nodeUrl);
    const entries = cairnEntries(servers);
    if (entries.length === 0) {
      const none = doc === null ? `not connected (no ${spec.file}; ` : `no cairn server in ${spec.file} (`;
      // A project-level entry found is the client's connection in that project: not "not connected".
      out.push(
        projects.length > 0
          ? { check, state: 'note', detail: `no user-level cairn server in ${spec.file}; its projects' entries follow` }
          : { check, state: 'note', detail: `${none}\`cairn connect ${name}\`)` },
      );
    }
    for (const [key, entry] of entries) out.push(await judge(name, key, entry, dataDir, nodeUrl));
    out.push(...projects);
  }
}

/**
 * A client's project-level Cairn entries (Claude Code's `doctor-claude.ts`, Cursor's
 * `doctor-cursor.ts`), each judged as a user-level one, said with where it is.
 */
async function projectFindings(
  name: string,
  inProjects: ProjectServers[],
  dataDir: string,
  nodeUrl: string | null,
): Promise<Finding[]> {
  const found: Finding[] = [];
  for (const p of inProjects) {
    const place = { where: p.where, remedy: p.remedy };
    if (p.error !== undefined) {
      found.push({ check: `client ${name}, ${p.where}`, state: 'problem', detail: `does not parse: ${p.error}` });
      continue;
    }
    for (const [key, entry] of cairnEntries(p.servers)) {
      const finding = await judge(name, key, entry, dataDir, nodeUrl, place);
      // The client reads the variable from the environment it starts in, most likely one like
      // this: unset, the entry reaches the node with the literal `${VAR}` in its place.
      if (p.missing.length > 0) {
        finding.state = 'problem';
        finding.detail = `it uses \${${p.missing.join('}, ${')}}, not set here (set it where ${CLIENT_NAMES[name] ?? name} starts); ${finding.detail}`;
      }
      found.push(finding);
    }
  }
  return found;
}

/** How the report names a client whose environment a variable must be set in. */
const CLIENT_NAMES: Record<string, string> = { claude: 'Claude Code', cursor: 'Cursor' };

/**
 * A config's Cairn entries: the one named `cairn`, and any other that holds a Cairn token, as
 * `cairn connect --name N` writes (found by QA: doctor said such a client was not connected and
 * to run `cairn connect`, which would add a second server beside it).
 */
function cairnEntries(servers: Servers): [string, Record<string, unknown>][] {
  return Object.entries(servers).filter(([key, entry]) => {
    if (key === 'cairn') return true;
    if (entry === null || typeof entry !== 'object') return false;
    const auth = (entry.headers as Record<string, unknown> | undefined)?.Authorization;
    const token = (entry.env as Record<string, unknown> | undefined)?.CAIRN_TOKEN;
    return (typeof auth === 'string' && auth.startsWith('Bearer cairn_')) || typeof token === 'string';
  });
}

async function judge(
  name: string,
  key: string,
  entry: Record<string, unknown>,
  dataDir: string,
  nodeUrl: string | null,
  place?: Place,
): Promise<Finding> {
  const named = key === 'cairn' ? '' : ` --name ${key}`;
  const check = `client ${name}${key === 'cairn' ? '' : ` (${key})`}${place === undefined ? '' : `, ${place.where}`}`;
  const say = (state: Finding['state'], detail: string): Finding => ({ check, state, detail });
  // A refused token (revoked, expired, another store's) is replaced by connecting again; `connect`
  // writes the user-level file, so an entry elsewhere is replaced where it is.
  const reconnect =
    place === undefined
      ? `: \`cairn connect ${name}${named} --force\` writes one that works`
      : `: ${place.remedy.replace('NAME', key)}`;
  if (typeof entry.url === 'string') {
    const auth = (entry.headers as Record<string, string> | undefined)?.Authorization ?? '';
    // The entry's own URL is tried, not this store's node: a client may use a node of another
    // data dir (found by an audit: a working entry was a problem when doctor ran without --data-dir).
    const base = entry.url.replace(/\/v1\/mcp\/?$/, '');
    let who: Awaited<ReturnType<typeof get>>;
    try {
      who = await get(`${base}/v1/whoami`, auth.replace(/^Bearer /, ''));
    } catch (err) {
      const here =
        nodeUrl === null
          ? 'no node runs on this store either (cairn serve)'
          : place === undefined
            ? `this store's node runs at ${nodeUrl}: \`cairn connect ${name}${named} --force\` (CAIRN_ADMIN_TOKEN set) points it there`
            : `this store's node runs at ${nodeUrl}${reconnect}`;
      return say('problem', `${entry.url} ${unanswered(err)}, so this client cannot connect; ${here}`);
    }
    return who.status === 200
      ? say('ok', `${entry.url} as agent ${String(who.body.agent)}`)
      : say('problem', `${entry.url}: the node refuses its token (${who.status})${reconnect}`);
  }
  const args = Array.isArray(entry.args) ? (entry.args as string[]) : [];
  const command = String(entry.command ?? '');
  const script = args[0] ?? '';
  if (!existsSync(command)) return say('problem', `its command ${command} does not exist`);
  if (!existsSync(script) || /[\\/]_npx[\\/]/.test(script)) {
    return say('problem', `it starts ${script}, which is missing or in npx's temporary cache`);
  }
  // An option `cairn mcp` refuses (exit 2) shows in the client only as a server that did not start.
  const takes = optionsOf('mcp', undefined) ?? [];
  const refused = args.slice(2).find((arg) => arg.startsWith('-') && !takes.includes(arg.split('=')[0] ?? arg));
  if (refused !== undefined) {
    const variable = FROM_ENV.mcp?.[refused];
    return say(
      'problem',
      `its args hold ${refused}, which \`cairn mcp\` refuses${variable === undefined ? '' : ` (set ${variable} in its env instead)`}${reconnect}`,
    );
  }
  const at = args.indexOf('--data-dir');
  if (at >= 0 && args[at + 1] !== dataDir) {
    return say('note', `stdio, for the store at ${args[at + 1]} (not ${dataDir})`);
  }
  const token = (entry.env as Record<string, string> | undefined)?.CAIRN_TOKEN;
  if (typeof token !== 'string' || token === '') return say('problem', 'its entry sets no CAIRN_TOKEN');
  // With --url the bridge uses that node, not this store's (found by QA: a token revoked there was
  // "ok … tried once a node runs"); that node is asked, as an HTTP entry's URL is.
  const url = args.indexOf('--url') >= 0 ? args[args.indexOf('--url') + 1]?.replace(/\/+$/, '') : undefined;
  // With no node running, `cairn mcp` starts one when the client needs it; its token is tried then.
  if (url === undefined && nodeUrl === null) {
    return say('ok', `stdio: ${command} ${args.join(' ')} (its token is tried once a node runs)`);
  }
  let who: Awaited<ReturnType<typeof get>>;
  try {
    who = await get(`${url ?? nodeUrl}/v1/whoami`, token);
  } catch (err) {
    return say('problem', `stdio: its node ${url} ${unanswered(err)}, so this client cannot connect`);
  }
  return who.status === 200
    ? say('ok', `stdio as agent ${String(who.body.agent)}: ${command} ${args.join(' ')}`)
    : say(
        'problem',
        `stdio: the node refuses its CAIRN_TOKEN (${who.status})${url === undefined || place !== undefined ? reconnect : `: \`cairn connect ${name}${named} --url ${url} --force\` (CAIRN_ADMIN_TOKEN set) writes one that works`}`,
      );
}

/**
 * `cairn doctor [--json]` (DESIGN.md §4): says what is not ready — runtime, CPU, store, node,
 * `CAIRN_TOKEN`, and each MCP client's config. Exit 0 when nothing is a problem, else 1.
 */
export async function runDoctor(dataDir: string, json: boolean, env: NodeJS.ProcessEnv = process.env) {
  const findings = runtime();
  const nodeUrl = await store(dataDir, env, findings);
  await clients(dataDir, nodeUrl, env, findings);
  const problems = findings.filter((f) => f.state === 'problem').length;
  if (json) process.stdout.write(`${JSON.stringify({ ok: problems === 0, findings })}\n`);
  else {
    for (const f of findings) process.stdout.write(`${f.state.padEnd(7)} ${f.check}: ${f.detail}\n`);
    process.stdout.write(problems === 0 ? 'ready\n' : `${counted(problems, 'problem')}\n`);
  }
  return problems === 0 ? 0 : 1;
}
