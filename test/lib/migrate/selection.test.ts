import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { readAll } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { hostHolds, insertHostMessage, subagentDoc } from './host-messages.js';

describe.each(TARGET_FIXTURES)('backfill selection on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });

  const keys = async () => (await readAll(t.db)).map((r) => `${r.task_session_id}/${r.tool_call_id}`).sort();

  it('AC-21: backfills only messages whose metadata kind is subagent_task', async () => {
    await insertHostMessage(t.db, { id: 'm1', metadata: subagentDoc({ top: { tool_call_id: 'c1' } }) });
    await insertHostMessage(t.db, {
      id: 'm2',
      metadata: subagentDoc({ top: { tool_call_id: 'c2' }, kind: 'shell_exec' }),
    });
    await insertHostMessage(t.db, { id: 'm3', metadata: { tool_call_id: 'c3', status: 'completed' } });
    const report = await runMigration(t.db);
    expect(await keys()).toEqual(['s1/c1']);
    expect(report).toMatchObject({ inserted: 1, matched: 1 });
  });

  it('AC-21a: skips subagent messages without a task_id or tool_call_id', async () => {
    await insertHostMessage(t.db, { id: 'm1', metadata: subagentDoc({ top: { tool_call_id: 'c1' } }), taskId: '' });
    await insertHostMessage(t.db, { id: 'm2', metadata: subagentDoc({ top: { tool_call_id: '' } }) });
    await insertHostMessage(t.db, { id: 'm3', metadata: subagentDoc({ top: { tool_call_id: undefined } }) });
    await insertHostMessage(t.db, { id: 'm4', metadata: subagentDoc({ top: { tool_call_id: 'c4' } }) });
    const report = await runMigration(t.db);
    expect(await keys()).toEqual(['s1/c4']);
    expect(report).toMatchObject({ inserted: 1, matched: 1 });
  });

  it('AC-21b: two messages for one (session, tool_call_id) give one row, from the newest created_at', async () => {
    await insertHostMessage(t.db, {
      id: 'm9',
      metadata: subagentDoc({ task: { model: 'older' } }),
      createdAt: '2026-08-12T13:24:58.123456Z',
    });
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: subagentDoc({ task: { model: 'newer' } }),
      createdAt: '2026-08-12T13:24:58.123457Z',
    });
    await insertHostMessage(t.db, {
      id: 'm5',
      metadata: subagentDoc({ task: { model: 'other session' } }),
      session: 's2',
    });
    const report = await runMigration(t.db);
    expect(report).toMatchObject({ inserted: 2, matched: 3 });
    const rows = await readAll(t.db);
    expect(rows.find((r) => r.task_session_id === 's1')).toMatchObject({
      model: 'newer',
      observed_at: '2026-08-12T13:24:58.123457Z',
    });
    expect(rows.find((r) => r.task_session_id === 's2')).toMatchObject({ model: 'other session' });
  });

  it('AC-21b: on equal created_at the greatest message id supplies the row', async () => {
    await insertHostMessage(t.db, { id: 'm2', metadata: subagentDoc({ task: { model: 'greatest id' } }) });
    await insertHostMessage(t.db, { id: 'm10', metadata: subagentDoc({ task: { model: 'smaller id' } }) });
    await runMigration(t.db);
    expect(await readAll(t.db)).toMatchObject([{ model: 'greatest id' }]);
  });

  it('AC-23a: a live row with the same key wins; the backfill does not touch it', async () => {
    await seedSession(t.db);
    const live = write({
      execution_id: '',
      tool_call_id: 'c1',
      subagent_task: { model: 'live model', total_tokens: 10 },
    });
    await writeBatch(t.db, [live]);
    const before = await readAll(t.db);
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: subagentDoc({ task: { model: 'backfilled', total_tokens: 99 } }),
    });
    const report = await runMigration(t.db);
    expect(report).toMatchObject({ inserted: 0, matched: 1 });
    expect(await readAll(t.db)).toEqual(before);
  });

  it('AC-22: the backfill costs the same round trips for 1 message as for 60', async () => {
    const cost = async (messages: number) => {
      for (let i = 0; i < messages; i++) {
        await insertHostMessage(t.db, {
          id: `m${messages}-${i}`,
          metadata: subagentDoc({ top: { tool_call_id: `c${messages}-${i}` } }),
        });
      }
      const before = t.db.stats.roundTrips;
      const report = await runMigration(t.db);
      expect(report.inserted).toBe(messages);
      return t.db.stats.roundTrips - before;
    };
    const one = await cost(1);
    await t.db.query('DELETE FROM kandev_meta');
    await t.db.query(`DELETE FROM ${TABLE}`);
    await t.db.query('DELETE FROM task_session_messages');
    expect(await cost(60)).toBe(one);
  });

  it('AC-23b: malformed metadata never aborts the statement: unreadable documents are skipped, bad values are NULL', async () => {
    const unreadable: ReadonlyArray<string | null | Record<string, unknown>> = [
      null,
      '',
      'null',
      '{bad',
      '{"tool_call_id": "c1", "normalized": {"kind": "subagent_task"',
      '[1, 2]',
      '"subagent_task"',
      '42',
      'true',
      { tool_call_id: 'x', normalized: 'subagent_task' },
      { tool_call_id: 'x', normalized: { kind: 5 } },
      { tool_call_id: 'x', normalized: { kind: ['subagent_task'] } },
    ];
    // On the real host's store the documents it cannot parse cannot exist (its indexes refuse them).
    for (const [i, metadata] of unreadable.entries()) {
      if (hostHolds(t.db, metadata)) await insertHostMessage(t.db, { id: `bad${i}`, metadata });
    }
    await insertHostMessage(t.db, {
      id: 'ok1',
      metadata: subagentDoc({
        top: { tool_call_id: 'ok1' },
        task: { total_tokens: 'lots', duration_ms: 0.5, tool_use_count: -1, is_async: 'yes' },
      }),
    });
    await insertHostMessage(t.db, {
      id: 'ok2',
      metadata: { tool_call_id: 'ok2', status: 7, normalized: { kind: 'subagent_task', subagent_task: null } },
    });
    await insertHostMessage(t.db, {
      id: 'ok3',
      metadata: { tool_call_id: 'ok3', normalized: { kind: 'subagent_task', subagent_task: 'oops' } },
    });
    const report = await runMigration(t.db);
    expect(report).toMatchObject({ backfill: 'completed', inserted: 3, matched: 3 });
    const rows = await readAll(t.db);
    expect(rows.map((r) => r.tool_call_id).sort()).toEqual(['ok1', 'ok2', 'ok3']);
    for (const row of rows) {
      expect(row).toMatchObject({ total_tokens: null, duration_ms: null, tool_use_count: null, is_async: 0 });
    }
    expect(rows.find((r) => r.tool_call_id === 'ok2')).toMatchObject({
      tool_status: null,
      agent_status: null,
      subagent_type: null,
      settled_at: null,
    });
  });

  it.runIf(fixture === 'host')(
    "the real host's store refuses a metadata document its indexes cannot parse",
    async () => {
      const refused = ['{bad', ''];
      if (name !== 'sqlite') refused.push('{"tool_call_id": "c\\u0000"}');
      for (const [i, metadata] of refused.entries()) {
        expect(hostHolds(t.db, metadata)).toBe(false);
        await expect(insertHostMessage(t.db, { id: `r${i}`, metadata })).rejects.toThrow();
      }
      for (const metadata of [null, 'null', '[1, 2]', '"subagent_task"', '42'])
        expect(hostHolds(t.db, metadata)).toBe(true);
    },
  );

  it('AC-24e: backfill_through is the newest qualifying created_at to the microsecond', async () => {
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: subagentDoc({ top: { tool_call_id: 'c1' } }),
      createdAt: '2026-08-12T13:24:58.999999Z',
    });
    await insertHostMessage(t.db, {
      id: 'm2',
      metadata: subagentDoc({ top: { tool_call_id: 'c2' } }),
      createdAt: '2026-08-12T13:24:59Z',
    });
    await insertHostMessage(t.db, {
      id: 'm3',
      metadata: subagentDoc({ top: { tool_call_id: 'c3' } }),
      createdAt: '2026-08-12T13:24:58.5Z',
    });
    // newer, but not qualifying: no identity, not a subagent, unreadable
    await insertHostMessage(t.db, {
      id: 'm4',
      metadata: subagentDoc({ top: { tool_call_id: '' } }),
      createdAt: '2026-08-12T13:25:00Z',
    });
    await insertHostMessage(t.db, { id: 'm5', metadata: { status: 'completed' }, createdAt: '2026-08-12T13:25:01Z' });
    if (hostHolds(t.db, '{bad'))
      await insertHostMessage(t.db, { id: 'm6', metadata: '{bad', createdAt: '2026-08-12T13:25:02Z' });
    const report = await runMigration(t.db);
    expect(report.backfillThrough).toBe('2026-08-12T13:24:59.000000000Z');
  });

  it('AC-24e: backfill_through tells apart created_at values 1 µs apart', async () => {
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: subagentDoc({ top: { tool_call_id: 'c1' } }),
      createdAt: '2026-08-12T13:24:58.123457Z',
    });
    await insertHostMessage(t.db, {
      id: 'm2',
      metadata: subagentDoc({ top: { tool_call_id: 'c2' } }),
      createdAt: '2026-08-12T13:24:58.123456Z',
    });
    const report = await runMigration(t.db);
    expect(report.backfillThrough).toBe('2026-08-12T13:24:58.123457000Z');
  });

  it("AC-24f: backfill_through is '' when nothing qualified, and the report says so", async () => {
    await insertHostMessage(t.db, { id: 'm1', metadata: subagentDoc({ top: { tool_call_id: '' } }) });
    const report = await runMigration(t.db);
    expect(report).toMatchObject({ backfill: 'completed', inserted: 0, matched: 0, backfillThrough: '' });
  });
});
