import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { eachString, objectOr, type ProjectServers, type Servers } from './doctor-claude.js';

/**
 * Cursor's project-level servers: a `.cursor/mcp.json` in the project's folder, which Cursor
 * reads besides the user's `~/.cursor/mcp.json` (what `cairn connect cursor` writes). Looked for
 * in `cwd` and each folder above it (doctor is run from somewhere inside the project), but not
 * the user-level file itself (`userFile`). Found by QA: doctor saw only the user level, so a
 * Cairn entry committed with a project said "not connected".
 */
export function cursorProjectServers(cwd: string, userFile: string, env: NodeJS.ProcessEnv): ProjectServers[] {
  const out: ProjectServers[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = join(dir, '.cursor', 'mcp.json');
    if (file !== resolve(userFile) && existsSync(file)) {
      const remedy = `replace it in ${file} (\`cairn connect cursor --config ${file} --force\`; a committed file shares its token: give it as \${env:CAIRN_TOKEN} there)`;
      try {
        const missing = new Set<string>();
        const servers = objectOr(JSON.parse(readFileSync(file, 'utf8')).mcpServers);
        out.push({
          where: file,
          remedy,
          servers: expand(servers, dir, env, missing) as Servers,
          missing: [...missing],
        });
      } catch (err) {
        out.push({ where: file, remedy, servers: {}, missing: [], error: String(err) });
      }
    }
    if (dirname(dir) === dir) return out;
  }
}

/**
 * `value` with Cursor's variables in its strings replaced as Cursor does: `${env:NAME}` from
 * `env` (an unset one added to `missing`), `${userHome}`, and `${workspaceFolder}` (the folder
 * holding `.cursor`).
 */
function expand(value: unknown, folder: string, env: NodeJS.ProcessEnv, missing: Set<string>): unknown {
  return eachString(value, (text) =>
    text.replace(/\$\{(env:([^}]+)|userHome|workspaceFolder)\}/g, (whole, what: string, name: string | undefined) => {
      if (what === 'userHome') return env.HOME ?? whole;
      if (what === 'workspaceFolder') return folder;
      const set = env[name as string];
      if (set !== undefined && set !== '') return set;
      missing.add(`env:${name}`);
      return whole;
    }),
  );
}
