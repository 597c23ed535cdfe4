import { basename, join } from 'node:path';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import type { DeployedShape } from './serverless-config.js';

// serverless-esbuild's own options, which it removes before calling esbuild (dist/bundle.js).
const PLUGIN_OPTIONS = [
  'concurrency',
  'zipConcurrency',
  'exclude',
  'nativeZip',
  'packager',
  'packagePath',
  'watch',
  'keepOutputDirectory',
  'packagerOptions',
  'installExtraArgs',
  'outputFileExtension',
  'outputBuildFolder',
  'outputWorkFolder',
  'nodeExternals',
  'skipBuild',
  'skipRebuild',
  'skipBuildExcludeFns',
  'stripEntryResolveExtensions',
  'disposeContext',
  'config',
];

/**
 * The esbuild options serverless-esbuild deploys a function with: its defaults, then the runtime's
 * target, then serverless.yml's `custom.esbuild` (the one place the settings live). The cold-start
 * benchmark and the bundle-size test both build through this, so they measure what is deployed.
 */
export function deployedBuildOptions(
  shape: DeployedShape,
  entry: string,
  outdir: string,
  cwd = process.cwd(),
): BuildOptions {
  const configured = Object.fromEntries(Object.entries(shape.esbuild).filter(([key]) => !PLUGIN_OPTIONS.includes(key)));
  const exclude = (shape.esbuild.exclude as string[] | undefined) ?? ['aws-sdk'];
  return {
    bundle: true,
    platform: 'node',
    target: shape.runtime.replace(/^nodejs(\d+).*/, 'node$1'),
    ...configured,
    external: [...((configured.external as string[] | undefined) ?? []), ...(exclude.includes('*') ? [] : exclude)],
    entryPoints: [entry],
    outdir,
    absWorkingDir: cwd,
    logLevel: 'silent',
  };
}

/** Minified bundle budgets (issue 14: every function ≤ 400 KiB), enforced by test/infra/bundle-size.test.ts. */
export const BUNDLE_BUDGET_KIB: Readonly<Record<string, number>> = {
  ingest: 400,
  health: 400,
  migrate: 400,
  export: 400,
  // R5-6: the page's renderer draws its charts with ECharts' SSR (echarts + zrender ≈ 540 KiB) and
  // writes with the S3 client (≈ 300 KiB with its @smithy core); BENCHMARKS.md has its cold start
  publish: 1_400,
};

/** Module initialisation target (issue 14), shown by `npm run bench`. */
export const INIT_TARGET_MS = 150;

export interface BuiltFunction {
  /** path of the bundled .js */
  file: string;
  /** bytes of the bundled .js */
  bytes: number;
  /** minified bytes per package (`node_modules/<name>`) or source directory, largest first */
  inputs: [string, number][];
}

/**
 * Builds one function as deployed (files written to `outdir`) and reads the sizes from the metafile;
 * `cwd` is the checkout to build (default this one; bench/publish.ts builds an older commit's too).
 */
export async function buildFunction(
  shape: DeployedShape,
  entry: string,
  outdir: string,
  cwd = process.cwd(),
): Promise<BuiltFunction> {
  const result = await build({ ...deployedBuildOptions(shape, entry, outdir, cwd), metafile: true });
  const file = join(outdir, `${basename(entry, '.ts')}.js`);
  const output = outputFor(result.metafile, file);
  return { file, bytes: output.bytes, inputs: byPackage(output) };
}

function outputFor(metafile: Metafile, file: string): Metafile['outputs'][string] {
  const found = Object.entries(metafile.outputs).find(([path]) => file.endsWith(path) || path.endsWith(basename(file)));
  if (!found) throw new Error(`esbuild wrote no ${file}; outputs: ${Object.keys(metafile.outputs).join(', ')}`);
  return found[1];
}

function byPackage(output: Metafile['outputs'][string]): [string, number][] {
  const sizes = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path.split('/').slice(0, -1).join('/');
    sizes.set(pkg, (sizes.get(pkg) ?? 0) + bytesInOutput);
  }
  return [...sizes].sort((a, b) => b[1] - a[1]);
}
