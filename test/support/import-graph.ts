import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** The folders (and loose files) whose imports the architecture check reads. */
export const SOURCE_ROOTS = [
  'lib',
  'functions',
  'bin',
  'local',
  'bench',
  'test',
  'scripts',
  'infra',
  'vitest.config.ts',
];
const SOURCE_FILE = /\.(ts|mts|cts|mjs|cjs|js)$/;

/** One import statement: who imports what, and whether it only brings in types (erased at runtime). */
export interface ImportEdge {
  /** the importing file, relative to the root, with `/` separators */
  from: string;
  /** the specifier as written */
  specifier: string;
  /** the project file it resolves to (relative), or undefined for a package or builtin */
  to?: string;
  typeOnly: boolean;
}

export interface ImportGraph {
  files: string[];
  edges: ImportEdge[];
}

/**
 * The module specifiers a file loads, read with TypeScript's own parser (so an import inside a string
 * or a comment is not an edge): `import … from`, `import type`, `export … from`, side-effect
 * `import '…'` and dynamic `import('…')`.
 */
function importsOf(path: string, source: string): { specifier: string; typeOnly: boolean }[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, false);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg)) found.push({ specifier: arg.text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function listFiles(root: string, entry: string): string[] {
  const path = join(root, entry);
  if (!existsSync(path)) return [];
  if (statSync(path).isFile()) return SOURCE_FILE.test(entry) ? [entry] : [];
  return readdirSync(path).flatMap((name) => (name === 'node_modules' ? [] : listFiles(root, join(entry, name))));
}

/** `./x.js` written in TypeScript source means `./x.ts` (NodeNext resolution). */
function resolveRelative(root: string, from: string, specifier: string): string | undefined {
  const base = resolve(root, dirname(from), specifier);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    base.replace(/\.cjs$/, '.cts'),
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  const hit = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  return hit === undefined ? undefined : toPosix(relative(root, hit));
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

/**
 * `dist/` is `npm run build`'s output, not a source: the installed bin imports it
 * (bin/subagent-context.mjs), and in a fresh checkout it does not exist yet.
 */
function isBuildOutput(root: string, from: string, specifier: string): boolean {
  return toPosix(relative(root, resolve(root, dirname(from), specifier))).startsWith('dist/');
}

/** Reads every source file under the roots and returns the import edges between them. */
export function readImportGraph(root: string, roots: readonly string[] = SOURCE_ROOTS): ImportGraph {
  const files = roots
    .flatMap((entry) => listFiles(root, entry))
    .map(toPosix)
    .sort();
  const edges: ImportEdge[] = [];
  for (const from of files) {
    for (const { specifier, typeOnly } of importsOf(from, readFileSync(join(root, from), 'utf8'))) {
      const to = specifier.startsWith('.') ? resolveRelative(root, from, specifier) : undefined;
      if (specifier.startsWith('.') && to === undefined && !isBuildOutput(root, from, specifier))
        throw new Error(`${from}: cannot resolve import '${specifier}'`);
      edges.push({ from, specifier, to, typeOnly });
    }
  }
  return { files, edges };
}

/** The top-level folder of a project file (`lib/db/x.ts` → `lib`). */
export function area(file: string): string {
  return file.includes('/') ? file.slice(0, file.indexOf('/')) : file;
}

/** Every import cycle among project files, each as the path that closes it (`a → b → a`). */
export function findCycles(graph: ImportGraph): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of graph.edges) if (e.to !== undefined) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === 'open') cycles.push([...stack.slice(stack.indexOf(to)), to]);
      else if (state.get(to) === undefined) visit(to);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.files) if (state.get(file) === undefined) visit(file);
  return cycles;
}

/**
 * The graph between top-level folders (`lib`, `local`, `test`, …): a cycle here (lib/ → local/ →
 * lib/ through different files) is a layering knot even when no single file cycle exists.
 */
export function areaGraph(graph: ImportGraph): ImportGraph {
  const edges = graph.edges
    .filter((e) => e.to !== undefined && area(e.from) !== area(e.to))
    .map((e) => ({ ...e, from: area(e.from), to: area(e.to!) }));
  return { files: [...new Set(graph.files.map(area))].sort(), edges };
}

/** A bare specifier's package name (`@scope/pkg/sub` → `@scope/pkg`), or undefined for a builtin. */
export function packageName(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}
