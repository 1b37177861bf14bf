import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

import { expect, it } from 'vitest';

import { nodeSupported, SUPPORTED_NODE } from '../ts/cli/node-version.js';
import { CLI, reportingVersion } from './helpers.js';

// The Node.js versions Cairn runs on: one rule (ts/cli/node-version.ts), the one package.json's
// engines states, and the one `cairn doctor` and the installer check. Node 22.0 ran the node but
// failed every PDF document 500 INTERNAL (pdfjs-dist needs process.getBuiltinModule), while
// engines, doctor and the installer all said "20 or later".

it('states in package.json the versions the rule accepts', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    engines: { node: string };
  };
  expect(pkg.engines.node).toBe(SUPPORTED_NODE);
  const accepted = ['20.19.0', '20.20.2', '22.13.0', '22.23.3', '24.1.0', '25.0.0'];
  const refused = ['18.20.4', '20.0.0', '20.18.3', '21.7.3', '22.0.0', '22.12.0', 'not a version'];
  expect(accepted.filter((v) => !nodeSupported(v))).toEqual([]);
  expect(refused.filter(nodeSupported)).toEqual([]);
});

it('cairn doctor reports a Node 22 before 22.13 as a problem, and this Node as ok', async () => {
  const nodeFinding = async (preload: string[]) => {
    const r = await promisify(execFile)(process.execPath, [...preload, CLI, 'doctor', '--json']).catch(
      (err: { stdout: string }) => err,
    );
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      findings: { check: string; state: string; detail: string }[];
    };
    return { ok: report.ok, node: report.findings.find((f) => f.check === 'node.js') };
  };
  const old = await nodeFinding(['--import', reportingVersion('22.0.0')]);
  expect(old.ok).toBe(false);
  expect(old.node).toEqual({
    check: 'node.js',
    state: 'problem',
    detail: 'Node 22.0.0; Cairn needs Node.js 20.19 or a later 20, or 22.13 or later',
  });
  const current = await nodeFinding([]);
  expect(current.node).toEqual({ check: 'node.js', state: 'ok', detail: `Node ${process.versions.node}` });
});
