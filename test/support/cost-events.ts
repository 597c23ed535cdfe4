import type { Queryable } from '../../lib/db/database.js';
import { parseRfc3339 } from '../../lib/time.js';

/** The cost_source values the host writes under its cost contract v3 (R5-5). */
export type CostSource = 'provider_reported' | 'models_dev_list' | 'unpriced';

/** kandev's office/models CostContractVersion, on every row the contract writes */
export const COST_CONTRACT_VERSION = 3;

export interface CostEvent {
  id: string;
  session: string;
  task: string;
  turn?: string | null;
  /** cost_subcents; the host stores 0 on an unpriced event (R5-1), so omitted it is 0 there */
  subcents?: number;
  estimated?: 0 | 1;
  at: string;
  /**
   * R5-5: the row's cost_source as the host's contract writes it (a string the host has not written
   * yet for hostile cases), with cost_contract_version 3, tokens_out and the cached-token split.
   * null: a legacy row (written before the contract) in a ledger that has the column: NULL
   * cost_source, no contract version. Omitted: the same row, the column not named, so a ledger
   * without it takes it too.
   */
  source?: CostSource | (string & {}) | null;
  /** tokens_out on a contract row: null when the agent reported none; default 1,000 */
  tokensOut?: number | null;
}

/** One event of the host's cost ledger (office_cost_events, R3-7, R5-5), as its writer stores it. */
export async function addCostEvent(db: Queryable, e: CostEvent): Promise<void> {
  const d = db.dialect;
  const at = d.encodeTimestamp(parseRfc3339(e.at)!);
  const subcents = e.subcents ?? (e.source === 'unpriced' ? 0 : undefined);
  if (subcents === undefined)
    throw new Error(`addCostEvent ${e.id}: subcents is required unless the event is unpriced`);
  const values: Record<string, unknown> = {
    id: e.id,
    session_id: e.session,
    task_id: e.task,
    turn_id: e.turn ?? null,
    cost_subcents: subcents,
    estimated: e.estimated ?? 0,
  };
  if (e.source === null) values.cost_source = null;
  else if (e.source !== undefined)
    Object.assign(values, {
      cost_source: e.source,
      cost_contract_version: COST_CONTRACT_VERSION,
      tokens_out: e.tokensOut === undefined ? 1_000 : e.tokensOut,
      tokens_cached_read: 0,
      tokens_cached_write: 0,
    });
  const names = Object.keys(values);
  const n = names.length;
  await db.query(
    `INSERT INTO office_cost_events (${names.join(', ')}, occurred_at, created_at)
     VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}, ${d.timestampParam(n + 1)}, ${d.timestampParam(n + 1)})`,
    [...Object.values(values), at],
  );
}
