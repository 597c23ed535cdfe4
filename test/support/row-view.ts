import type { SubagentRow, SubagentWrite } from '../../lib/row.js';
import { formatRfc3339 } from '../../lib/time.js';

/** A write as a stored row reads back, without the writer's `id` and `updated_at`. */
export type RowView = Omit<SubagentRow, 'id' | 'updated_at'>;

export function viewOfWrite(w: SubagentWrite): RowView {
  return {
    ...w,
    observed_at: formatRfc3339(w.observed_at),
    settled_at: w.settled_at === null ? null : formatRfc3339(w.settled_at),
    last_observed_at: formatRfc3339(w.last_observed_at),
  };
}

export function viewOfRow(row: SubagentRow): RowView {
  const { id: _id, updated_at: _updatedAt, ...rest } = row;
  return rest;
}
