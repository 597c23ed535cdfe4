import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type BuildOptions } from 'esbuild';
import type { DeployedShape } from './serverless-config.js';
import { median } from './stats.js';

export interface BundleFigures {
  /** bytes of the bundled .js */
  bytes: number;
  /** gzip -9 of it: about what the deployment zip carries */
  gzipBytes: number;
  /** bytes of the source map beside it (0 without sourcemap) */
  mapBytes: number;
  /** median ms for `require(bundle)` in a fresh node process (module initialisation) */
  initMs: number;
  /** median ms from process start to the handler module loaded */
  readyMs: number;
}

export interface ColdStartFigures {
  function: string;
  /** serverless.yml's custom.esbuild as deployed */
  configured: BundleFigures;
  /** the same settings with minify: true */
  minified: BundleFigures;
}

// serverless-esbuild's own options, which it removes before calling esbuild (dist/bundle.js).
const PLUGIN_OPTIONS = [
  'concurrency', 'zipConcurrency', 'exclude', 'nativeZip', 'packager', 'packagePath', 'watch', 'keepOutputDirectory',
  'packagerOptions', 'installExtraArgs', 'outputFileExtension', 'outputBuildFolder', 'outputWorkFolder', 'nodeExternals',
  'skipBuild', 'skipRebuild', 'skipBuildExcludeFns', 'stripEntryResolveExtensions', 'disposeContext', 'config',
];

// Times the load of the handler module alone; the process clock's origin is the process start.
const PROBE = `const start = performance.now(); require(process.argv[1]);
process.stdout.write(JSON.stringify({ initMs: performance.now() - start, readyMs: performance.now() }));`;

/**
 * Each function bundled as serverless-esbuild would (serverless.yml's options over the plugin's
 * defaults), once as configured and once minified; then `runs` fresh node processes each load the
 * bundle with the function's environment and report the module initialisation time.
 */
export async function benchColdStart(shape: DeployedShape, runs: number): Promise<ColdStartFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-bench-bundle-'));
  try {
    const figures: ColdStartFigures[] = [];
    for (const [name, entry] of Object.entries(shape.entries)) {
      const configured = await bundleAndTime(shape, name, entry, join(dir, 'configured'), {}, runs);
      const minified = await bundleAndTime(shape, name, entry, join(dir, 'minified'), { minify: true }, runs);
      figures.push({ function: name, configured, minified });
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function bundleAndTime(
  shape: DeployedShape,
  name: string,
  entry: string,
  outdir: string,
  override: BuildOptions,
  runs: number,
): Promise<BundleFigures> {
  const file = await bundle(shape, entry, outdir, override);
  const code = readFileSync(file);
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
  const samples = Array.from({ length: runs }, () => {
    const child = spawnSync(process.execPath, ['-e', PROBE, file], { env, encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`loading the ${name} bundle failed: ${child.stderr}`);
    return JSON.parse(child.stdout) as { initMs: number; readyMs: number };
  });
  const map = `${file}.map`;
  return {
    bytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    mapBytes: exists(map) ? statSync(map).size : 0,
    initMs: median(samples.map((s) => s.initMs)),
    readyMs: median(samples.map((s) => s.readyMs)),
  };
}

async function bundle(shape: DeployedShape, entry: string, outdir: string, override: BuildOptions): Promise<string> {
  const configured = Object.fromEntries(Object.entries(shape.esbuild).filter(([key]) => !PLUGIN_OPTIONS.includes(key)));
  const exclude = (shape.esbuild.exclude as string[] | undefined) ?? ['aws-sdk'];
  const options: BuildOptions = {
    // serverless-esbuild's defaults, then the runtime's target, then serverless.yml
    bundle: true,
    platform: 'node',
    target: shape.runtime.replace(/^nodejs(\d+).*/, 'node$1'),
    ...configured,
    ...override,
    external: [...((configured.external as string[] | undefined) ?? []), ...(exclude.includes('*') ? [] : exclude)],
    entryPoints: [entry],
    outdir,
    absWorkingDir: process.cwd(),
    logLevel: 'silent',
  };
  await build(options);
  return join(outdir, `${basename(entry, '.ts')}.js`);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
