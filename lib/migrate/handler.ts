import type { Logger } from '@aws-lambda-powertools/logger';
import { refreshingCredentials } from '../config/database-url.js';
import type { Database } from '../db/database.js';
import { type RemainingTime, withinInvocation } from '../deadline.js';
import { atTheEdge } from '../edge.js';
import { logger as defaultLogger } from '../observability.js';
import { type MigrationReport, runMigration } from './run-migration.js';

export interface MigrateHandlerDeps {
  /** the database, resolved per invocation */
  db: () => Database;
  /** runs before the migration (deployed: reads DATABASE_URL from SSM once) */
  loadConfig?: () => Promise<void>;
  logger?: Logger;
}

export type MigrateHandler = (event?: unknown, context?: RemainingTime) => Promise<MigrationReport>;

/**
 * Operator-invoked (docs/migrate.md): schema plus the one transactional backfill. Rejects with a
 * MigrationError naming the failed step (and logs it at WARN); invoking again retries.
 */
export function createMigrateHandler(deps: MigrateHandlerDeps): MigrateHandler {
  const logger = deps.logger ?? defaultLogger;
  // R2-6: what the function returns and throws leaves through the redaction step (lib/edge.ts)
  return atTheEdge(async (event, context) => {
    const rerunBackfill = rerunRequested(event);
    await deps.loadConfig?.();
    // a rejected password or database name forgets the cached URL, so the next run reads SSM again (R2-4);
    // every statement ends before the invocation does, and the error names the step (R2-5)
    return refreshingCredentials(() =>
      withinInvocation(deps.db(), context, (db) => runMigration(db, { logger, rerunBackfill })),
    );
  });
}

/**
 * `{ "rerunBackfill": true }` runs the backfill's insert again over the history (R3-4,
 * docs/migrate.md#the-backfill-again); any other input (none, the console's `{}`) is a plain migrate.
 */
function rerunRequested(event: unknown): boolean {
  return event !== null && typeof event === 'object' && (event as { rerunBackfill?: unknown }).rerunBackfill === true;
}
