import type { Queryable } from '../../db/database.js';
import { runHealthCheck } from '../../health/check.js';
import type { HealthReport } from '../../health/report.js';
import { EXIT } from '../exit-codes.js';
import type { CommandResult } from '../io.js';
import { renderFacts, renderTable } from '../table.js';

export function renderHealth(report: HealthReport): string {
  const facts = renderFacts([
    ['status', report.status],
    ['shortfall', report.shortfall],
    ['excess', report.excess],
    ['collisions', report.collisions],
    ['last observed', report.lastObservedAt],
    ['capture_since', report.captureSince],
    ['checked at', report.checkedAt],
  ]);
  if (report.missing.length === 0) return facts;
  const missing = renderTable(['task_session_id', 'tool_call_id'], report.missing.map((m) => [m.task_session_id, m.tool_call_id]));
  return `${facts}\n\nmissing (sample):\n${missing}`;
}

/** `subagent-context health`: exit 0 only when healthy; not_activated, silent and shortfall exit 3. */
export async function healthCommand(
  db: Queryable,
  options: { graceSeconds: number; confirmDelayMs?: number },
): Promise<CommandResult<HealthReport>> {
  const report = await runHealthCheck(db, options);
  return { exitCode: report.status === 'healthy' ? EXIT.ok : EXIT.attention, result: report, text: renderHealth(report) };
}
