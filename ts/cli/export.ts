import { resolve } from 'node:path';

import { Store } from '../engine/store.js';
import { findRunningNode } from '../server/node.js';
import { adminCall } from './admin-client.js';
import { CLI_AGENT } from './import.js';
import { stored, writePackage } from './package.js';
import { userScopeProblem } from './user-scope.js';

/** Arguments of `cairn export DIR`. */
export interface ExportArgs {
  dataDir: string;
  dir: string;
  json: boolean;
  user?: string | undefined;
  scopes?: string[] | undefined;
}

/** Records a page (the verb's largest). */
const PAGE = 5000;

type Page = { records: Record<string, unknown>[]; next: string | null };

function fail(message: string, code = 1): number {
  process.stderr.write(`cairn export: ${message}\n`);
  return code;
}

/** Every record of the scope, header first, page by page from `page`. */
async function allRecords(page: (cursor: string | undefined) => Promise<Page>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    // Each page repeats the header; the package keeps the first.
    out.push(...p.records.filter((r) => r.kind !== 'header' || out.length === 0));
    cursor = p.next ?? undefined;
  } while (cursor !== undefined);
  return out;
}

/**
 * `cairn export DIR [--user ID] [--scope S]`: a scope (default user and scope `default`) as a
 * Memory Package in DIR (`package.ts`), every agent's notes and private ones included. Through the
 * running node's `memory_export` with the admin token when a node holds the store (private notes
 * then follow the node's policy; the header counts any withheld), else on the store directly.
 */
export async function runExport(a: ExportArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if ((a.scopes?.length ?? 0) > 1) return fail('--scope: give one scope', 2);
  const user = a.user ?? 'default';
  const scope = a.scopes?.[0] ?? 'default';
  const problem = userScopeProblem(user, scope);
  if (problem !== null) return fail(problem, 2);
  const dir = resolve(a.dir);
  try {
    const node = findRunningNode(a.dataDir);
    let records: Record<string, unknown>[];
    if (node !== null) {
      records = await allRecords(
        async (cursor) =>
          (await adminCall(node, env.CAIRN_ADMIN_TOKEN, 'POST', '/v1/memory/export', {
            user_id: user,
            scope,
            limit: PAGE,
            includePrivate: true,
            ...(cursor === undefined ? {} : { cursor }),
          })) as unknown as Page,
      );
    } else {
      const store = await Store.open(a.dataDir);
      try {
        const caller = { tenant: 'local', user, scope, agent: CLI_AGENT };
        records = await allRecords(async (cursor) => {
          const body = { limit: PAGE, allAgents: true, allowPrivate: true, includePrivate: true, cursor };
          const reply = await store.knowledge('export', caller, body);
          if (reply.error !== undefined) throw new Error(JSON.stringify(reply.error));
          return reply as unknown as Page;
        });
      } finally {
        await store.close();
      }
    }
    const manifest = writePackage(dir, records, { user, scope });
    const header = records[0] ?? {};
    // The records stored, as the manifest counts them: the export header is not one.
    const summary = { dir, records: stored(records), withheld: header.withheld ?? null, manifest };
    process.stdout.write(
      a.json ? `${JSON.stringify(summary)}\n` : `exported ${summary.records} records of ${user}/${scope} into ${dir}\n`,
    );
    return 0;
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
}
