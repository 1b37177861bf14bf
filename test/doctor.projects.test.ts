import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { CLI, cairn, tempDir } from './helpers.js';

// Claude Code reads MCP servers at three levels: the user's (`mcpServers` of ~/.claude.json, what
// `cairn connect claude` writes), a project's local one (`projects["/abs/path"].mcpServers` of the
// same file, `claude mcp add`'s default) and a project's `.mcp.json`. Doctor finds a Cairn entry
// at each, says where it is, and checks it as it checks the user-level one. Cursor reads a
// project's `.cursor/mcp.json` besides ~/.cursor/mcp.json: the same.

const ADMIN = 'cairn_doctor-projects-admin-0123456789abcdef';
let root: string;
let cleanup: () => Promise<void>;
let env: NodeJS.ProcessEnv;
let data: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('doctor-projects'));
  data = join(root, 'data');
  env = { HOME: join(root, 'home'), XDG_CONFIG_HOME: join(root, 'home', '.config'), CODEX_HOME: join(root, 'codex') };
  mkdirSync(join(root, 'home'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

const run = (args: string[], extra: NodeJS.ProcessEnv = {}, cwd?: string) =>
  cairn([...args, '--data-dir', data], { ...env, ...extra }, cwd);

/** A node on the store, and its URL. */
async function serve(): Promise<string> {
  expect((await run(['init'], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, ...env, CAIRN_LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  return (JSON.parse(readFileSync(join(data, 'node.json'), 'utf8')) as { url: string }).url;
}

async function agentToken(agent: string): Promise<{ token: string; id: string }> {
  const r = await run(['token', 'create', '--agent', agent, '--json'], { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { token: string; id: string };
}

const http = (url: string, auth: string) => ({ type: 'http', url: `${url}/v1/mcp`, headers: { Authorization: auth } });

it("finds a project's local and .mcp.json entries, says where each is, and tries their tokens", async () => {
  const url = await serve();
  const local = await agentToken('claude-local');
  const shared = await agentToken('claude-shared');
  const project = join(root, 'app');
  mkdirSync(project);
  // No user-level entry: Claude Code is connected in this project only.
  const claudeJson = { projects: { [project]: { mcpServers: { mem: http(url, `Bearer ${local.token}`) } } } };
  writeFileSync(join(env.HOME as string, '.claude.json'), JSON.stringify(claudeJson));
  // A committed .mcp.json gives the token from the environment, as Claude Code expands it.
  writeFileSync(
    join(project, '.mcp.json'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own syntax, which it expands
    JSON.stringify({ mcpServers: { cairn: http(url, 'Bearer ${CAIRN_TOKEN}') } }),
  );

  const r = await run(['doctor'], { CAIRN_TOKEN: shared.token, CAIRN_ADMIN_TOKEN: ADMIN });
  expect(r.stdout).toMatch(/note\s+client claude: no user-level cairn server in .*; its projects' entries follow/);
  expect(r.stdout).toMatch(new RegExp(`ok\\s+client claude \\(mem\\), project ${project}: .* as agent claude-local`));
  expect(r.stdout).toMatch(new RegExp(`ok\\s+client claude, ${project}/\\.mcp\\.json: .* as agent claude-shared`));
  expect(r.code, r.stdout).toBe(0);

  // The local entry's token revoked, the .mcp.json's variable unset: each a problem, said where to fix it.
  expect((await run(['token', 'revoke', local.id], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  const broken = await run(['doctor'], { CAIRN_TOKEN: undefined, CAIRN_ADMIN_TOKEN: ADMIN });
  expect(broken.code).toBe(1);
  expect(broken.stdout).toMatch(
    new RegExp(
      `problem\\s+client claude \\(mem\\), project ${project}: .*refuses its token.*claude mcp remove mem -s local`,
    ),
  );
  expect(broken.stdout).toMatch(
    new RegExp(`problem\\s+client claude, ${project}/\\.mcp\\.json: it uses \\$\\{CAIRN_TOKEN\\}, not set here`),
  );
});

it('.mcp.json in the directory doctor runs in is found though ~/.claude.json knows no such project', async () => {
  const url = await serve();
  const { token } = await agentToken('claude-here');
  const here = join(root, 'here');
  mkdirSync(here);
  writeFileSync(join(here, '.mcp.json'), JSON.stringify({ mcpServers: { cairn: http(url, `Bearer ${token}`) } }));
  const r = await run(['doctor'], { CAIRN_ADMIN_TOKEN: ADMIN }, here);
  expect(r.stdout).toMatch(new RegExp(`ok\\s+client claude, ${here}/\\.mcp\\.json: .* as agent claude-here`));
  expect(r.stdout).not.toMatch(/client claude: not connected/);
});

it('a .mcp.json entry using a variable not set here is a problem, even with no node to try it at', async () => {
  expect((await run(['init'], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  const here = join(root, 'here');
  mkdirSync(here);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own syntax, which it expands
  const stdio = { command: process.execPath, args: [CLI, 'mcp', '--data-dir', data], env: { CAIRN_TOKEN: '${TOKEN}' } };
  writeFileSync(join(here, '.mcp.json'), JSON.stringify({ mcpServers: { cairn: stdio } }));
  const unset = await run(['doctor'], { TOKEN: undefined }, here);
  expect(unset.code).toBe(1);
  expect(unset.stdout).toMatch(/problem\s+client claude, .*\.mcp\.json: it uses \$\{TOKEN\}, not set here/);
  const { token } = JSON.parse((await run(['token', 'create', '--agent', 'claude', '--json'])).stdout) as {
    token: string;
  };
  const set = await run(['doctor'], { TOKEN: token }, here);
  expect(set.stdout).toMatch(/ok\s+client claude, .*\.mcp\.json: stdio: .*its token is tried once a node runs/);
});

it("finds Cursor's .cursor/mcp.json in the folder doctor runs in or above it, and expands its env variables", async () => {
  const url = await serve();
  const { token } = await agentToken('cursor-project');
  const project = join(root, 'app');
  const deeper = join(project, 'src', 'lib');
  mkdirSync(join(project, '.cursor'), { recursive: true });
  mkdirSync(deeper, { recursive: true });
  writeFileSync(
    join(project, '.cursor', 'mcp.json'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Cursor's own syntax, which it expands
    JSON.stringify({ mcpServers: { cairn: http(url, 'Bearer ${env:CAIRN_TOKEN}') } }),
  );
  const file = join(project, '.cursor', 'mcp.json').replace(/[.]/g, '\\.');

  const r = await run(['doctor'], { CAIRN_TOKEN: token, CAIRN_ADMIN_TOKEN: ADMIN }, deeper);
  expect(r.stdout).toMatch(/note\s+client cursor: no user-level cairn server in .*; its projects' entries follow/);
  expect(r.stdout).toMatch(new RegExp(`ok\\s+client cursor, ${file}: .* as agent cursor-project`));

  const unset = await run(['doctor'], { CAIRN_TOKEN: undefined, CAIRN_ADMIN_TOKEN: ADMIN }, deeper);
  expect(unset.code).toBe(1);
  expect(unset.stdout).toMatch(
    new RegExp(
      `problem\\s+client cursor, ${file}: it uses \\$\\{env:CAIRN_TOKEN\\}, not set here \\(set it where Cursor starts\\)`,
    ),
  );
});
