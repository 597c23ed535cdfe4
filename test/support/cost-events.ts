import type { Queryable } from '../../lib/db/database.js';
import { parseRfc3339 } from '../../lib/time.js';

/** One event of the host's cost ledger (office_cost_events, R3-7), as its writer stores it. */
export async function addCostEvent(
  db: Queryable,
  e: {
    id: string;
    session: string;
    task: string;
    turn?: string | null;
    subcents: number;
    estimated?: 0 | 1;
    /** cost contract v3 (R5-1, R5-2): 'provider_reported', 'models_dev_list', 'unpriced'; NULL on a legacy row */
    source?: string | null;
    at: string;
  },
): Promise<void> {
  const d = db.dialect;
  const at = d.encodeTimestamp(parseRfc3339(e.at)!);
  // the column only where the caller names a source: a ledger before contract v3 has none
  const sourced = e.source !== undefined;
  await db.query(
    `INSERT INTO office_cost_events (id, session_id, task_id, turn_id, cost_subcents, estimated, occurred_at, created_at${sourced ? ', cost_source' : ''})
     VALUES ($1, $2, $3, $4, $5, $6, ${d.timestampParam(7)}, ${d.timestampParam(7)}${sourced ? ', $8' : ''})`,
    [e.id, e.session, e.task, e.turn ?? null, e.subcents, e.estimated ?? 0, at, ...(sourced ? [e.source] : [])],
  );
}
