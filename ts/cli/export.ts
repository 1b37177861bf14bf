import { resolve } from 'node:path';

import { EXPORT_MAX_BYTES } from '../protocol/knowledge.js';
import { isInside } from '../server/backup-file.js';
import { findRunningNode } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { counted } from './counted.js';
import { needStore } from './data-dir.js';
import { CliFailure, refused, refusedBy, usage } from './failure.js';
import { CLI_AGENT } from './import.js';
import { needAdmin, withheldWarning } from './node-view.js';
import { type Manifest, PackageError, writePackage } from './package.js';
import { openStore } from './store-owner.js';
import { userScope } from './user-scope.js';
import { needWritable } from './writable.js';

/** Arguments of `cairn export DIR`. */
export interface ExportArgs {
  dataDir: string;
  dir: string;
  json: boolean;
  user?: string | undefined;
  scopes?: string[] | undefined;
  /** Write a package even when the scope holds nothing (else that is refused: a typo'd name). */
  allowEmpty?: boolean | undefined;
}

/** Records a page (the verb's largest). */
const PAGE = 5000;

type Body = Record<string, unknown>;

type Page = { records: Body[]; next: string | null };

/**
 * The scope's records page by page from `page`, header first; the export header is left in
 * `seen`. When the pages held no record and withheld none, `empty` is awaited before the last
 * page ends (so before a package is finished): it may throw.
 */
async function* pagesOf(
  page: (cursor: string | undefined) => Promise<Page>,
  seen: { header?: Body },
  empty: () => Promise<void>,
): AsyncGenerator<Body[]> {
  let cursor: string | undefined;
  let records = 0;
  do {
    const p = await page(cursor);
    seen.header ??= p.records.find((r) => r.kind === 'header');
    records += p.records.filter((r) => r.kind !== 'header').length;
    yield p.records;
    cursor = p.next ?? undefined;
  } while (cursor !== undefined);
  const w = (seen.header?.withheld ?? {}) as { private_notes?: number; private_versions?: number };
  if (records === 0 && (w.private_notes ?? 0) === 0 && (w.private_versions ?? 0) === 0) await empty();
}

/**
 * The refusal of an export that found nothing (found by an audit: `--scope typo-scope` exported
 * "0 records", exit 0, and a nightly export's typo went unnoticed), naming the user's other scopes
 * from `status` (memory_status: only this user's, and through a node only those its token may
 * use), or none when it could not be asked.
 */
async function nothingToExport(user: string, scope: string, status: () => Promise<Body>): Promise<never> {
  let others: string[] | null = null;
  try {
    const listed = ((await status()).scopes ?? []) as { scope?: unknown }[];
    others = listed.map((s) => String(s.scope)).filter((s) => s !== scope);
  } catch {
    // The refusal is the point; without the list it still names the user and scope.
  }
  const where =
    others === null
      ? ''
      : others.length === 0
        ? ` nor in any other scope seen here (is --user right?)`
        : `; user ${user}'s other scopes: ${others.join(', ')} (--scope S)`;
  const message = `nothing to export: user ${user} has nothing in scope ${scope}${where}. --allow-empty writes the empty package anyway`;
  throw new CliFailure('NOT_FOUND', message, 1, [
    {
      field: '--scope',
      message: `user ${user} has nothing in scope ${scope}`,
      ...(others === null ? {} : { scopes: others }),
    },
  ]);
}

/**
 * `cairn export DIR [--user ID] [--scope S] [--allow-empty]`: a scope (default user and scope
 * `default`) as a Memory Package in DIR (`package.ts`), every agent's notes and private ones
 * included; a scope that holds nothing is refused (`nothingToExport`) unless `--allow-empty`. Through the
 * running node's `memory_export` with the admin token when a node holds the store (private notes
 * then follow the node's policy; the header counts any withheld), else on the store directly.
 */
export async function runExport(a: ExportArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if ((a.scopes?.length ?? 0) > 1) throw usage('--scope', 'give one scope');
  const { user, scope } = userScope(a.user ?? 'default', a.scopes?.[0] ?? 'default');
  const dir = resolve(a.dir);
  needStore(a.dataDir);
  if (isInside(dir, a.dataDir)) {
    // As for a backup: a copy there would keep what `compact --purge` erases from the store.
    const message = `${a.dir} is inside the data dir ${a.dataDir}: an export there keeps what \`compact --purge\` removes; choose a DIR outside it`;
    throw refused(message, 'DIR');
  }
  needWritable(dir, 'DIR', 'export');
  const node = findRunningNode(a.dataDir);
  try {
    const seen: { header?: Body } = {};
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
      const status = () =>
        adminCall(node, env.CAIRN_ADMIN_TOKEN, 'POST', '/v1/memory/status', { user_id: user, scope });
      const empty = () => (a.allowEmpty ? Promise.resolve() : nothingToExport(user, scope, status));
      manifest = await writePackage(dir, pagesOf(page, seen, empty), { user, scope });
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
        const status = async () => {
          const reply = await store.knowledge('status', caller, {});
          if (reply.error !== undefined) throw refusedBy(reply);
          return reply;
        };
        const empty = () => (a.allowEmpty ? Promise.resolve() : nothingToExport(user, scope, status));
        manifest = await writePackage(dir, pagesOf(page, seen, empty), { user, scope });
      } finally {
        await store.close();
      }
    }
    // The records stored, as the manifest counts them: the export header is not one.
    const records = manifest.files.reduce((n, f) => n + f.records, 0);
    const summary = { dir, records, withheld: seen.header?.withheld ?? null, manifest };
    process.stdout.write(
      a.json
        ? `${JSON.stringify(summary)}\n`
        : `exported ${counted(summary.records, 'record')} of ${user}/${scope} into ${dir}\n`,
    );
    // On the store directly every private note is exported; only a node may withhold some.
    const warning = node === null ? null : withheldWarning(summary.withheld, node, 'export');
    if (warning !== null) process.stderr.write(`cairn export: warning: ${warning}\n`);
    return 0;
  } catch (err) {
    // The package's own refusal (DIR not empty) is about what the user gave, not a fault.
    if (err instanceof PackageError)
      throw new CliFailure('VALIDATION_ERROR', err.message, 1, [{ field: 'DIR', message: err.message }]);
    throw err;
  }
}
