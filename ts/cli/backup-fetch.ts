import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import type { BackupReport } from '../engine/store.js';
import { makeDirs } from '../server/make-dirs.js';
import type { NodeFile } from '../server/node-file.js';
import { watchedRequest } from './admin-client.js';
import { claimDest, installBackup, partialName } from './backup-dest.js';
import { CliFailure, refusedBy } from './failure.js';

/** What the node says of the backup it sends (`x-cairn-backup`). */
interface Sent {
  txn: string;
  pages: number;
  bytes: number;
  sha256: string;
}

/**
 * Takes an online backup from the running node (`POST /v1/admin/database/backup/file`, which
 * answers the copy's data file as the body) and writes it to `dest` as this process, so the
 * backup lands where the operator asked and can see it, whatever sandbox the node runs in (a
 * service's private /tmp, a read-only file system). The file is written under a name of this
 * run's own (`backup-dest.ts`: a dead run's leftover does not block it, a live run's is refused),
 * its size and sha256 checked against what the node said, synced, then installed: a `data.cairn`
 * in `dest` is a complete, durable copy. On any failure what this run wrote is removed (and
 * `dest`, when this made it and nothing else is in it). Throws CliFailures without an exit code,
 * as `adminCall` does.
 */
export async function backupFromNode(
  node: NodeFile,
  token: string | undefined,
  dest: string,
): Promise<BackupReport & { dest: string; sha256: string }> {
  const watch = watchedRequest(node, token);
  const made = !existsSync(dest);
  const partial = join(dest, partialName());
  let fd: number | null = null;
  let created = false;
  try {
    // DEST is claimed before the node is asked: a refusal comes at once, not after the transfer.
    makeDirs(dest, 0o700);
    claimDest(dest);
    fd = openSync(partial, 'wx', 0o600);
    created = true;
    const res = await fetch(`${node.url}/v1/admin/database/backup/file`, {
      method: 'POST',
      headers: { authorization: `Bearer ${watch.token}` },
      signal: watch.signal,
    });
    if (!res.ok) throw refusedBy(await res.json().catch(() => null), res.status, node.url);
    const sent = JSON.parse(res.headers.get('x-cairn-backup') ?? 'null') as Sent | null;
    if (sent === null || res.body === null) {
      throw new CliFailure('INTERNAL', `the node at ${node.url} sent a backup without saying what it holds`);
    }
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of res.body) {
      hash.update(chunk);
      for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at);
      bytes += chunk.length;
    }
    const sha256 = hash.digest('hex');
    if (bytes !== sent.bytes || sha256 !== sent.sha256) {
      throw new CliFailure(
        'INTERNAL',
        `the backup from ${node.url} arrived incomplete or changed (${bytes} of ${sent.bytes} bytes); nothing was kept`,
      );
    }
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    installBackup(partial, dest);
    return { dest, txn: sent.txn, pages: sent.pages, bytes: sent.bytes, sha256 };
  } catch (err) {
    if (fd !== null) closeSync(fd);
    if (created) rmSync(partial, { force: true });
    if (made) removeIfEmpty(dest);
    if (err instanceof CliFailure) throw err;
    // This process could not write DEST (a full disk, a quota; its permissions are checked before
    // this runs): said as an offline backup says it, naming DEST.
    if ((err as NodeJS.ErrnoException).syscall !== undefined) {
      const message = (err as Error).message;
      throw new CliFailure('INTERNAL', `backing up into ${dest}: ${message}`, undefined, [{ field: 'DEST', message }]);
    }
    throw watch.unanswered(err);
  } finally {
    watch.stop();
  }
}

/** Removes `dest` when it is empty: made by this run, unless another run's file is in it now. */
function removeIfEmpty(dest: string): void {
  try {
    rmdirSync(dest);
  } catch {
    // Gone already, or it holds another run's file.
  }
}
