import type { Queryable } from '../../lib/db/database.js';
import { parseRfc3339 } from '../../lib/time.js';
import { seedSession, seedTurn } from './frames.js';

/** One stored row, as the host's own writer stores it (no last_observed_at: R3-3); defaults below. */
export interface StoredRow {
  task_session_id?: string;
  task_id?: string;
  turn_id?: string | null;
  tool_call_id: string;
  agent_execution_id?: string;
  parent_tool_call_id?: string | null;
  subagent_type?: string | null;
  description?: string | null;
  agent_id?: string | null;
  child_session_id?: string | null;
  model?: string | null;
  agent_status?: string | null;
  tool_status?: string | null;
  is_async?: 0 | 1;
  total_tokens?: number | null;
  tool_use_count?: number | null;
  duration_ms?: number | null;
  source?: 'live' | 'backfill';
  observed_at: string;
  settled_at?: string | null;
  updated_at?: string;
}

const COLUMNS = [
  'id',
  'task_session_id',
  'task_id',
  'turn_id',
  'tool_call_id',
  'agent_execution_id',
  'parent_tool_call_id',
  'subagent_type',
  'description',
  'agent_id',
  'child_session_id',
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
] as const;
const TIMES = new Set(['observed_at', 'settled_at', 'updated_at']);

export function withDefaults(row: StoredRow): Required<StoredRow> {
  return {
    task_session_id: 's1',
    task_id: 't1',
    turn_id: 'u1',
    agent_execution_id: 'e1',
    parent_tool_call_id: null,
    subagent_type: 'general-purpose',
    description: null,
    agent_id: null,
    child_session_id: null,
    model: null,
    agent_status: null,
    tool_status: null,
    is_async: 0,
    total_tokens: null,
    tool_use_count: null,
    duration_ms: null,
    source: 'live',
    settled_at: null,
    updated_at: row.settled_at ?? row.observed_at,
    ...row,
  };
}

/**
 * Inserts rows in the host's own style (one INSERT per row, as its writer does), with the
 * sessions and turns they reference, on whichever host fixture the test runs on.
 */
export async function insertRows(db: Queryable, rows: readonly StoredRow[]): Promise<void> {
  const d = db.dialect;
  for (const input of rows) {
    const row = withDefaults(input);
    await seedSession(db, row.task_session_id, row.task_id);
    if (row.turn_id !== null) await seedTurn(db, row.turn_id, row.task_session_id);
    const values = COLUMNS.map((c) => {
      if (c === 'id') return `${row.task_session_id}/${row.agent_execution_id}/${row.tool_call_id}`;
      const value = row[c];
      if (TIMES.has(c) && value !== null) {
        const us = parseRfc3339(String(value));
        if (us === undefined) throw new Error(`test row: bad instant ${value}`);
        return d.encodeTimestamp(us);
      }
      return value;
    });
    const placeholders = COLUMNS.map((c, i) => (TIMES.has(c) ? d.timestampParam(i + 1) : `$${i + 1}`));
    await db.query(
      `INSERT INTO task_session_subagents (${COLUMNS.join(', ')}) VALUES (${placeholders.join(', ')})`,
      values,
    );
  }
}

/**
 * Lets the store hold rows whose session is gone, as a host store does where the foreign key is
 * not enforced (SQLite without PRAGMA foreign_keys, which the host's driver does not set), then
 * deletes the session as the host does.
 */
export async function deleteSessionKeepingRows(db: Queryable, session: string): Promise<void> {
  if (db.dialect.name === 'sqlite') await db.query('PRAGMA foreign_keys = OFF');
  else {
    const fks = await db.query<{ conname: string }>(
      "SELECT conname FROM pg_constraint WHERE conrelid = 'task_session_subagents'::regclass AND contype = 'f'",
    );
    for (const { conname } of fks) await db.query(`ALTER TABLE task_session_subagents DROP CONSTRAINT ${conname}`);
  }
  await db.query('DELETE FROM task_session_turns WHERE task_session_id = $1', [session]);
  await db.query('DELETE FROM task_sessions WHERE id = $1', [session]);
}

/** Sets one stored row's timestamp column (`text` RFC 3339) in the dialect's own encoding. */
export async function setStoredTime(db: Queryable, toolCallId: string, column: string, text: string): Promise<void> {
  const us = parseRfc3339(text);
  if (us === undefined) throw new Error(`test row: bad instant ${text}`);
  const d = db.dialect;
  await db.query(`UPDATE task_session_subagents SET ${column} = ${d.timestampParam(1)} WHERE tool_call_id = $2`, [
    d.encodeTimestamp(us),
    toolCallId,
  ]);
}

/**
 * R4-4's stores: `n` rows of one turn (session s1, task t1, turn u1, execution e1), tool calls
 * c0…c{n-1}, inserted by one INSERT … SELECT over a generated series (one statement however large,
 * on both dialects). `shape` `deep`: each row's parent is the one before it (a chain n deep);
 * `wide`: no row has a parent (one turn n wide). Each row is observed one microsecond after the last.
 */
export async function insertGeneratedTurn(db: Queryable, n: number, shape: 'deep' | 'wide'): Promise<void> {
  const d = db.dialect;
  await seedSession(db, 's1', 't1');
  await seedTurn(db, 'u1', 's1');
  const sqlite = d.name === 'sqlite';
  const series = sqlite ? `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${n - 1}) ` : '';
  const from = sqlite ? 'FROM n' : `FROM generate_series(0, ${n - 1}) AS n(i)`;
  const id = (prefix: string, offset = '') =>
    sqlite ? `'${prefix}' || (i${offset})` : `'${prefix}' || (i${offset})::text`;
  const parent = shape === 'deep' ? `CASE WHEN i = 0 THEN NULL ELSE ${id('c', ' - 1')} END` : 'NULL';
  const base = parseRfc3339('2026-08-12T13:00:00Z')!;
  // observed_at = base + i µs, in each dialect's own arithmetic
  const observed = sqlite
    ? `strftime('%Y-%m-%d %H:%M:%S', ${Number(base / 1_000_000n)} + i / 1000000, 'unixepoch') || '.' || substr('000000' || (i % 1000000), -6) || '+00:00'`
    : `${d.timestampParam(1)} + (i * interval '1 microsecond')`;
  const params = sqlite ? [] : [d.encodeTimestamp(base)];
  await db.query(
    `INSERT INTO task_session_subagents (${COLUMNS.join(', ')})
${series}SELECT ${id('s1/e1/c')}, 's1', 't1', 'u1', ${id('c')}, 'e1', ${parent}, 'general-purpose', NULL, NULL, NULL, NULL,
  'completed', 'complete', 0, 1000 + i, i % 7, 60000 + i, 'live', ${observed}, NULL, ${observed}
${from}`,
    params,
  );
}
