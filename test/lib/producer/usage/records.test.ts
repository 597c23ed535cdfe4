import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readClaudeStream } from '../../../../lib/producer/usage/claude-stream.js';
import { readClaudeTranscript } from '../../../../lib/producer/usage/claude-transcript.js';
import { readCodexRollout } from '../../../../lib/producer/usage/codex-rollout.js';
import { fileLines, OVERLONG_LINE } from '../../../../lib/producer/usage/file-lines.js';
import { readOpenCodeSession } from '../../../../lib/producer/usage/opencode-session.js';
import {
  BAD,
  countOf,
  dollarsToSubcents,
  ModelNames,
  TokenSums,
  textOf,
} from '../../../../lib/producer/usage/records.js';
import { COST_SOURCES, USAGE_COUNT_FIELDS } from '../../../../lib/producer/usage/run-usage.js';
import { anyLine, claudeLine } from './agent-records.js';

const dir = mkdtempSync(join(tmpdir(), 'subagent-context-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const READERS = {
  readClaudeTranscript,
  readOpenCodeSession,
  readCodexRollout,
  readClaudeStream: async (lines: Iterable<unknown>) => {
    const r = await readClaudeStream(lines);
    return { usage: r.subagents[0]?.usage ?? {}, unreadable_lines: r.unreadable_lines };
  },
};

/** A hostile record: its getters throw. */
const trap = new Proxy(
  {},
  {
    get() {
      throw new Error('trap');
    },
    has() {
      throw new Error('trap');
    },
  },
);

describe('R6-3: every reader never throws on content', () => {
  it.each(Object.entries(READERS))(
    'R6-3: %s never throws on any lines, and reports only valid figures',
    async (_, read) => {
      await fc.assert(
        fc.asyncProperty(fc.array(anyLine, { maxLength: 12 }), async (lines) => {
          const { usage, unreadable_lines } = await read(lines);
          expect(Number.isSafeInteger(unreadable_lines) && unreadable_lines >= 0).toBe(true);
          for (const field of USAGE_COUNT_FIELDS) {
            const v = usage[field];
            if (v !== undefined && v !== null) expect(Number.isSafeInteger(v) && v >= 0).toBe(true);
          }
          if (usage.cost_subcents != null)
            expect(Number.isSafeInteger(usage.cost_subcents) && usage.cost_subcents >= 0).toBe(true);
          if (usage.cost_source != null) expect(COST_SOURCES).toContain(usage.cost_source);
          if (usage.model != null) expect(typeof usage.model).toBe('string');
        }),
        { numRuns: 200 },
      );
    },
  );

  const HOSTILE_UNREADABLE = {
    readClaudeTranscript: 5,
    readOpenCodeSession: 5,
    readCodexRollout: 5,
    readClaudeStream: 4,
  };
  it.each(Object.entries(READERS))(
    'R6-3: %s counts a record whose getters throw, a thenable, a deep nesting and a huge number, never throws',
    async (name, read) => {
      const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      // a thenable record (`then` defined so, as a host's object could be)
      const thenable = Object.defineProperty({ type: 'assistant' }, 'then', { value: () => undefined });
      const reading = await read([
        trap,
        thenable,
        deep,
        '1e999',
        '{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1e400}}}',
      ]);
      expect(reading.unreadable_lines).toBe(HOSTILE_UNREADABLE[name as keyof typeof READERS]);
    },
  );

  it.each(Object.entries(READERS))(
    "R6-3: %s counts a record whose fields' getters throw (its own guard, after the parse)",
    async (_, read) => {
      const fields = new Proxy(
        {},
        {
          get(_target, prop) {
            if (prop === 'then') return undefined;
            throw new Error('trap');
          },
          has() {
            throw new Error('trap');
          },
        },
      );
      expect((await read([fields])).unreadable_lines).toBe(1);
    },
  );

  it.each(Object.entries(READERS))('R6-3: %s skips blank lines: no record, not unreadable', async (_, read) => {
    expect((await read(['', '  ', '\t', '\r'])).unreadable_lines).toBe(0);
  });
});

describe('R6-3: fileLines streams a file a line at a time', () => {
  it('R6-3: CRLF and LF lines, a truncated last line as it is, a blank last line skipped by the readers', async () => {
    const file = join(dir, 'lines.jsonl');
    writeFileSync(file, '{"a":1}\r\n{"b":2}\n\n{"c"');
    const lines: string[] = [];
    for await (const line of fileLines(file)) lines.push(line);
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '', '{"c"']);
  });

  it('R6-3: a line longer than the limit comes out as one unreadable marker', async () => {
    const file = join(dir, 'long.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify(claudeLine('m1', { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }))}\n${'x'.repeat(5000)}\n`,
    );
    const lines: string[] = [];
    for await (const line of fileLines(file, { maxLineChars: 1000 })) lines.push(line);
    expect(lines[1]).toBe(OVERLONG_LINE);
    expect((await readClaudeTranscript(fileLines(file, { maxLineChars: 1000 }))).unreadable_lines).toBe(1);
  });

  it('R6-3: a missing file fails with the file system error before any line (the CLI names the path)', async () => {
    const read = async () => {
      for await (const _ of fileLines(join(dir, 'nope.jsonl'))) void _;
    };
    await expect(read()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('R6-3: a 100 MB transcript is read in bounded memory: a 48 MB heap, its peak well below the file size', async () => {
    const file = join(dir, 'agent-big.jsonl');
    const fd = openSync(file, 'w');
    const pad = 'p'.repeat(700); // a text block of a realistic size
    let requests = 0;
    let bytes = 0;
    const chunk: string[] = [];
    while (bytes < 100 * 1024 * 1024) {
      const id = `msg_${requests++}`;
      const u = { input_tokens: 3, output_tokens: 5, cache_creation_input_tokens: 7, cache_read_input_tokens: 11 };
      const line = JSON.stringify({ ...claudeLine(id, u), pad });
      for (let block = 0; block < 3; block++) chunk.push(line);
      bytes += 3 * (line.length + 1);
      if (chunk.length >= 3000) writeSync(fd, `${chunk.splice(0).join('\n')}\n`);
    }
    writeSync(fd, `${chunk.join('\n')}\n`);
    closeSync(fd);
    const size = statSync(file).size;
    const child = new URL('./big-transcript-child.ts', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--max-old-space-size=48', '--import', 'tsx', child, file],
      {
        maxBuffer: 1024 * 1024,
      },
    );
    const { reading, peakHeapBytes } = JSON.parse(stdout) as {
      reading: { usage: Record<string, number> };
      peakHeapBytes: number;
    };
    expect(reading.usage).toMatchObject({ requests, tokens_in: 3 * requests, tokens_cached_read: 11 * requests });
    expect(size).toBeGreaterThanOrEqual(100 * 1024 * 1024);
    expect(peakHeapBytes).toBeLessThan(size / 3);
    console.log(
      `R6-3: ${(size / 2 ** 20).toFixed(0)} MB transcript, ${requests} requests, peak heap ${(peakHeapBytes / 2 ** 20).toFixed(1)} MB`,
    );
  }, 300_000);
});

describe('R6-3: the shared rules', () => {
  it.each<[number, number | undefined]>([
    [0.0123, 123],
    [0.0124, 124],
    [0.0051, 51], // 51.00000000000001 in floating point
    [0.0003, 3], // 2.9999999999999996
    [0.00001, 1],
    [0, 0],
    [-0.01, undefined],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
  ])('R6-3: %s dollars are %s subcents (rounded up; a float error is no subcent)', (dollars, subcents) => {
    expect(dollarsToSubcents(dollars)).toBe(subcents);
  });

  it.each<[unknown, unknown]>([
    [undefined, undefined],
    [null, undefined],
    [0, 0],
    [7, 7],
    [-1, BAD],
    [1.5, BAD],
    ['7', BAD],
    [2 ** 53, BAD],
  ])('R6-3: countOf(%s) is %s', (value, count) => {
    expect(countOf(value)).toBe(count);
  });

  it.each<[unknown, unknown]>([
    [undefined, undefined],
    [null, undefined],
    ['', undefined],
    ['a', 'a'],
    [5, BAD],
    [{}, BAD],
  ])('R6-3: textOf(%s) is %s', (value, text) => {
    expect(textOf(value)).toBe(text);
  });

  it('R6-3: ModelNames: none named is undefined, never an empty name', () => {
    const names = new ModelNames();
    names.add(undefined);
    expect(names.joined()).toBeUndefined();
    names.add('a');
    names.add('b');
    names.add('a');
    expect(names.joined()).toBe('a,b');
  });

  it('R6-3: TokenSums: a sum that went beyond the safe integers stays unknown whatever is added after', () => {
    const sums = new TokenSums();
    sums.add({ tokens_in: Number.MAX_SAFE_INTEGER });
    sums.add({ tokens_in: 1 });
    sums.add({ tokens_in: 1 });
    expect(sums.usage()).toStrictEqual({ tokens_in: null, requests: 3 });
  });

  it('R6-3: an empty array given as a record is unreadable, not a blank line', async () => {
    expect((await readClaudeTranscript([[], {}])).unreadable_lines).toBe(1);
  });

  it('R6-3: TokenSums: a kind one request did not report is left out of the sum, not made unknown', () => {
    const sums = new TokenSums();
    sums.add({ tokens_in: 1, tokens_out: 2 });
    sums.add({ tokens_in: 3 });
    expect(sums.usage()).toStrictEqual({ tokens_in: 4, tokens_out: 2, requests: 2 });
  });

  it('R6-3: NULL-not-zero: TokenSums reports only the kinds a request reported, and no requests when none was counted', () => {
    expect(new TokenSums().usage()).toEqual({});
    const sums = new TokenSums();
    sums.add({ tokens_in: 0 });
    expect(sums.usage()).toEqual({ tokens_in: 0, requests: 1 });
  });
});
