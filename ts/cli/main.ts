#!/usr/bin/env node
// The `cairn` executable: everything but the exit lives in run.ts, so tests can call it.
import { endOnClosedOutput } from './interrupt.js';
import { run } from './run.js';

// A reader that stops early (`cairn memories list | head -1`) closes stdout: the output is no
// longer wanted, so the command ends quietly, as a Unix filter does, not with an EPIPE stack.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') return endOnClosedOutput();
  throw err;
});

process.exitCode = await run(process.argv.slice(2));
