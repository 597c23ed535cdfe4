import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../lib/cli/main.js';
import { openDatabase } from '../lib/db/open.js';
import { runMigration } from '../lib/migrate/run-migration.js';
import { redactText } from '../lib/redact.js';
import { generateHostStore } from '../local/generate-host-store.js';
import { HOST_FIXTURES } from '../local/host-fixtures.js';
import { startLocalPipeline } from '../local/pipeline.js';

/**
 * R4-1 (docs/report.md#output-is-data): the report's data is printed exactly and redaction runs in
 * linear time. `report --json --by task` through the CLI (lib/cli/main.ts: its output boundary
 * included) on a SQLite store of the host's schema, without and with one task title of 1 MiB of
 * hostile text (target: at most 1.5× the time without it); and `redactText` on 1 MiB inputs that
 * made the old expressions backtrack (target: tens of milliseconds).
 */
export interface HostileTextFigures {
  messages: number;
  runs: number;
  plainMs: number;
  hostileMs: number;
  perRunPlainMs: number[];
  perRunHostileMs: number[];
  outputBytes: { plain: number; hostile: number };
  redaction: { input: string; ms: number }[];
}

export const HOSTILE_RATIO_TARGET = 1.5;

const MIB = 2 ** 20;
const mib = (piece: string) => piece.repeat(Math.ceil(MIB / piece.length)).slice(0, MIB);
/** Markup, quotes, controls, U+2028, bidi, lone surrogates, emoji, secret- and URL-looking text. */
const HOSTILE_PIECE =
  '&<>"\'\\,;=\u001b[2J\u001b]52;c;aGk=\u0007\u009b\r\n\t\u007f\u2028\u2029\u202e\ud800😀中文token="abc password: hunter2 http://wiki: ops@corp postgres://u:p@h/d =SUM(A1) ';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timedReport(url: string): Promise<{ ms: number; bytes: number }> {
  let out = '';
  const started = performance.now();
  const code = await runCli(
    ['report', '--json', '--by', 'task', '--database-url', url],
    { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true, isTTY: false }, env: {} },
    { startPipeline: startLocalPipeline },
  );
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`report exited ${code}`);
  JSON.parse(out); // valid JSON, or the benchmark fails
  return { ms, bytes: Buffer.byteLength(out) };
}

export async function benchHostileText(options: { messages: number; runs: number }): Promise<HostileTextFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-bench-hostile-'));
  const url = `sqlite:${join(dir, 'store.db')}`;
  try {
    const db = openDatabase(url, { create: true });
    await HOST_FIXTURES.host.create(db);
    await generateHostStore(db, { messages: options.messages, subagentShare: 0.1, seed: 1, fixture: 'host' });
    await runMigration(db);
    const [first] = await db.query<{ id: string; title: string }>('SELECT id, title FROM tasks ORDER BY id LIMIT 1');
    await timedReport(url); // warm-up
    const plain: number[] = [];
    const hostile: number[] = [];
    const bytes = { plain: 0, hostile: 0 };
    for (let run = 0; run < options.runs; run++) {
      // alternate which goes first, so a drift of the machine hits both
      for (const variant of run % 2 === 0 ? (['plain', 'hostile'] as const) : (['hostile', 'plain'] as const)) {
        await db.query('UPDATE tasks SET title = $1 WHERE id = $2', [
          variant === 'hostile' ? mib(HOSTILE_PIECE) : first!.title,
          first!.id,
        ]);
        const r = await timedReport(url);
        (variant === 'plain' ? plain : hostile).push(r.ms);
        bytes[variant] = r.bytes;
      }
    }
    await db.close();
    const redaction = Object.entries({
      'the hostile title above': mib(HOSTILE_PIECE),
      '`a://` repeated': mib('a://'),
      '`password=` repeated': mib('password='),
      '`x:` repeated': mib('x:'),
      '`@` repeated': mib('@'),
      '`=x:` repeated': mib('=x:'),
      'one word': mib('a'),
    }).map(([input, text]) => {
      redactText(text);
      const times = Array.from({ length: options.runs }, () => {
        const started = performance.now();
        redactText(text);
        return performance.now() - started;
      });
      return { input, ms: median(times) };
    });
    return {
      messages: options.messages,
      runs: options.runs,
      plainMs: median(plain),
      hostileMs: median(hostile),
      perRunPlainMs: plain,
      perRunHostileMs: hostile,
      outputBytes: bytes,
      redaction,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
