#!/usr/bin/env node
// The `cairn` executable: everything but the exit lives in run.ts, so tests can call it.
import { run } from './run.js';

process.exitCode = await run(process.argv.slice(2));
