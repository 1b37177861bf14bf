import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** A config's MCP servers by name. */
export type Servers = Record<string, Record<string, unknown>>;

/**
 * MCP servers Claude Code reads in one project besides the user-level `mcpServers` of
 * `~/.claude.json` (what `cairn connect claude` writes): `where` names them for the report,
 * `remedy` says how to replace an entry there, `missing` the environment variables its values
 * use that are not set, `error` why the file does not parse.
 */
export interface ProjectServers {
  where: string;
  remedy: string;
  servers: Servers;
  missing: string[];
  error?: string;
}

/**
 * The project-level servers of Claude Code (found by QA: doctor saw only the user level, so a
 * Cairn entry added with `claude mcp add` was "not connected"): the local scope, kept in
 * `~/.claude.json` under `projects["/abs/path"].mcpServers`, and the project scope, a `.mcp.json`
 * at a project's root, looked for in `cwd` and in every project `~/.claude.json` knows. In a
 * project, a server of the same name there is used instead of the user-level one.
 */
export function claudeProjectServers(doc: unknown, cwd: string, env: NodeJS.ProcessEnv): ProjectServers[] {
  const projects = objectOr((doc as { projects?: unknown } | null)?.projects);
  const out: ProjectServers[] = [];
  for (const [path, project] of Object.entries(projects)) {
    const servers = objectOr((project as { mcpServers?: unknown } | null)?.mcpServers) as Servers;
    if (Object.keys(servers).length === 0) continue;
    const remedy = `remove it there (\`claude mcp remove NAME -s local\`, run in ${path}), and the user-level entry \`cairn connect claude\` writes applies`;
    out.push({ where: `project ${path}`, remedy, servers, missing: [] });
  }
  for (const dir of new Set([resolve(cwd), ...Object.keys(projects)])) {
    const file = join(dir, '.mcp.json');
    if (!existsSync(file)) continue;
    const remedy = `replace it in ${file} (\`cairn connect claude --config ${file} --force\`; a committed file shares its token: give it as \${CAIRN_TOKEN} there)`;
    try {
      const missing = new Set<string>();
      const servers = expand(objectOr(JSON.parse(readFileSync(file, 'utf8')).mcpServers), env, missing) as Servers;
      out.push({ where: file, remedy, servers, missing: [...missing] });
    } catch (err) {
      out.push({ where: file, remedy, servers: {}, missing: [], error: String(err) });
    }
  }
  return out;
}

export function objectOr(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * `value` with `${VAR}` and `${VAR:-default}` in its strings replaced from `env`, as Claude Code
 * does when it reads a `.mcp.json` (which is often committed, so tokens are given that way); the
 * names of variables that are unset and have no default are added to `missing`.
 */
function expand(value: unknown, env: NodeJS.ProcessEnv, missing: Set<string>): unknown {
  return eachString(value, (text) =>
    text.replace(/\$\{([^}:]+)(?::-([^}]*))?\}/g, (whole, name: string, fallback: string | undefined) => {
      const set = env[name];
      if (set !== undefined && set !== '') return set;
      if (fallback !== undefined) return fallback;
      missing.add(name);
      return whole;
    }),
  );
}

/** `value` with `f` applied to every string in it, however deep. */
export function eachString(value: unknown, f: (text: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => eachString(v, f));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, eachString(v, f)]));
  }
  return value;
}
