import type { CheckReport } from '../engine/store.js';
import { findRunningNode } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { needStore } from './data-dir.js';
import { asFailure, EXIT_FAILED, EXIT_OK } from './failure.js';
import { openStore } from './store-owner.js';

/** What `cairn check` prints and the code it exits with. */
export interface CheckOutcome {
  exitCode: number;
  stdout: string;
}

/** The report of the store in `dataDir`: from the node that holds it, else by opening it. */
async function checkReport(dataDir: string): Promise<CheckReport> {
  const node = findRunningNode(dataDir);
  if (node !== null) {
    return (await adminCall(node, process.env.CAIRN_ADMIN_TOKEN, 'GET', '/v1/admin/check')) as unknown as CheckReport;
  }
  const store = await openStore(dataDir);
  try {
    return await store.check();
  } finally {
    await store.close();
  }
}

/**
 * Runs the integrity checker on the store in `dataDir` (through the node that holds it, if one
 * runs: DESIGN.md §4) and renders its report, as text or (with `json`) as one JSON object. Never
 * creates a store that is not there. Throws a CliFailure (exit 1, as problems found: 2 is kept
 * for bad usage) when it could not check: no store, no or a refused admin token, a store held.
 */
export async function runCheck(dataDir: string, json: boolean): Promise<CheckOutcome> {
  let report: CheckReport;
  try {
    needStore(dataDir);
    report = await checkReport(dataDir);
  } catch (err) {
    throw asFailure(err);
  }
  // Problems found exit 1, as a failed check does (docs/operations.md).
  const exitCode = report.ok ? EXIT_OK : EXIT_FAILED;
  const stdout = json ? `${JSON.stringify({ dataDir, ...report })}\n` : renderReport(dataDir, report);
  return { exitCode, stdout };
}

/** The report as a few lines a person reads. */
export function renderReport(dataDir: string, r: CheckReport): string {
  const lines = [
    `${r.ok ? 'ok' : 'PROBLEMS'}: ${dataDir} at transaction ${r.txn}`,
    `pages: ${r.pagesTotal} total, ${r.pagesReachable} reachable, ${r.pagesFree} free`,
    `trees: ${r.trees.length === 0 ? '(none)' : r.trees.map((t) => `${t.name} (${t.entries})`).join(', ')}`,
  ];
  for (const p of r.problems) {
    const where = [p.tree === undefined ? '' : `tree ${p.tree}`, p.page === undefined ? '' : `page ${p.page}`]
      .filter(Boolean)
      .join(', ');
    lines.push(`problem${where ? ` (${where})` : ''}: ${p.what}`);
  }
  return `${lines.join('\n')}\n`;
}
