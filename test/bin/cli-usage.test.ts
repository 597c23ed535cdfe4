import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { fixture } from '../lib/producer/usage/agent-records.js';
import { runCliCaptured, runCliJson } from '../support/cli-run.js';

/*
 * R6-3: `subagent-context usage FILE` through the real CLI (lib/cli/main.ts, in-process): what a
 * person or a script reads from each agent's file, and what a broken or hostile file gives.
 */

const dir = mkdtempSync(join(tmpdir(), 'subagent-context-usage-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CODEX = `rollout-2026-11-30T10-00-00-0199a7c2-5e3f-7d20-b1a4-6c8e9f0a1b2c.jsonl`;

describe('R6-3: subagent-context usage FILE --json', () => {
  it.each<[string, string, string, (string | null)[]]>([
    [
      'a Claude Code transcript (key: the agent id its name holds)',
      'agent-a1b2c3d4.jsonl',
      'claude-transcript',
      ['a1b2c3d4'],
    ],
    ['a Claude Code stream (key: each Agent call id)', 'claude-stream.jsonl', 'claude-stream', ['toolu_A', 'toolu_B']],
    [
      'an OpenCode API answer (a JSON array; key: the session id)',
      'opencode-session.json',
      'opencode',
      ['ses_7f1e2d3c4b5aChildSession'],
    ],
    ["OpenCode's storage records", 'opencode-storage.jsonl', 'opencode', ['ses_7f1e2d3c4b5aChildSession']],
    ['a Codex rollout (key: the thread id)', CODEX, 'codex', ['0199a7c2-5e3f-7d20-b1a4-6c8e9f0a1b2c']],
  ])('R6-3: %s: format detected, one entry per subagent', async (_, name, format, keys) => {
    const run = await runCliJson(['usage', fixture(name), '--json']);
    expect(run).toMatchObject({ code: EXIT.ok, stderr: '' });
    expect(run.json.format).toBe(format);
    expect(run.json.subagents.map((s: { key: string }) => s.key)).toEqual(keys);
  });

  it('R6-3: the document holds {subagents: [{key, usage, unreadable_lines}]} with the whole usage', async () => {
    const run = await runCliJson(['usage', fixture('agent-a1b2c3d4.jsonl'), '--json']);
    expect(run.json).toEqual({
      file: fixture('agent-a1b2c3d4.jsonl'),
      format: 'claude-transcript',
      unreadable_lines: 1,
      subagents: [
        {
          key: 'a1b2c3d4',
          unreadable_lines: 1,
          usage: {
            tokens_in: 15,
            tokens_out: 250,
            tokens_cached_write: 3100,
            tokens_cached_read: 3000,
            requests: 2,
            model: 'claude-sonnet-4-5,claude-haiku-4-5',
            complete: true,
          },
        },
      ],
    });
  });

  it("R6-3: a transcript not named agent-<id>.jsonl is keyed by its records' agentId", async () => {
    const file = join(dir, 'renamed.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({ type: 'user', agentId: 'x42', sessionId: 's', message: { role: 'user', content: 'hi' } })}\n`,
    );
    const run = await runCliJson(['usage', file, '--json']);
    expect(run.json.subagents).toEqual([{ key: 'x42', usage: {}, unreadable_lines: 0 }]);
  });

  it('R6-3: --format overrides detection: a Codex reading of an OpenCode file finds nothing it can read', async () => {
    const run = await runCliJson(['usage', fixture('opencode-storage.jsonl'), '--format', 'codex', '--json']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.json).toMatchObject({ format: 'codex', unreadable_lines: 8 });
    expect(run.json.subagents).toStrictEqual([{ key: null, usage: {}, unreadable_lines: 8 }]);
  });

  it('R6-3: without --json a table: one row per subagent, - for a figure the file does not report, the cost in dollars', async () => {
    const run = await runCliCaptured(['usage', fixture('opencode-session.json')]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/^format\s+opencode$/m);
    expect(run.stdout).toMatch(
      /ses_7f1e2d3c4b5aChildSession\s+3\s+160\s+110\s+20\s+2,700\s+200\s+\$0\.0143\s+models_dev_list\s+claude-sonnet-4-5,gpt-5\s+yes/,
    );
    const claude = await runCliCaptured(['usage', fixture('agent-a1b2c3d4.jsonl')]);
    expect(claude.stdout).toMatch(/^unreadable lines\s+1 \(left out/m);
    expect(claude.stdout).toMatch(/a1b2c3d4\s+2\s+15\s+250\s+-\s+3,000\s+3,100\s+-\s+-/);
  });

  it('R6-3: a key holding control characters is shown escaped in the table, never obeyed', async () => {
    const file = join(dir, 'agent-evil.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({ type: 'user', agentId: 'a\u001b[31m\nFORGED', sessionId: 's', message: {} })}\n`,
    );
    const run = await runCliCaptured(['usage', file, '--format', 'claude-transcript']);
    expect(run.stdout).not.toContain('\u001b[31m');
    expect(run.stdout).not.toMatch(/^FORGED/m);
  });
});

describe('R6-3: usage errors (exit 2): the file and the flag named', () => {
  it.each<[string, () => string[], (args: string[]) => string]>([
    [
      'a missing file',
      () => ['usage', join(dir, 'nope.jsonl')],
      ([, f]) => `the file ${f} cannot be read: no such file`,
    ],
    [
      'a directory',
      () => {
        mkdirSync(join(dir, 'adir'), { recursive: true });
        return ['usage', join(dir, 'adir')];
      },
      ([, f]) => `the file ${f} cannot be read: it is a directory, not a file`,
    ],
    [
      'an unknown --format',
      () => ['usage', fixture(CODEX), '--format', 'gemini'],
      () => '--format needs one of claude-transcript, claude-stream, opencode, codex (got "gemini")',
    ],
    [
      'no file',
      () => ['usage'],
      () => "usage needs one argument, the agent's file: subagent-context usage <file> [--format <f>] [--json]",
    ],
    [
      '--format on another command',
      () => ['report', '--format', 'codex'],
      () => '--format does not apply to report (it is for usage)',
    ],
  ])('R6-3: %s', async (_, args, first) => {
    const argv = args();
    const run = await runCliCaptured(argv);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr.split('\n')[0]).toBe(first(argv));
  });

  it('R6-3: a file no agent wrote says to pass --format', async () => {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'hello\n{"a":1}\n');
    const run = await runCliCaptured(['usage', file]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(
      /^cannot tell which agent wrote .*notes\.txt .*: pass --format claude-transcript\|claude-stream\|opencode\|codex$/m,
    );
  });
});

describe('R6-3: hostile files', () => {
  it('R6-3: any content, with each format: exit 0 with a JSON document whose counts are valid, never a crash', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.string({ unit: 'binary' }),
            fc.jsonValue().map((v) => JSON.stringify(v)),
          ),
          { maxLength: 8 },
        ),
        fc.constantFrom('claude-transcript', 'claude-stream', 'opencode', 'codex'),
        async (lines, format) => {
          const file = join(dir, `hostile-${n++}.jsonl`);
          writeFileSync(file, lines.join('\n'));
          const run = await runCliJson(['usage', file, '--format', format, '--json']);
          expect(run.code).toBe(EXIT.ok);
          expect(Number.isSafeInteger(run.json.unreadable_lines)).toBe(true);
          for (const s of run.json.subagents) expect(s.unreadable_lines).toBeLessThanOrEqual(run.json.unreadable_lines);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('R6-3: a line nested 100,000 deep, a number beyond any double and a truncated array are unreadable lines, not failures', async () => {
    const file = join(dir, 'deep.jsonl');
    writeFileSync(file, `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}\n${'9'.repeat(400)}\n[{"info":`);
    const run = await runCliJson(['usage', file, '--format', 'codex', '--json']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.json.unreadable_lines).toBe(3);
    const array = join(dir, 'broken-array.json');
    writeFileSync(array, '[{"info": {"role": "assistant"');
    const opencode = await runCliJson(['usage', array, '--format', 'opencode', '--json']);
    expect(opencode.json.unreadable_lines).toBe(1);
    expect(opencode.json.subagents).toStrictEqual([{ key: null, usage: {}, unreadable_lines: 1 }]);
  });
});
