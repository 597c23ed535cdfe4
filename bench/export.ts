import { type ColumnName, TABLE, COLUMNS as TABLE_COLUMNS } from '../lib/columns.js';
import type { Database } from '../lib/db/database.js';
import { EXPORT_DEFAULTS } from '../lib/defaults.js';
import { type OtlpProtocol, resolveOtlpTarget } from '../lib/export/otlp/config.js';
import { createOtlpSink } from '../lib/export/otlp/transport.js';
import { POSITION_KEY } from '../lib/export/position.js';
import { runExport } from '../lib/export/run.js';
import { ensureSubagentTable } from '../lib/store/schema.js';
import type { Micros } from '../lib/time.js';
import { createHostSchema } from '../local/host-schema.js';
import { startOtlpReceiver } from '../local/otlp-receiver.js';
import { median, timed } from './stats.js';
import type { BenchTarget, BenchTargetName } from './targets.js';

export interface ExportFigures {
  target: BenchTargetName;
  protocol: OtlpProtocol;
  rows: number;
  turns: number;
  /** spans per export: the rows plus one root per turn */
  spans: number;
  requests: number;
  /** request bodies as sent (gzip), per export */
  bytes: number;
  /** median wall time of one whole export, ms */
  wallMs: number;
  spansPerSecond: number;
  perRunMs: number[];
}

/** Rows per turn, cycling: the real store's fan-out shares (1, 3 and 2 most often, one 8). */
const FAN_OUT = [1, 3, 1, 2, 3, 1, 4, 3, 1, 5, 1, 3, 8];
const SESSIONS = 500;
const START: Micros = 1_786_000_000_000_000n;

const COLUMNS = [
  'id',
  'task_session_id',
  'task_id',
  'turn_id',
  'tool_call_id',
  'agent_execution_id',
  'parent_tool_call_id',
  'subagent_type',
  'model',
  'agent_status',
  'tool_status',
  'is_async',
  'total_tokens',
  'tool_use_count',
  'duration_ms',
  'source',
  'observed_at',
  'settled_at',
  'updated_at',
  'last_observed_at',
] as const satisfies readonly ColumnName[];

/**
 * A store of `rows` settled subagent rows in turns of the real fan-out: 75% async_launched with no
 * metrics, the rest completed with all three, the second row of every 3-subagent turn nested under
 * the first. Inserted in one statement per 5,000 rows (the dialect's row-set binding).
 */
export async function seed(db: Database, rows: number): Promise<number> {
  await createHostSchema(db);
  await ensureSubagentTable(db);
  const d = db.dialect;
  const sessions = Array.from({ length: SESSIONS }, (_, i) => [`s${i}`, `t${i % 100}`]);
  await db.query(
    `INSERT INTO task_sessions (id, task_id) ${d.selectRows([{ type: 'text' }, { type: 'text' }])}`,
    d.bindRows([{ type: 'text' }, { type: 'text' }], sessions),
  );
  // Each column's storage type from the one column list (lib/columns.ts).
  const typed = COLUMNS.map((name) => TABLE_COLUMNS.find((c) => c.name === name)!);
  let batch: unknown[][] = [];
  let turns = 0;
  const turnRows: unknown[][] = [];
  const flush = async () => {
    if (turnRows.length > 0) {
      await db.query(
        `INSERT INTO task_session_turns (id, task_session_id) ${d.selectRows([{ type: 'text' }, { type: 'text' }])}`,
        d.bindRows([{ type: 'text' }, { type: 'text' }], turnRows),
      );
      turnRows.length = 0;
    }
    if (batch.length > 0) {
      await db.query(`INSERT INTO ${TABLE} (${COLUMNS.join(', ')}) ${d.selectRows(typed)}`, d.bindRows(typed, batch));
      batch = [];
    }
  };
  let n = 0;
  while (n < rows) {
    const size = Math.min(FAN_OUT[turns % FAN_OUT.length]!, rows - n);
    const session = `s${turns % SESSIONS}`;
    const turn = `u${turns}`;
    turnRows.push([turn, session]);
    for (let k = 0; k < size; k++, n++) {
      const observed = START + BigInt(n) * 1_000_000n;
      const completed = n % 4 === 0;
      const time = (us: Micros) => d.encodeTimestamp(us);
      batch.push([
        `r${n}`,
        session,
        `t${(turns % SESSIONS) % 100}`,
        turn,
        `toolu_${n}`,
        'e1',
        size === 3 && k === 1 ? `toolu_${n - 1}` : null,
        ['general-purpose', 'explore', 'security-reviewer'][n % 3],
        completed ? 'claude-opus-5[1m]' : null,
        completed ? 'completed' : 'async_launched',
        'complete',
        completed ? 0 : 1,
        completed ? 40_000 + (n % 50_000) : null,
        completed ? n % 30 : null,
        completed ? 10_000 + (n % 90_000) : null,
        n % 10 === 0 ? 'backfill' : 'live',
        time(observed),
        time(observed + 2_000_000n),
        time(observed + 2_000_000n),
        time(observed + 2_000_000n),
      ]);
    }
    turns++;
    if (batch.length >= 5_000) await flush();
  }
  await flush();
  return turns;
}

/** One export of the whole store per run (position neither read nor moved), to a receiver that only counts. */
export async function benchExport(
  target: BenchTarget,
  options: { rows: number; runs: number; protocols: readonly OtlpProtocol[] },
): Promise<ExportFigures[]> {
  const bench = await target.fresh();
  const receiver = await startOtlpReceiver({ decode: false });
  try {
    const turns = await seed(bench.db, options.rows);
    const out: ExportFigures[] = [];
    for (const protocol of options.protocols) {
      const otlp = resolveOtlpTarget({ url: receiver.origin, protocol }, {});
      const samples: { ms: number; spans: number; requests: number; bytes: number }[] = [];
      for (let run = 0; run < options.runs; run++) {
        const sink = createOtlpSink(otlp, {
          timeoutMillis: EXPORT_DEFAULTS.requestTimeoutMs,
          retries: EXPORT_DEFAULTS.retries,
          backoffMillis: EXPORT_DEFAULTS.backoffMs,
        });
        const bytesBefore = receiver.bytes;
        const { result, ms } = await timed(() =>
          runExport(bench.db, sink, otlp.url, {
            openSpans: false,
            batchSpans: EXPORT_DEFAULTS.batchSpans,
            pageTurns: EXPORT_DEFAULTS.pageTurns,
            settleSeconds: 0,
            position: 'none',
            positionKey: POSITION_KEY,
          }),
        );
        await sink.shutdown();
        samples.push({ ms, spans: result.spans, requests: result.requests, bytes: receiver.bytes - bytesBefore });
      }
      const wallMs = median(samples.map((s) => s.ms));
      const last = samples[samples.length - 1]!;
      if (last.spans !== options.rows + turns)
        throw new Error(`export sent ${last.spans} spans, expected ${options.rows} rows + ${turns} turns`);
      out.push({
        target: target.name,
        protocol,
        rows: options.rows,
        turns,
        spans: last.spans,
        requests: last.requests,
        bytes: last.bytes,
        wallMs,
        spansPerSecond: last.spans / (wallMs / 1000),
        perRunMs: samples.map((s) => s.ms),
      });
    }
    return out;
  } finally {
    await receiver.close();
    await bench.dispose();
  }
}
