import { existsSync } from 'node:fs';

import { type CheckReport, Store } from '../engine/store.js';
import { findRunningNode } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { asFailure, CliFailure } from './failure.js';

/** Exit codes of `cairn check`: clean, problems found, could not check. */
export const EXIT_OK = 0;
export const EXIT_PROBLEMS = 1;
export const EXIT_FAILED = 2;

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
  const store = await Store.open(dataDir);
  try {
    return await store.check();
  } finally {
    await store.close();
  }
}

/**
 * Runs the integrity checker on the store in `dataDir` (through the node that holds it, if one
 * runs: DESIGN.md §4) and renders its report, as text or (with `json`) as one JSON object. Never
 * creates a store that is not there. Throws a CliFailure (exit 2) when it could not check.
 */
export async function runCheck(dataDir: string, json: boolean): Promise<CheckOutcome> {
  if (!existsSync(dataDir)) {
    throw new CliFailure('NOT_FOUND', `no store at ${dataDir}`, EXIT_FAILED);
  }
  let report: CheckReport;
  try {
    report = await checkReport(dataDir);
  } catch (err) {
    throw asFailure(err, EXIT_FAILED);
  }
  const exitCode = report.ok ? EXIT_OK : EXIT_PROBLEMS;
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
