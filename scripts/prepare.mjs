// What `prepare` runs. `npm install` in a checkout builds the native addon and the TypeScript.
// `npx cairn` in a checkout makes npm install the checkout into its own cache (`~/.npm/_npx/`,
// npm_command "exec"), which runs `prepare` again: a whole build there printed nothing for
// 20–40 s, and one interrupted left npm's cache entry broken (every later `npx cairn` failed
// with ENOENT). There a build already made is used as it is; `npm run build` rebuilds it.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const built =
  existsSync(new URL('dist/cli/main.js', root)) &&
  readdirSync(new URL('ts/native/', root)).some((f) => f.endsWith('.node'));

if (process.env.npm_command === 'exec' && built) process.exit(0);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
if (run.error) {
  console.error(`prepare: could not run \`npm run build\`: ${run.error.message}`);
  process.exit(1);
}
process.exit(run.status ?? 1);
