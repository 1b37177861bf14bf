import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { assertCpuSupported } from './cpu.js';
import type { BindingReadOnlyStore, BindingStore, BindingStoreOptions } from './index.js';

/** The functions the native addon exports (its classes come back from them). */
export interface NativeBinding {
  openStore(dir: string, options?: BindingStoreOptions | null): Promise<BindingStore>;
  openStoreReadOnly(dir: string, options?: BindingStoreOptions | null): Promise<BindingReadOnlyStore>;
}

const require = createRequire(import.meta.url);
const PLATFORM_PACKAGE = '@cairn/core-linux-x64-gnu';
const FILE_NAME = 'cairn.linux-x64-gnu.node';

let loaded: NativeBinding | undefined;

/** Where a local `npm run build:native` puts the addon, seen from the source or from `dist/`. */
function localCandidates(): string[] {
  const here = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));
  return [here(`./${FILE_NAME}`), here(`../../ts/native/${FILE_NAME}`)];
}

/**
 * The addon `CAIRN_NATIVE_PATH` names, which wins over every other: it is how two builds are
 * compared (A/B benchmarks), and a path passed over without a word (a typo, a build not made)
 * measured the same build twice.
 */
function overridden(path: string): NativeBinding {
  if (!existsSync(path)) throw new Error(`CAIRN_NATIVE_PATH names no file: ${path}`);
  return require(path) as NativeBinding;
}

/**
 * Asks the engine's allocator (mimalloc, which reads its options when the addon is loaded) not to
 * back its memory with transparent huge pages, unless the operator set `MIMALLOC_ALLOW_THP`.
 * mimalloc asks the kernel for huge pages on its arenas; where the kernel compacts memory on such a
 * fault (`defrag` = `madvise`, the usual default) a write waits for it, and each fault zeroes 2 MiB
 * however little of it is used. Measured on the full-text ingest and graph load examples: system
 * time halved, 9-17% less wall time and 60-80 MB less RSS. mimalloc then also marks the process
 * (`PR_SET_THP_DISABLE`), as databases advise for their servers.
 */
function declineHugePages(): void {
  process.env.MIMALLOC_ALLOW_THP ??= '0';
}

/**
 * Loads the native engine once: checks the CPU first, then loads the addon `CAIRN_NATIVE_PATH`
 * names, else the prebuilt platform package when it is installed, else the local build.
 */
export function loadNative(): NativeBinding {
  if (loaded) return loaded;
  assertCpuSupported();
  declineHugePages();
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`Cairn's native engine is built for linux-x64 only, not ${process.platform}-${process.arch}`);
  }
  const override = process.env.CAIRN_NATIVE_PATH;
  if (override) {
    loaded = overridden(override);
    return loaded;
  }
  const tried: string[] = [];
  try {
    loaded = require(PLATFORM_PACKAGE) as NativeBinding;
    return loaded;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    tried.push(PLATFORM_PACKAGE);
  }
  for (const path of localCandidates()) {
    if (existsSync(path)) {
      loaded = require(path) as NativeBinding;
      return loaded;
    }
    tried.push(path);
  }
  throw new Error(`Cairn's native engine was not found (tried ${tried.join(', ')}); run \`npm run build:native\``);
}
