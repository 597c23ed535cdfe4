import type { Queryable } from '../db/database.js';
import { CheckpointError, readCheckpoint } from '../health/checkpoint.js';
import { windowShortfallSql } from '../health/queries.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY, readMetaKeys } from '../store/meta.js';
import { forReading, NotMigratedError, type ReadingConnection } from '../store/reading.js';
import { quoteHostValue } from '../text.js';
import { formatCanonical, formatRfc3339, type Micros, parseStoredTimestamp } from '../time.js';
import type { Completeness } from './document.js';

/*
 * R3-8: how complete the report's figures are, read-only (docs/report.md#completeness). The keys
 * come from kandev_meta; the open shortfall is the health check's own statement (lib/health/
 * queries.ts), never a second one: the scheduled window's, from the checkpoint to now − grace.
 * R4-12: the report costs what it shows, so it never runs the full audit (every message since
 * capture_since: seconds at a million messages): with no checkpoint yet the shortfall is not
 * checked, and a note names the commands that check it (`health`, `health --full`).
 */

export interface ActivationKeys {
  captureSince: Micros | undefined;
  backfillThrough: Micros | undefined;
  verifiedThrough: Micros | undefined;
  notes: string[];
}

/** An instant key: '' is the sentinel for "none" (AC-24f); a value that is no instant is a note, not a crash. */
function instantKey(key: string, value: string | undefined, notes: string[]): Micros | undefined {
  if (value === undefined || value === '') return undefined;
  const us = parseStoredTimestamp(value);
  if (us === undefined) {
    notes.push(
      `kandev_meta key ${key} holds ${quoteHostValue(value)}, which is not an instant: it is reported as null (migrate and health say how to repair it).`,
    );
  }
  return us;
}

export async function readActivationKeys(db: Queryable): Promise<ActivationKeys> {
  const notes: string[] = [];
  const [meta, checkpoint] = await Promise.all([
    readMetaKeys(db),
    readCheckpoint(db).catch((err: unknown) => {
      if (!(err instanceof CheckpointError)) throw err;
      notes.push(`${err.message}.`);
      return undefined;
    }),
  ]);
  const captureSince = instantKey(CAPTURE_SINCE_KEY, meta.captureSince, notes);
  const backfillThrough = instantKey(BACKFILL_THROUGH_KEY, meta.backfillThrough, notes);
  if (captureSince === undefined) {
    notes.push(
      'capture is not activated (no subagent_context_capture_since): completeness is unknown and no shortfall is computed; run `subagent-context migrate`.',
    );
  }
  const verifiedThrough = checkpoint?.at;
  if (captureSince !== undefined && verifiedThrough === undefined) {
    notes.push(
      'the scheduled health check has not verified anything yet (no checkpoint): the shortfall is not checked here; `subagent-context health` checks it and records the checkpoint (`health --full` audits the whole history).',
    );
  }
  return { captureSince, backfillThrough, verifiedThrough, notes };
}

export interface Shortfall {
  shortfall: Completeness['shortfall'];
  missing: Completeness['missing'];
  notes: string[];
}

/** The open shortfall up to `cutoff` (now − grace) since the checkpoint, with up to 20 missing keys. */
export async function readShortfall(db: Queryable, keys: ActivationKeys, cutoff: Micros): Promise<Shortfall> {
  const { captureSince, verifiedThrough } = keys;
  const unchecked = (notes: string[]): Shortfall => ({
    shortfall: { open: false, count: 0, checked: false },
    missing: [],
    notes,
  });
  // Not activated, or no checkpoint (readActivationKeys notes both): the full audit is health's.
  if (captureSince === undefined || verifiedThrough === undefined) return unchecked([]);
  // biome-ignore lint/complexity/useMathMinMax: instants are bigint, which Math.max does not take
  const from = verifiedThrough > captureSince ? verifiedThrough : captureSince;
  if (cutoff <= from) return { shortfall: { open: false, count: 0, checked: true }, missing: [], notes: [] };
  // R3-3: a store the host activated itself has nothing of ours; host metadata is read with what
  // the store supports (lib/store/reading.ts), and where nothing does, the shortfall is a note.
  let reader: ReadingConnection;
  try {
    reader = await forReading(db);
  } catch (err) {
    if (!(err instanceof NotMigratedError)) throw err;
    return unchecked([`the shortfall was not computed: ${err.message}.`]);
  }
  const rows = await reader.query<{ task_session_id: string; tool_call_id: string; total: number | string }>(
    windowShortfallSql(reader.dialect),
    [formatCanonical(captureSince), formatCanonical(from), formatCanonical(cutoff)],
  );
  const count = Number(rows[0]?.total ?? 0);
  return {
    shortfall: { open: count > 0, count, checked: true },
    missing: rows.map(({ task_session_id, tool_call_id }) => ({ task_session_id, tool_call_id })),
    notes:
      count > 0
        ? [
            `${count} qualifying message key(s) created since ${formatRfc3339(from)} have no row: the figures miss them (run \`subagent-context health\` for the triage).`,
          ]
        : [],
  };
}
