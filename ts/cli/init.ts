import { seedTokenRefusal } from '../auth/seed-token.js';
import { Tokens } from '../auth/tokens.js';
import { findRunningNode } from '../server/node-file.js';
import { privateDataDir } from '../server/private-dir.js';
import { CliFailure, usage } from './failure.js';
import { refuseForeignDataDir } from './foreign-dir.js';
import { openStore } from './store-owner.js';
import { unwritableDataDir } from './writable.js';

/**
 * `cairn init`: creates the store and its admin token, printed once (`--json`:
 * `{"dataDir","token"}`). `CAIRN_ADMIN_TOKEN` is used as the token when set. Refuses when a node
 * holds the store, a live token already exists, or the directory holds no store but other files
 * (a CliFailure, said by `run`).
 */
export async function runInit(dataDir: string, json: boolean, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const running = findRunningNode(dataDir);
  if (running !== null) {
    throw new CliFailure('VALIDATION_ERROR', `a node is running on ${dataDir} (${running.url}); it is initialised`, 1);
  }
  // Checked before the data dir is made: a refused setting touches nothing.
  const seed = env.CAIRN_ADMIN_TOKEN;
  const refused = seed === undefined || seed === '' ? null : seedTokenRefusal(seed);
  if (refused !== null) throw usage('CAIRN_ADMIN_TOKEN', refused);
  const unwritable = unwritableDataDir(dataDir);
  if (unwritable !== null) {
    throw new CliFailure('FORBIDDEN', unwritable.message, 1, [{ field: '--data-dir', message: unwritable.code }]);
  }
  refuseForeignDataDir(dataDir);
  const { warning: dirWarning } = privateDataDir(dataDir);
  if (dirWarning !== null) process.stderr.write(`cairn init: warning: ${dirWarning}\n`);
  const store = await openStore(dataDir);
  try {
    const tokens = new Tokens(store);
    if (await tokens.any()) {
      // Most often run again by someone who lost the admin token it showed once: an agent token
      // would not replace it (found by QA), so the admin form is named too.
      const message = `${dataDir} already has tokens; make more with \`cairn token create --agent NAME\` (a lost admin token is replaced with \`--role admin\`)`;
      throw new CliFailure('VALIDATION_ERROR', message, 1, [{ field: '--data-dir', message: 'already has tokens' }]);
    }
    const { token } = await tokens.create({ agent: 'admin', role: 'admin' }, seed || undefined);
    process.stdout.write(
      json
        ? `${JSON.stringify({ dataDir, token })}\n`
        : `Initialised ${dataDir}\nAdmin token (shown once; keep it secret):\n  ${token}\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
