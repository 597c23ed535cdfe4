import { TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import type { TurnPosition } from '../report/trees.js';
import { terminalSafe } from '../terminal-text.js';
import { parseStoredTimestamp } from '../time.js';

/*
 * Why a turn could not be read (R4-3, docs/otlp.md#unreadable-values): the tree reader refuses a
 * turn with a timestamp that is not an instant (PostgreSQL `infinity`, `-infinity`, a year past
 * 9999 or BC; SQLite 'garbage', '', 1700000000, year 10000), which the host's table, without
 * CHECKs, can hold. The export then skips the turn, names it here, and moves on, instead of
 * failing on it at every run. One diagnostic read of the turn's timestamps, as stored.
 */

/** Host text in a diagnostic: terminal-safe and short. */
const shown = (value: unknown) => {
  const text = terminalSafe(String(value));
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
};

const readable = (value: unknown) =>
  value === null || value === undefined || parseStoredTimestamp(String(value)) !== undefined;

/** What in the turn is unreadable (`observed_at unreadable ("-infinity", tool call a)`), undefined: nothing is. */
export async function unreadableTurn(db: Queryable, key: TurnPosition): Promise<string | undefined> {
  const reasons: string[] = [];
  const rows = await db.query(
    `SELECT tool_call_id, observed_at, settled_at, updated_at FROM ${TABLE} WHERE task_session_id = $1 AND COALESCE(turn_id, '') = $2`,
    [key.task_session_id, key.turn_key],
  );
  for (const row of rows)
    for (const column of ['observed_at', 'settled_at', 'updated_at'] as const)
      if (!readable(row[column]))
        reasons.push(`${column} unreadable (${shown(row[column])}, tool call ${shown(row.tool_call_id)})`);
  if (key.turn_key !== '') {
    const columns = new Set(
      (await db.query<{ column_name: string }>(db.dialect.columnDefaults, ['task_session_turns'])).map(
        (c) => c.column_name,
      ),
    );
    const times = ['started_at', 'completed_at'].filter((c) => columns.has(c));
    if (times.length > 0) {
      const turns = await db.query(
        `SELECT ${times.join(', ')} FROM task_session_turns WHERE id = $1 AND task_session_id = $2`,
        [key.turn_key, key.task_session_id],
      );
      for (const turn of turns)
        for (const column of times)
          if (!readable(turn[column])) reasons.push(`task_session_turns.${column} unreadable (${shown(turn[column])})`);
    }
  }
  return reasons.length === 0 ? undefined : reasons.join('; ');
}
