import { describe, expect, it } from 'vitest';
import { renderHealth } from '../../../lib/cli/commands/health.js';
import type { Queryable } from '../../../lib/db/database.js';
import { formatKey } from '../../../lib/time.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import {
  at,
  check,
  createHostToolCallIndex,
  dropHostToolCallIndex,
  MINUTE,
  seedMessage,
  seedRow,
  setCaptureSince,
} from './seed.js';

const SINCE = at('2026-08-12T12:00:00Z');
const NOW = SINCE + 120n * MINUTE;
const LIVE = SINCE + 10n * MINUTE;

/** A recorder in front of a real database: the statements a check sends, in order. */
function recording(db: Queryable): { db: Queryable; statements: { sql: string; params: readonly unknown[] }[] } {
  const statements: { sql: string; params: readonly unknown[] }[] = [];
  return {
    statements,
    db: {
      dialect: db.dialect,
      query: (sql, params = []) => {
        statements.push({ sql, params });
        return db.query(sql, params);
      },
    },
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Plans?: PlanNode[];
}

/**
 * Every read of task_session_messages in a statement's plan, each with the condition that bounds
 * it: PostgreSQL's scan nodes on the table (a Seq Scan has none), SQLite's SCAN/SEARCH of `msg`.
 */
async function messageReads(db: Queryable, sql: string, params: readonly unknown[]): Promise<string[]> {
  if (db.dialect.name === 'postgres') {
    const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
    const raw = row!['QUERY PLAN'];
    const [{ Plan }] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
    const reads: string[] = [];
    const walk = (node: PlanNode) => {
      if (node['Relation Name'] === 'task_session_messages')
        reads.push(
          `${node['Node Type']} ${node['Index Name'] ?? ''} bound by ${node['Index Cond'] ?? node['Recheck Cond'] ?? 'nothing'}`,
        );
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(Plan);
    return reads;
  }
  const rows = await db.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
  return rows.map((r) => r.detail).filter((detail) => /^(SCAN|SEARCH) msg\b/.test(detail));
}

/*
 * Issue 26: without the host's idx_messages_metadata_tool_call_id nothing finds a row's message
 * short of reading every message, so the scheduled check does not compute excess there: it says so
 * in the report and leaves it to the full audit (daily by default), which counts it. With the
 * index it is computed in the window as before. Both host schemas: the real host's DDL has the
 * index (dropped here for an older host), the minimal one never has it (added here).
 */
describe.each(TARGET_FIXTURES)('issue 26: excess in the scheduled check on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });

  /** One covered subagent and one row with no message at all (an excess key), both in the window. */
  async function store(): Promise<void> {
    await setCaptureSince(t.db, formatKey(SINCE));
    await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE });
    await seedRow(t.db, { toolCallId: 'c1', observedAt: LIVE });
    await seedRow(t.db, { toolCallId: 'orphan', observedAt: LIVE });
  }

  it("issue 26: with the host's index the scheduled check counts the window's excess", async () => {
    await createHostToolCallIndex(t.db);
    await store();
    expect(await check(t.db, NOW)).toMatchObject({
      status: 'healthy',
      kind: 'scheduled',
      excess: 1,
      excessLeftToAudit: null,
    });
  });

  it("issue 26: without the host's index the scheduled check leaves excess to the full audit and says so; the audit counts it", async () => {
    await dropHostToolCallIndex(t.db);
    await store();
    const scheduled = await check(t.db, NOW);
    expect(scheduled).toMatchObject({
      status: 'healthy',
      shortfall: 0,
      collisions: 0,
      excess: null,
      excessLeftToAudit: {
        missingIndex: 'idx_messages_metadata_tool_call_id',
        reason: expect.stringMatching(/idx_messages_metadata_tool_call_id[\s\S]*full audit[\s\S]*health --full/),
      },
    });
    expect(renderHealth(scheduled, { graceSeconds: 0 })).toMatch(
      /excess +not computed by the scheduled check: without the host's index idx_messages_metadata_tool_call_id/,
    );
    expect(await check(t.db, NOW, { kind: 'full' })).toMatchObject({ excess: 1, excessLeftToAudit: null });
  });

  it("issue 26: without the host's index every message the scheduled check reads is bounded by created_at (no history scan)", async () => {
    await dropHostToolCallIndex(t.db);
    await store();
    const db = t.connect({ max: 1 });
    // Tiny test tables make a sequential scan cheapest everywhere; off, a plan still scans a table
    // only when no index can bound the read, which is what this looks for.
    if (db.dialect.name === 'postgres') await db.query('SET enable_seqscan = off');
    const recorder = recording(db);
    await check(recorder.db, NOW);
    const reads = recorder.statements.filter((s) => /FROM task_session_messages/.test(s.sql));
    expect(reads.length).toBeGreaterThan(0);
    for (const { sql, params } of reads) {
      const bounds = await messageReads(db, sql, params);
      expect(bounds.length).toBeGreaterThan(0);
      for (const bound of bounds) expect(bound).toMatch(/bound by .*created_at|^SEARCH msg .*\(.*created_at[<>=]/);
    }
  });
});
