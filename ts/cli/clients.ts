import { isAbsolute, join } from 'node:path';

import { usage } from './failure.js';
import { homeDir } from './home.js';

/** The MCP clients `cairn connect` configures (DESIGN.md §4). */
export const CLIENTS = ['claude', 'codex', 'cursor', 'claude-desktop', 'trae'] as const;
export type ClientName = (typeof CLIENTS)[number];

/**
 * How a client reaches the node: `http` talks to the node's `/v1/mcp` with the token in an
 * `Authorization` header; `stdio` starts `cairn mcp`, which forwards to the node (starting one when
 * none runs) with the token from `CAIRN_TOKEN`. Clients that take HTTP with headers get HTTP;
 * the others, and Codex (which refuses an inline bearer token in its file), get stdio.
 */
export type Transport = 'http' | 'stdio';

export interface ClientSpec {
  name: ClientName;
  /** The user-level config file the client reads its MCP servers from. */
  file: string;
  format: 'json' | 'toml';
  transport: Transport;
  /** How the client shapes an HTTP entry (Claude Code wants `type: "http"`). */
  httpType?: string;
}

/**
 * A directory setting as clients read it: unset when empty or relative, as the XDG Base Directory
 * specification says of its variables (a relative one would put a token under the current directory).
 */
function absoluteSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value !== undefined && isAbsolute(value) ? value : undefined;
}

/** Where per-user application config lives on this platform (XDG on Linux). */
function appConfigDir(env: NodeJS.ProcessEnv, home: () => string): string {
  if (process.platform === 'darwin') return join(home(), 'Library', 'Application Support');
  if (process.platform === 'win32') return absoluteSetting(env, 'APPDATA') ?? join(home(), 'AppData', 'Roaming');
  return absoluteSetting(env, 'XDG_CONFIG_HOME') ?? join(home(), '.config');
}

/**
 * The spec of `name` for the user whose home is `$HOME`, its file `config` when one is given
 * (`--config`). Refuses (exit 2, naming the setting) when the file would not be an absolute path:
 * an empty or relative HOME with no absolute setting to use instead, or a relative CODEX_HOME
 * (Codex resolves it from wherever it starts).
 */
export function clientSpec(name: ClientName, env: NodeJS.ProcessEnv = process.env, config?: string): ClientSpec {
  const home = () => homeDir(env, 'give the file with --config');
  switch (name) {
    case 'claude': {
      const file = config ?? join(home(), '.claude.json');
      return { name, file, format: 'json', transport: 'http', httpType: 'http' };
    }
    case 'cursor':
      return { name, file: config ?? join(home(), '.cursor', 'mcp.json'), format: 'json', transport: 'http' };
    case 'claude-desktop': {
      const file = config ?? join(appConfigDir(env, home), 'Claude', 'claude_desktop_config.json');
      return { name, file, format: 'json', transport: 'stdio' };
    }
    case 'trae': {
      const file = config ?? join(appConfigDir(env, home), 'Trae', 'User', 'mcp.json');
      return { name, file, format: 'json', transport: 'stdio' };
    }
    case 'codex':
      return { name, file: config ?? join(codexHome(env, home), 'config.toml'), format: 'toml', transport: 'stdio' };
  }
}

/** Codex's home: `CODEX_HOME` (empty is unset), else `~/.codex`. */
function codexHome(env: NodeJS.ProcessEnv, home: () => string): string {
  const dir = env.CODEX_HOME;
  if (dir === undefined || dir === '') return join(home(), '.codex');
  if (!isAbsolute(dir)) {
    throw usage(
      'CODEX_HOME',
      `must be an absolute path, got ${JSON.stringify(dir)}: set it, or give the file with --config`,
    );
  }
  return dir;
}

/** What `cairn connect` puts under the server's name. */
export type Entry =
  | { kind: 'http'; url: string; token: string; httpType?: string | undefined }
  | { kind: 'stdio'; command: string; args: string[]; token: string };

/** The entry as the client's JSON config spells it. */
export function jsonEntry(e: Entry): Record<string, unknown> {
  if (e.kind === 'http') {
    return {
      ...(e.httpType === undefined ? {} : { type: e.httpType }),
      url: e.url,
      headers: { Authorization: `Bearer ${e.token}` },
    };
  }
  return { command: e.command, args: e.args, env: { CAIRN_TOKEN: e.token } };
}

/** The entry as a TOML table `[mcp_servers.NAME]` (Codex). JSON strings are valid TOML strings. */
export function tomlEntry(name: string, e: Entry & { kind: 'stdio' }): string {
  const s = (v: string) => JSON.stringify(v);
  return [
    `[mcp_servers.${s(name)}]`,
    `command = ${s(e.command)}`,
    `args = [${e.args.map(s).join(', ')}]`,
    `env = { CAIRN_TOKEN = ${s(e.token)} }`,
    '',
  ].join('\n');
}
