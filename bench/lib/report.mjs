// Shared printing and saving of bench results: every suite writes bench/results/<date>-<suite>.json
// and prints its ratios against the target the issue set.
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A number with thousands separators, or a dash when absent. */
export function fmt(n, digits = 0) {
  if (n === undefined || Number.isNaN(n)) return '—';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/**
 * One ratio with its target and verdict. `higherIsBetter` false means the ratio must stay at or
 * below the target (latencies).
 */
export function ratioLine(name, value, target, higherIsBetter = true) {
  const ok = higherIsBetter ? value >= target : value <= target;
  const op = higherIsBetter ? '>=' : '<=';
  return `  ${name.padEnd(44)} ${value.toFixed(2).padStart(8)}   target ${op} ${target} (${ok ? 'meets' : 'MISSES'})`;
}

/** The p-th percentile (0–100) of `samples` (milliseconds), nearest rank. */
export function percentile(samples, p) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Prints a table: `rows` are [label, ...cells]. */
export function table(header, rows) {
  const width = [38, ...header.slice(1).map(() => 18)];
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(width[0]) : String(c).padStart(width[i]))).join('');
  console.log(`\n${line(header)}`);
  for (const r of rows) console.log(line(r));
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** Writes `results` (plus machine facts) to bench/results/<date>-<suite>.json atomically. */
export function saveResults(suite, results) {
  const date = new Date().toISOString();
  const full = {
    suite,
    date,
    commit: gitCommit(),
    node: process.version,
    cpu: cpus()[0]?.model,
    cores: cpus().length,
    ...results,
  };
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${date.slice(0, 10)}-${suite}.json`);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(full, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  console.log(`\nresults: ${file}`);
}
