import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DOCS = join(ROOT, 'docs');

/** Where the code, tests and operator files cite the contract. */
const CITING = [
  'lib',
  'functions',
  'bin',
  'local',
  'bench',
  'test',
  'scripts',
  'infra',
  'schema',
  'serverless.yml',
  'README.md',
  'BENCHMARKS.md',
  '.ci',
];

const CITATION = /\bdocs\/([\w-]+\.md)(?:#([\w-]+))?/g;
const RULE_ID = /\b(AC-\d+[a-z]?|R2-\d+)\b/g;
/** A definition: the id in bold where its rule is written (`- **R2-7** Replay-safe merge…`). */
const DEFINITION = /\*\*(AC-\d+[a-z]?|R2-\d+)\*\*/g;

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  try {
    return readdirSync(path, { withFileTypes: true }).flatMap((e) =>
      e.name === 'node_modules' ? [] : filesUnder(join(path, e.name)),
    );
  } catch {
    return [path];
  }
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

interface Citation {
  file: string;
  line: number;
  text: string;
}

function scan(pattern: RegExp, files: readonly string[]): Citation[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((lineText, i) =>
        [...lineText.matchAll(pattern)].map((m) => ({ file: file.slice(ROOT.length + 1), line: i + 1, text: m[0] })),
      ),
  );
}

describe('docs/: every citation in code and tests points at something that exists', () => {
  const docs = readdirSync(DOCS).filter((f) => f.endsWith('.md'));
  const texts = new Map(docs.map((f) => [f, readFileSync(join(DOCS, f), 'utf8')]));
  const citing = CITING.flatMap((entry) => filesUnder(join(ROOT, entry))).filter(
    (f) => !f.endsWith('test/docs.test.ts'),
  );
  const definitions = [...texts.values()].flatMap((t) => [...t.matchAll(DEFINITION)].map((m) => m[1]!));

  it('holds the index and the contract files', () => {
    for (const file of [
      'README.md',
      'frame.md',
      'table.md',
      'merge.md',
      'ingest.md',
      'migrate.md',
      'health.md',
      'time.md',
      'dialects.md',
      'security.md',
    ]) {
      expect(docs, file).toContain(file);
    }
    expect(citing.length).toBeGreaterThan(100);
  });

  it('every cited docs file and section exists', () => {
    const broken = scan(CITATION, citing).filter(({ text }) => {
      const [, file, anchor] = /docs\/([\w-]+\.md)(?:#([\w-]+))?/.exec(text)!;
      const markdown = texts.get(file!);
      return markdown === undefined || (anchor !== undefined && !anchorsOf(markdown).has(anchor));
    });
    expect(broken.map((c) => `${c.file}:${c.line} cites ${c.text}`)).toEqual([]);
  });

  it('every rule id used in code and tests (AC-n, R2-n) is defined in docs/', () => {
    const undefinedIds = scan(RULE_ID, citing).filter(({ text }) => !definitions.includes(text));
    expect(undefinedIds.map((c) => `${c.file}:${c.line} uses ${c.text}`)).toEqual([]);
  });

  it('every rule id is defined exactly once', () => {
    expect(definitions.filter((id, i) => definitions.indexOf(id) !== i)).toEqual([]);
  });

  it('nothing cites the old SPEC document any more', () => {
    expect(scan(/\bSPEC(\.md|\s*§|'s)|§\s*\d/g, citing).map((c) => `${c.file}:${c.line}: ${c.text}`)).toEqual([]);
  });

  it("links between docs files land on a heading of the target (when the target exists; producers.md is the producer issue's)", () => {
    const broken = docs.flatMap((from) =>
      [...texts.get(from)!.matchAll(/\]\(([\w-]+\.md)(?:#([\w-]+))?\)/g)]
        .filter(
          ([, file, anchor]) => texts.has(file!) && anchor !== undefined && !anchorsOf(texts.get(file!)!).has(anchor),
        )
        .map((m) => `${from}: ${m[0]}`),
    );
    expect(broken).toEqual([]);
  });

  it('the anchor rule matches GitHub on the headings used here', () => {
    expect(anchorOf('3. The backfill transaction')).toBe('3-the-backfill-transaction');
    expect(anchorOf("The writer's clock")).toBe('the-writers-clock');
  });
});
