import { readFileSync } from 'node:fs';

/**
 * CPU features the native engine is compiled for (`.cargo/config.toml`), as Linux spells them in
 * `/proc/cpuinfo`. Loading the addon on a CPU without them would die on an illegal instruction,
 * so the check runs in JavaScript before the addon is loaded.
 */
export const REQUIRED_CPU_FLAGS: readonly string[] = ['avx2', 'fma', 'sse4_2', 'pclmulqdq'];

/** The required flags missing from the first processor listed in a `/proc/cpuinfo` text. */
export function missingCpuFlags(cpuinfo: string): string[] {
  const line = cpuinfo.split('\n').find((l) => /^flags\s*:/.test(l));
  if (line === undefined) return [];
  const flags = new Set(
    line
      .slice(line.indexOf(':') + 1)
      .trim()
      .split(/\s+/),
  );
  return REQUIRED_CPU_FLAGS.filter((f) => !flags.has(f));
}

/**
 * Throws a clear error when this machine cannot run the native engine. Only x64 Linux is checked
 * (where `/proc/cpuinfo` tells); elsewhere the addon's own start-up check still guards.
 */
export function assertCpuSupported(cpuinfoPath = '/proc/cpuinfo'): void {
  if (process.platform !== 'linux' || process.arch !== 'x64') return;
  let text: string;
  try {
    text = readFileSync(cpuinfoPath, 'utf8');
  } catch {
    return;
  }
  const missing = missingCpuFlags(text);
  if (missing.length > 0) {
    throw new Error(
      `Cairn's native engine needs a CPU with AVX2 and FMA; this one lacks ${missing.join(', ')} ` +
        `(read from ${cpuinfoPath}). Run Cairn on a newer x86-64 CPU (Intel Haswell / AMD Excavator or later).`,
    );
  }
}
