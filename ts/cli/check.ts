import { ReadOnlyStore } from '../engine/read-only-store.js';
import type { CheckReport } from '../engine/store.js';
import { findRunningNode } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { needStore } from './data-dir.js';
import { asFailure, EXIT_FAILED, EXIT_OK } from './failure.js';

/** What `cairn check` prints and the code it exits with. */
export interface CheckOutcome {
  exitCode: number;
  stdout: string;
}

/**
 * The report of the store in `dataDir`: from the node that holds it, else of the store opened
 * read-only (`checkDir`).
 */
async function checkReport(dataDir: string): Promise<CheckReport> {
  const node = findRunningNode(dataDir);
  if (node !== null) {
    return (await adminCall(node, process.env.CAIRN_ADMIN_TOKEN, 'GET', '/v1/admin/check')) as unknown as CheckReport;
  }
  return checkDir(dataDir);
}

/**
 * Checks the store in `dataDir`, which no node holds, opened read-only: the check changes nothing
 * there (no `LOCK` or log made, no file written; the log's records past the last checkpoint are
 * replayed in memory), so a backup, a copy, a read-only mount or a data dir this user may only
 * read is checked as it is. Refused (`STORE_LOCKED`) while another process holds the store.
 */
export async function checkDir(dataDir: string): Promise<CheckReport> {
  const store = await ReadOnlyStore.open(dataDir);
  try {
    return await store.check();
  } finally {
    await store.close();
  }
}

/**
 * Runs the integrity checker on the store in `dataDir` (through the node that holds it, if one
 * runs: DESIGN.md §4) and renders its report, as text or (with `json`) as one JSON object. Never
 * creates a store that is not there, nor changes one that is (`checkDir`). Throws a CliFailure (exit 1, as problems found: 2 is kept
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
