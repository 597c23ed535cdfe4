import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_BUDGET_KIB, buildFunction } from '../../bench/bundle.js';
import { readServerlessConfig } from '../../bench/serverless-config.js';

// Every function's minified bundle, built with exactly the esbuild settings serverless.yml deploys
// (bench/bundle.ts reads custom.esbuild; `npm run bench` reports the same bundles' cold start).
const shape = readServerlessConfig();
const outdir = mkdtempSync(join(tmpdir(), 'subagent-bundle-size-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

describe('deployed bundles (issue 14)', () => {
  it('deploys every function minified with a source map file beside it', () => {
    expect(shape.esbuild).toMatchObject({ minify: true, sourcemap: 'linked' });
    for (const name of Object.keys(shape.entries))
      expect(shape.environment[name]?.NODE_OPTIONS).toMatch(/--enable-source-maps/);
  });

  it('has a budget for every function', () => {
    expect(Object.keys(BUNDLE_BUDGET_KIB).sort()).toEqual(Object.keys(shape.entries).sort());
  });

  it.each(Object.entries(shape.entries))(
    '%s stays within its minified bundle budget',
    async (name, entry) => {
      const built = await buildFunction(shape, entry, join(outdir, name));
      const budget = BUNDLE_BUDGET_KIB[name]! * 1024;
      const largest = built.inputs
        .slice(0, 8)
        .map(([pkg, bytes]) => `${pkg} ${kib(bytes)}`)
        .join(', ');
      expect(
        built.bytes,
        `${name} is ${kib(built.bytes)} minified, over its ${kib(budget)} budget (bench/bundle.ts). Largest parts: ${largest}`,
      ).toBeLessThanOrEqual(budget);
      // What issue 14 took out must not creep back: the classic zod API, the SSM client, ws.
      const packages = built.inputs.map(([pkg]) => pkg);
      for (const gone of ['@aws-sdk/client-ssm', 'ws'])
        expect(packages, `${gone} is bundled into ${name} again`).not.toContain(gone);
      expect(
        built.inputs.find(([pkg]) => pkg === 'zod')?.[1] ?? 0,
        'zod beyond zod/mini (import * as z from "zod/mini")',
      ).toBeLessThan(40 * 1024);
    },
    60_000,
  );
});
