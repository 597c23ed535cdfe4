import type { Logger } from '@aws-lambda-powertools/logger';
import { refreshingCredentials } from '../config/database-url.js';
import type { Database } from '../db/database.js';
import { failureFields } from '../db/errors.js';
import { deadlineFrom, type RemainingTime, withinInvocation } from '../deadline.js';
import { atTheEdge } from '../edge.js';
import { graceSecondsFromEnv } from '../health/config.js';
import { logger as defaultLogger } from '../observability.js';
import { type PublishSummary, publishReport } from './run.js';
import { createS3Client, PublishError, type S3Bounds, s3Writer } from './s3.js';
import { type PublishTarget, parseS3Url } from './target.js';

/*
 * The scheduled publish (R5-6, docs/publish.md), off unless publishEnabled: what `subagent-context
 * publish --to s3://PUBLISH_BUCKET/PUBLISH_PREFIX` does, with the stack's bucket and prefix. A run
 * that fails throws: Lambda counts an error, the publish-errors alarm (infra/publish.yml) tells the
 * alarm topic, and latest/ keeps the previous run's objects (lib/publish/run.ts).
 */

export const PUBLISH_BUCKET_ENV = 'PUBLISH_BUCKET';
export const PUBLISH_PREFIX_ENV = 'PUBLISH_PREFIX';

export interface PublishHandlerDeps {
  db: () => Database;
  /** runs before each run (deployed: reads DATABASE_URL from SSM once; the publish function's own parameter) */
  loadConfig?: () => Promise<void>;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** the S3 client's bounds (tests: an endpoint that does not answer fails within them) */
  s3?: S3Bounds;
}

function targetFrom(env: NodeJS.ProcessEnv): PublishTarget {
  const bucket = env[PUBLISH_BUCKET_ENV];
  if (!bucket) throw new PublishError(`${PUBLISH_BUCKET_ENV} is not set: deploy with serverless.yml (publishEnabled)`);
  const prefix = env[PUBLISH_PREFIX_ENV] ?? '';
  // the role's grant and the lifecycle rule are built from the prefix as written (issue 57 #12)
  if (prefix === '' || prefix.startsWith('/') || prefix.endsWith('/'))
    throw new PublishError(
      `${PUBLISH_PREFIX_ENV} ${JSON.stringify(prefix)} is empty or has a slash at an end: the publish role may write only under "<publishPrefix>/*" as written, so no key would match; deploy with publishPrefix as folder names without a slash at either end (e.g. reports)`,
    );
  try {
    return parseS3Url(`s3://${bucket}/${prefix}`);
  } catch (err) {
    throw new PublishError(`${PUBLISH_BUCKET_ENV}/${PUBLISH_PREFIX_ENV}: ${(err as Error).message}`);
  }
}

export type PublishHandler = (event?: unknown, context?: RemainingTime) => Promise<PublishSummary>;

export function createPublishHandler(deps: PublishHandlerDeps): PublishHandler {
  const log = deps.logger ?? defaultLogger;
  let client: ReturnType<typeof createS3Client> | undefined;
  // R2-6: what the function returns and throws leaves through the redaction step (lib/edge.ts)
  return atTheEdge(async (_event, context) => {
    try {
      const env = deps.env ?? process.env;
      const target = targetFrom(env);
      // the whole run within the invocation (issue 57 #8): the report's statements (withinInvocation)
      // and every PUT end by the deadline, so the failure is logged before Lambda stops the function
      const deadline = deadlineFrom(context);
      await deps.loadConfig?.();
      client ??= createS3Client(deps.s3);
      const writer = s3Writer(client, target.bucket, {
        prefix: target.prefix,
        requestTimeoutMs: deps.s3?.requestTimeoutMs,
        env,
        deadline,
      });
      const summary = await refreshingCredentials(() =>
        withinInvocation(deps.db(), context, (db) =>
          publishReport(db, writer, target, { graceSeconds: graceSecondsFromEnv(env) }),
        ),
      );
      log.info('report published', { ...summary });
      return summary;
    } catch (err) {
      log.error('report publish failed', { ...failureFields(err), error: err as Error });
      throw err;
    }
  });
}
