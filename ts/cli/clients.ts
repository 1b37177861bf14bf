import { homedir } from 'node:os';
import { join } from 'node:path';

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

/** Where per-user application config lives on this platform (XDG on Linux). */
function appConfigDir(env: NodeJS.ProcessEnv, home: string): string {
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support');
  if (process.platform === 'win32') return env.APPDATA ?? join(home, 'AppData', 'Roaming');
  return env.XDG_CONFIG_HOME ?? join(home, '.config');
}

/** The spec of `name` for the user whose home is `$HOME`. */
export function clientSpec(name: ClientName, env: NodeJS.ProcessEnv = process.env): ClientSpec {
  const home = env.HOME ?? homedir();
  const app = appConfigDir(env, home);
  switch (name) {
    case 'claude':
      return { name, file: join(home, '.claude.json'), format: 'json', transport: 'http', httpType: 'http' };
    case 'cursor':
      return { name, file: join(home, '.cursor', 'mcp.json'), format: 'json', transport: 'http' };
    case 'claude-desktop':
      return { name, file: join(app, 'Claude', 'claude_desktop_config.json'), format: 'json', transport: 'stdio' };
    case 'trae':
      return { name, file: join(app, 'Trae', 'User', 'mcp.json'), format: 'json', transport: 'stdio' };
    case 'codex':
      return {
        name,
        file: join(env.CODEX_HOME ?? join(home, '.codex'), 'config.toml'),
        format: 'toml',
        transport: 'stdio',
      };
  }
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
