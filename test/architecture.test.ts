import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { area, areaGraph, findCycles, type ImportGraph, packageName, readImportGraph } from './support/import-graph.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Folders the deployed and library code must never reach into. */
const OUTSIDE_LIB = ['local', 'bench', 'test', 'functions', 'bin', 'scripts', 'infra'];

/** `lib/` imports only `lib/`; `functions/` only `lib/` (a Lambda package must not pull in local tooling). */
function layerViolations(graph: ImportGraph): string[] {
  return graph.edges
    .filter((e) => e.to !== undefined)
    .filter(
      (e) =>
        (area(e.from) === 'lib' && area(e.to!) !== 'lib') ||
        (area(e.from) === 'functions' && !['lib', 'functions'].includes(area(e.to!))),
    )
    .map((e) => `${e.from} imports ${e.to}`);
}

/** Deployed code (`lib/`, `functions/`) loads at runtime only packages listed in `dependencies`. */
function devOnlyRuntimeImports(graph: ImportGraph, dependencies: readonly string[]): string[] {
  return graph.edges
    .filter((e) => ['lib', 'functions'].includes(area(e.from)) && e.to === undefined && !e.typeOnly)
    .filter((e) => {
      const name = packageName(e.specifier);
      return name !== undefined && !dependencies.includes(name);
    })
    .map((e) => `${e.from} imports '${e.specifier}' at runtime, which is not in package.json dependencies`);
}

describe('architecture: layers and cycles (docs/README.md "Layout")', () => {
  const graph = readImportGraph(ROOT);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };

  it('reads the whole tree (lib, functions, local, test, …)', () => {
    for (const folder of ['lib', 'functions', 'bin', 'local', 'bench', 'test']) {
      expect(
        graph.files.some((f) => area(f) === folder),
        folder,
      ).toBe(true);
    }
    expect(graph.edges.length).toBeGreaterThan(100);
  });

  it(`lib/ imports nothing from ${OUTSIDE_LIB.join('/, ')}/; functions/ only from lib/`, () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('the database layer (lib/db/) knows nothing of the domain: it imports only lib/db/ and the utilities lib/time.ts, lib/errors.ts, lib/deadline.ts, lib/hints.ts (the table of words), lib/terminal-text.ts (a value quoted in a message made terminal-safe)', () => {
    const allowed = (to: string) =>
      to.startsWith('lib/db/') ||
      ['lib/time.ts', 'lib/errors.ts', 'lib/deadline.ts', 'lib/hints.ts', 'lib/terminal-text.ts'].includes(to);
    const leaks = graph.edges.filter((e) => e.from.startsWith('lib/db/') && e.to !== undefined && !allowed(e.to));
    expect(leaks.map((e) => `${e.from} imports ${e.to}`)).toEqual([]);
  });

  it('the CLI (lib/cli/) is the top of lib/: no other lib/ module imports it, so what both use lives below both (issue 58, "The house")', () => {
    const up = graph.edges.filter(
      (e) => e.from.startsWith('lib/') && !e.from.startsWith('lib/cli/') && e.to?.startsWith('lib/cli/') === true,
    );
    expect(up.map((e) => `${e.from} imports ${e.to}`)).toEqual([]);
  });

  it('there is no import cycle among project files (type-only imports included)', () => {
    expect(findCycles(graph).map((c) => c.join(' → '))).toEqual([]);
  });

  it('there is no cycle between top-level folders (lib/ → local/ → lib/ through different files counts)', () => {
    expect(findCycles(areaGraph(graph)).map((c) => c.join(' → '))).toEqual([]);
  });

  it('functions/<fn>.ts is wiring only: handler = create<Fn>Handler(deps) from lib/<fn>/handler.ts, in a few lines', () => {
    const functions = graph.files.filter((f) => area(f) === 'functions');
    expect(functions.length).toBeGreaterThan(0);
    for (const file of functions) {
      const fn = file.slice('functions/'.length, -'.ts'.length);
      const factory = `create${fn[0]!.toUpperCase()}${fn.slice(1)}Handler`;
      const source = readFileSync(join(ROOT, file), 'utf8');
      const code = source.split('\n').filter((line) => line.trim() !== '' && !/^\s*(\/\/|\/\*|\*)/.test(line));
      expect(
        graph.edges.some((e) => e.from === file && e.to === `lib/${fn}/handler.ts`),
        `${file} imports lib/${fn}/handler.ts`,
      ).toBe(true);
      expect(source, file).toMatch(new RegExp(`export const handler = ${factory}\\(`));
      expect(code.length, `${file}: ${code.length} lines of code`).toBeLessThanOrEqual(12);
    }
  });

  it('deployed code imports no devDependency at runtime (optional ones, the SQLite driver, are installed by default)', () => {
    const runtime = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {})];
    expect(devOnlyRuntimeImports(graph, runtime)).toEqual([]);
  });

  it('the producer a host installs (subagent-context/producer) loads only `dependencies`: no SQLite, PGlite or fauxqs (issue 25)', () => {
    const reached = new Set<string>(['lib/producer/producer.ts']);
    const packages = new Set<string>();
    for (let grew = true; grew; ) {
      grew = false;
      for (const e of graph.edges) {
        if (!reached.has(e.from) || e.typeOnly) continue;
        if (e.to === undefined) {
          const name = packageName(e.specifier);
          if (name !== undefined) packages.add(name);
        } else if (!reached.has(e.to)) {
          reached.add(e.to);
          grew = true;
        }
      }
    }
    expect([...packages].filter((name) => !(name in pkg.dependencies))).toEqual([]);
    expect([...reached].filter((file) => file.startsWith('lib/db/'))).toEqual([]);
  });
});

describe('architecture: the checks can fail', () => {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-context-arch-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  // the shape of the cycle this check was written for: a CLI command in lib/ starting the local
  // pipeline, which imports the CLI's helpers back
  write(
    'lib/cli/ingest.ts',
    "import { start } from '../../local/pipeline.js';\nimport type { X } from './x.js';\n// import { no } from '../../bench/commented-out.js';\n",
  );
  write('lib/cli/x.ts', 'export type X = 1;\n');
  write(
    'local/pipeline.ts',
    "import { helper } from '../lib/cli/helper.js';\nexport const start = () => import('./later.js');\n",
  );
  write('local/later.ts', 'export {};\n');
  write('lib/cli/helper.ts', "export * from './ingest.js';\nimport 'fauxqs';\nimport type { Y } from 'tsx';\n");
  const graph = readImportGraph(dir);

  it('finds a lib/ → local/ import and the cycle through it, and ignores commented-out imports', () => {
    expect(layerViolations(graph)).toEqual(['lib/cli/ingest.ts imports local/pipeline.ts']);
    expect(findCycles(graph).map((c) => c.join(' → '))).toEqual([
      'lib/cli/helper.ts → lib/cli/ingest.ts → local/pipeline.ts → lib/cli/helper.ts',
    ]);
    expect(findCycles(areaGraph(graph)).map((c) => c.join(' → '))).toEqual(['lib → local → lib']);
    expect(graph.edges.some((e) => e.specifier.includes('bench'))).toBe(false);
    expect(graph.edges.find((e) => e.to === 'local/later.ts')?.typeOnly).toBe(false);
  });

  it('finds a runtime import of a package that is not a dependency (a type-only one is fine)', () => {
    expect(devOnlyRuntimeImports(graph, [])).toEqual([
      "lib/cli/helper.ts imports 'fauxqs' at runtime, which is not in package.json dependencies",
    ]);
  });
});
