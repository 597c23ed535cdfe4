import type { Queryable } from '../db/database.js';

/** The two `kandev_meta` keys this project owns (docs/migrate.md). */
export const CAPTURE_SINCE_KEY = 'subagent_context_capture_since';
export const BACKFILL_THROUGH_KEY = 'subagent_context_backfill_through';

export interface MetaKeys {
  /** absent → undefined; present values are returned byte-identical (possibly '') */
  captureSince: string | undefined;
  backfillThrough: string | undefined;
}

export async function readMetaKeys(db: Queryable): Promise<MetaKeys> {
  const rows = await db.query<{ key: string; value: string }>(
    'SELECT key, value FROM kandev_meta WHERE key IN ($1, $2)',
    [CAPTURE_SINCE_KEY, BACKFILL_THROUGH_KEY],
  );
  const value = (key: string) => rows.find((r) => r.key === key)?.value;
  return { captureSince: value(CAPTURE_SINCE_KEY), backfillThrough: value(BACKFILL_THROUGH_KEY) };
}
