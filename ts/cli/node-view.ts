import type { NodeFile } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { counted } from './counted.js';
import { CliFailure, EXIT_FAILED } from './failure.js';

// What a command that reads the store through a running node may not see, said so that a partial
// view never passes for the whole store.

/**
 * Refuses a `CAIRN_ADMIN_TOKEN` that is not an admin's: through the node `what` would read only
 * what that agent may (no other agent's agent-only notes), and look whole when it is not.
 */
export async function needAdmin(node: NodeFile, token: string | undefined, what: string): Promise<void> {
  const who = await adminCall(node, token, 'GET', '/v1/whoami');
  if (who.role === 'admin') return;
  const message = `CAIRN_ADMIN_TOKEN is agent ${String(who.agent)}'s token (role ${String(who.role)}), which reads only what that agent may: ${what} needs an admin token (cairn token create --agent NAME --role admin)`;
  // Said as the node's own refusals are, code first.
  throw new CliFailure(
    'FORBIDDEN',
    message,
    EXIT_FAILED,
    [{ field: 'CAIRN_ADMIN_TOKEN', message: 'not an admin token' }],
    `FORBIDDEN: ${message}`,
  );
}

/**
 * What the node's export left out (its header's `withheld`) and how to include it, or null when
 * nothing was: a node without `CAIRN_ALLOW_PRIVATE` returns no private notes.
 */
export function withheldWarning(withheld: unknown, node: NodeFile, command: string): string | null {
  const w = (withheld ?? {}) as { private_notes?: number; private_versions?: number };
  const notes = w.private_notes ?? 0;
  const versions = w.private_versions ?? 0;
  if (notes === 0 && versions === 0) return null;
  const what = [
    ...(notes > 0 ? [counted(notes, 'private note')] : []),
    ...(versions > 0 ? [counted(versions, 'private earlier version')] : []),
  ].join(' and ');
  return `${what} withheld: the node at ${node.url} runs without CAIRN_ALLOW_PRIVATE=1. To include them, stop the node (cairn stop) and run \`cairn ${command}\` on the store, or restart the node with CAIRN_ALLOW_PRIVATE=1`;
}
