import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type BuildOptions, build } from 'esbuild';

/*
 * R4-11: the producer package (packages/producer) from the one source, lib/producer/producer.ts,
 * and its `./usage` entry from lib/producer/usage/index.ts (R6-3).
 * esbuild bundles it (with the few lib/ constants it reads) twice, as ESM and as CommonJS, the SQS
 * client left external; tsc writes its declarations, copied beside the CommonJS build under a
 * package.json that makes them CommonJS declarations (a `require` host's TypeScript reads those).
 */

const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const out = root('packages/producer/dist');
rmSync(out, { recursive: true, force: true });

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  external: ['@aws-sdk/client-sqs'],
  legalComments: 'none',
  logLevel: 'warning',
};
// R6-3: `subagent-context-producer/usage`, the agents' record readers (Node's built-ins only)
for (const [entry, name] of [
  ['lib/producer/producer.ts', 'index'],
  ['lib/producer/usage/index.ts', 'usage'],
] as const) {
  await build({ ...common, entryPoints: [root(entry)], format: 'esm', outfile: `${out}/esm/${name}.js` });
  await build({ ...common, entryPoints: [root(entry)], format: 'cjs', outfile: `${out}/cjs/${name}.js` });
}

await promisify(execFile)(process.execPath, [root('node_modules/typescript/bin/tsc'), '-p', root('packages/producer')]);
cpSync(`${out}/esm`, `${out}/cjs`, {
  recursive: true,
  filter: (path) => !path.endsWith('.js'), // the declarations only: its JavaScript is the CommonJS build
});
writeFileSync(`${out}/cjs/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);
cpSync(root('schema/frame.v1.schema.json'), `${out}/frame.v1.schema.json`);

// The CLI's package bundles the producer package (bundleDependencies) and keeps its old entry
// point `subagent-context/producer` as a re-export of it: one build of the producer, two names.
const reexport = root('dist/producer');
rmSync(reexport, { recursive: true, force: true });
mkdirSync(`${reexport}/cjs`, { recursive: true });
const esm = "export * from 'subagent-context-producer';\n";
writeFileSync(`${reexport}/index.js`, esm);
writeFileSync(`${reexport}/index.d.ts`, esm);
writeFileSync(`${reexport}/cjs/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);
writeFileSync(`${reexport}/cjs/index.js`, "module.exports = require('subagent-context-producer');\n");
writeFileSync(`${reexport}/cjs/index.d.ts`, esm);
console.log(`built ${out} and ${reexport}`);
