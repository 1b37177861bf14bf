import { resolve } from 'node:path';

import { EXPORT_MAX_BYTES } from '../protocol/knowledge.js';
import { findRunningNode } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { needStore } from './data-dir.js';
import { CliFailure, refusedBy, usage } from './failure.js';
import { CLI_AGENT } from './import.js';
import { needAdmin, withheldWarning } from './node-view.js';
import { type Manifest, PackageError, writePackage } from './package.js';
import { openStore } from './store-owner.js';
import { userScope } from './user-scope.js';

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

/** The scope's records page by page from `page`, header first; the export header is left in `seen`. */
async function* pagesOf(
  page: (cursor: string | undefined) => Promise<Page>,
  seen: { header?: Record<string, unknown> },
): AsyncGenerator<Record<string, unknown>[]> {
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    seen.header ??= p.records.find((r) => r.kind === 'header');
    yield p.records;
    cursor = p.next ?? undefined;
  } while (cursor !== undefined);
}

/**
 * `cairn export DIR [--user ID] [--scope S]`: a scope (default user and scope `default`) as a
 * Memory Package in DIR (`package.ts`), every agent's notes and private ones included. Through the
 * running node's `memory_export` with the admin token when a node holds the store (private notes
 * then follow the node's policy; the header counts any withheld), else on the store directly.
 */
export async function runExport(a: ExportArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if ((a.scopes?.length ?? 0) > 1) throw usage('--scope', 'give one scope');
  const { user, scope } = userScope(a.user ?? 'default', a.scopes?.[0] ?? 'default');
  const dir = resolve(a.dir);
  needStore(a.dataDir);
  const node = findRunningNode(a.dataDir);
  try {
    const seen: { header?: Record<string, unknown> } = {};
    let manifest: Manifest;
    if (node !== null) {
      await needAdmin(node, env.CAIRN_ADMIN_TOKEN, 'an export');
      const page = async (cursor: string | undefined) =>
        (await adminCall(node, env.CAIRN_ADMIN_TOKEN, 'POST', '/v1/memory/export', {
          user_id: user,
          scope,
          limit: PAGE,
          maxBytes: EXPORT_MAX_BYTES,
          includePrivate: true,
          ...(cursor === undefined ? {} : { cursor }),
        })) as unknown as Page;
      manifest = await writePackage(dir, pagesOf(page, seen), { user, scope });
    } else {
      const store = await openStore(a.dataDir);
      try {
        const caller = { tenant: 'local', user, scope, agent: CLI_AGENT };
        const page = async (cursor: string | undefined) => {
          const body = { limit: PAGE, allAgents: true, allowPrivate: true, includePrivate: true, cursor };
          const reply = await store.knowledge('export', caller, body);
          if (reply.error !== undefined) throw refusedBy(reply);
          return reply as unknown as Page;
        };
        manifest = await writePackage(dir, pagesOf(page, seen), { user, scope });
      } finally {
        await store.close();
      }
    }
    // The records stored, as the manifest counts them: the export header is not one.
    const records = manifest.files.reduce((n, f) => n + f.records, 0);
    const summary = { dir, records, withheld: seen.header?.withheld ?? null, manifest };
    process.stdout.write(
      a.json ? `${JSON.stringify(summary)}\n` : `exported ${summary.records} records of ${user}/${scope} into ${dir}\n`,
    );
    // On the store directly every private note is exported; only a node may withhold some.
    const warning = node === null ? null : withheldWarning(summary.withheld, node, 'export');
    if (warning !== null) process.stderr.write(`cairn export: warning: ${warning}\n`);
    return 0;
  } catch (err) {
    // The package's own refusal (DIR not empty) is about what the user gave, not a fault.
    if (err instanceof PackageError) throw new CliFailure('VALIDATION_ERROR', err.message, 1, [{ field: 'DIR' }]);
    throw err;
  }
}
