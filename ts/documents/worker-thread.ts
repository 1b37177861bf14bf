import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { type ResourceLimits, Worker } from 'node:worker_threads';

/**
 * Module hooks for a worker that runs the TypeScript sources: the sources import each other by the
 * `.js` names they compile to, so a `.js` next to a `.ts` importer is looked for as `.ts`, and a
 * `.ts` module is transpiled (types erased, nothing checked) by TypeScript.
 */
const SOURCE_HOOKS = `
import { existsSync, readFileSync } from 'node:fs';
let ts;
export async function initialize({ typescript }) {
  ts = (await import(typescript)).default;
}
export async function resolve(specifier, context, next) {
  if (context.parentURL?.endsWith('.ts') && /^\\.\\.?\\/.*\\.js$/.test(specifier)) {
    const url = new URL(specifier.replace(/\\.js$/, '.ts'), context.parentURL);
    if (existsSync(url)) return { url: url.href, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const { outputText } = ts.transpileModule(readFileSync(new URL(url), 'utf8'), {
    fileName: url,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}`;

/** The first script of a worker that runs the sources: registers the hooks, then loads the module. */
const FROM_SOURCE = `
const { register } = require('node:module');
const { workerData } = require('node:worker_threads');
register('data:text/javascript,' + encodeURIComponent(workerData.hooks), { data: { typescript: workerData.typescript } });
import(workerData.entry);
`;

/**
 * A worker thread running `name` (a module next to this one, named without its extension). A
 * built node runs the compiled `.js`. Run from the TypeScript sources (as the tests run it through
 * vitest, whose transforms do not reach into worker threads) there is no `.js` to run, so the
 * worker loads the `.ts` module through TypeScript, a dev dependency present wherever the sources
 * are. `resourceLimits` caps the thread's heap (an overrun ends it with ERR_WORKER_OUT_OF_MEMORY).
 */
export function workerThread(name: string, resourceLimits?: ResourceLimits): Worker {
  const limits = resourceLimits === undefined ? {} : { resourceLimits };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, import.meta.url), limits);
  const entry = new URL(`./${name}.ts`, import.meta.url).href;
  const typescript = pathToFileURL(createRequire(import.meta.url).resolve('typescript')).href;
  return new Worker(FROM_SOURCE, { eval: true, workerData: { entry, hooks: SOURCE_HOOKS, typescript }, ...limits });
}
