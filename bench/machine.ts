import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

export interface MachineFacts {
  cpuModel: string;
  nproc: number;
  memory: string;
  node: string;
  os: string;
  packages: Record<string, string>;
  commit: string;
  loadAverage: string;
}

const PACKAGES = [
  '@neondatabase/serverless',
  'better-sqlite3',
  '@electric-sql/pglite',
  '@aws-lambda-powertools/logger',
  '@aws-lambda-powertools/metrics',
  'zod',
  'esbuild',
  'serverless-esbuild',
];

/** The machine and versions the figures were taken on (`nproc`, `free -h`, /proc/cpuinfo, node). */
export function machineFacts(): MachineFacts {
  const cpuinfo = safe(() => readFileSync('/proc/cpuinfo', 'utf8'), '');
  return {
    cpuModel: /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown',
    nproc: Number(safe(() => execFileSync('nproc', { encoding: 'utf8' }).trim(), String(cpus().length))),
    memory: safe(
      () => execFileSync('free', ['-h'], { encoding: 'utf8' }).split('\n')[1]!.trim().split(/\s+/)[1]!,
      `${Math.round(totalmem() / 2 ** 30)}Gi`,
    ),
    node: process.version,
    os: safe(
      () => /PRETTY_NAME="(.+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? process.platform,
      process.platform,
    ),
    // Read from disk: some packages' `exports` hide their package.json from require.
    packages: Object.fromEntries(
      PACKAGES.map((name) => [
        name,
        safe(
          () =>
            (JSON.parse(readFileSync(join('node_modules', name, 'package.json'), 'utf8')) as { version: string })
              .version,
          '?',
        ),
      ]),
    ),
    commit: safe(() => execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(), 'unknown'),
    loadAverage: safe(() => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '), '?'),
  };
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}
