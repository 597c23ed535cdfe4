/**
 * Every default and deployment figure in one place. The code reads these, the CLI usage text
 * prints them, and test/defaults.test.ts checks serverless.yml against them (the YAML cannot
 * import TypeScript, so the test keeps the two equal).
 */

/** Powertools service name (logs, metric dimension) and `service:` in serverless.yml. */
export const SERVICE_NAME = 'subagent-context';

/** CloudWatch namespace of every metric (POWERTOOLS_METRICS_NAMESPACE overrides it). */
export const METRICS_NAMESPACE = 'SubagentContext';

/**
 * Reading a SQLite store (the CLI's read-only opens: report, publish, health --full, export and
 * spend --dry-run): at most this many reader threads, each with its own read-only connection, run
 * the report's independent statements side by side (issue 59, lib/db/sqlite-readers.ts), as
 * PostgreSQL's pool does; never more than the machine's cores (openSqlite), and none on one core.
 */
export const SQLITE_MAX_READERS = 4;

/** Health: messages newer than this are not yet expected to have rows (frames wait in the queue; docs/health.md). */
export const HEALTH_GRACE_SECONDS = 900;

/** Health: pause before a non-zero shortfall is evaluated again (AC-28b), so in-flight batches can land. */
export const HEALTH_CONFIRM_DELAY_SECONDS = 5;

/** Health: how often the scheduled check runs. */
export const HEALTH_SCHEDULE = 'rate(5 minutes)';

/** Health: the scheduled check starts each window this long before its checkpoint (late commits; docs/health.md). */
export const HEALTH_OVERLAP_SECONDS = 300;

/**
 * Health: the longest slice of history one evaluation of the scheduled check covers. A window that
 * would be longer (the first run after an upgrade, a schedule that was off, a shortfall holding the
 * checkpoint) is verified slice by slice, so no statement's cost grows with the history (docs/health.md#catching-up).
 */
export const HEALTH_MAX_WINDOW_SECONDS = 3_600;

/** Health: a scheduled run starts no further catch-up slice after this long (docs/health.md#catching-up). */
export const HEALTH_CATCH_UP_SECONDS = 30;

/**
 * Health: the shortest slice HEALTH_MAX_WINDOW_SECONDS may set (issue 20 D9). Below it a slice
 * verifies almost nothing per query — at 1e-7 s every window was empty, a known loss reported as
 * shortfall 0 and the checkpoint never moved — so a smaller value is refused, not obeyed.
 */
export const HEALTH_MIN_WINDOW_SECONDS = 30;

/** Health: HEALTH_CATCH_UP_SECONDS is 0 (one slice per run) or at least this (D9: a fraction of a second is a typo). */
export const HEALTH_MIN_CATCH_UP_SECONDS = 1;

/** Alarms: the scheduled health check's checkpoint older than this (a shortfall holds it) alarms. */
export const HEALTH_CHECKPOINT_LAG_ALARM_SECONDS = 21_600;

/** Health: when the daily full audit runs (docs/health.md). */
export const HEALTH_AUDIT_SCHEDULE = 'cron(30 3 * * ? *)';

/**
 * Health: the daily full audit is on by default (issue 26): it is what checks every message at
 * least once (late commits, later metadata changes, the history before capture_since).
 */
export const HEALTH_AUDIT_ENABLED = true;

/** Records per ingest invocation (the SQS event source's batchSize; also the local poller's). */
export const INGEST_BATCH_SIZE = 10;

/** Concurrent ingest invocations at most (protects the database's connection limit). */
export const INGEST_MAX_CONCURRENCY = 5;

/** Function timeouts, seconds. */
export const INGEST_TIMEOUT_SECONDS = 30;
export const HEALTH_TIMEOUT_SECONDS = 120;
export const MIGRATE_TIMEOUT_SECONDS = 900;

/**
 * The server's own cap on one statement (R2-5), per caller: it ends a statement even when this
 * process is frozen or gone. Ingest keeps the database layer's 25 s (lib/db/neon.ts
 * DEFAULT_STATEMENT_TIMEOUT_MS, under its 30 s timeout); health and migrate get their function's
 * timeout (the full audit and the backfill are long single statements on a large store); the CLI,
 * run by an operator, the migrate function's (`--statement-timeout` changes it). An invocation's
 * deadline is tighter still and also enforced (lib/deadline.ts).
 */
export const STATEMENT_TIMEOUT_SECONDS = Object.freeze({
  health: HEALTH_TIMEOUT_SECONDS,
  migrate: MIGRATE_TIMEOUT_SECONDS,
  cli: MIGRATE_TIMEOUT_SECONDS,
});

/** Queue visibility timeout: at least 6 × the ingest timeout (AWS guidance for SQS event sources). */
export const QUEUE_VISIBILITY_TIMEOUT_SECONDS = 180;

/** Deliveries of a frame before SQS moves it to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;

/** Alarms: the oldest queued message older than this means ingest is not keeping up. */
export const OLDEST_MESSAGE_AGE_ALARM_SECONDS = 900;

/** Alarms: a health datapoint is expected in every window of this length (≥ 2 schedule periods). */
export const HEALTH_MISSING_WINDOW_SECONDS = 900;

/** The producer's bounds (docs/producers.md); each is an option of createFrameProducer. */
export const PRODUCER_DEFAULTS = Object.freeze({
  /** one SendMessageBatch call, connect + answer */
  requestTimeoutMs: 3_000,
  maxBufferedFrames: 10_000,
  maxBufferedBytes: 8 * 1024 * 1024,
  flushIntervalMs: 200,
  /** sends of one frame before it is dropped (and counted) */
  maxAttempts: 5,
  /** first retry delay; doubles up to maxBackoffMs */
  backoffMs: 100,
  maxBackoffMs: 5_000,
  /** close() on process exit waits at most this long */
  exitTimeoutMs: 5_000,
  /** one WARN line per drop reason per interval */
  dropLogIntervalMs: 60_000,
});

/**
 * The page (`report --html`, docs/page.md): fan-out trees for at most this many of the most recent
 * turns, and at most this many task rows, so a large store's page stays small (R3-9: 100k rows
 * stay under 2 MB). `--trees N` and `--limit N` choose fewer or more. Whatever the store, the page
 * stays under 2 MB (R4-4): at most `nodesPerTurn` subagents of a turn are drawn ("and 29,800
 * more"), the trees stop at `treeBytes` of markup, and host text is cut at `textChars` characters
 * (ids at `idChars`) with its full length stated.
 */
export const PAGE_DEFAULTS = Object.freeze({
  trees: 50,
  tasks: 200,
  nodesPerTurn: 200,
  treeBytes: 800_000,
  textChars: 160,
  idChars: 80,
});

/** OTLP export (docs/otlp.md): the bounds of one run, the CLI's and the scheduled function's alike. */
export const EXPORT_DEFAULTS = Object.freeze({
  /** spans per OTLP request at most (a collector's usual limit is a few MB; a span here is < 1 KB) */
  batchSpans: 512,
  /** turns per database read */
  pageTurns: 500,
  /** a turn is exported once its newest write is this old (a late commit cannot land behind the position) */
  settleSeconds: 60,
  /**
   * a resumed export starts this far before its position (R3-1: a row's updated_at is its newest
   * observation, so a frame delivered late lands behind it by up to the queue's delay): the
   * health grace, the delay the pipeline already budgets for (docs/otlp.md#incremental-export)
   */
  lookbackSeconds: 900,
  /**
   * one attempt's whole bound (lib/export/otlp/transport.ts): connecting, sending, the answer's
   * status and headers and its body together, not an idle socket's (issue 48: a collector answering
   * one byte every 2 s never idles)
   */
  requestTimeoutMs: 10_000,
  /**
   * bytes of a collector's answer read at all (a partialSuccess or an error page is small); past
   * them the connection is closed, and a 2xx answer cut there is of unknown outcome (R4-8)
   */
  answerBytes: 1 << 20,
  /** the longest pause a Retry-After may ask for: beyond it the run fails and resumes later instead */
  maxRetryAfterMs: 60_000,
  /** further attempts of a request that failed retryably (429, 5xx, a timeout, a connection error) */
  retries: 3,
  /** the first pause before such an attempt; doubles each time (a longer Retry-After wins, up to 60 s) */
  backoffMs: 1_000,
});

/** The optional scheduled export (exportEnabled, off by default) and its function timeout. */
export const EXPORT_SCHEDULE = 'rate(15 minutes)';
export const EXPORT_TIMEOUT_SECONDS = 300;

/**
 * The published report (R5-6, docs/publish.md): the scheduled function's and the CLI's bounds alike.
 * A run renders the page at 1M messages in seconds (BENCHMARKS.md), far inside the timeout.
 */
// pure: the other functions import lib/defaults.ts and keep their bundles byte for byte without it
export const PUBLISH_DEFAULTS = /* @__PURE__ */ Object.freeze({
  /** `publish --url-seconds`: how long the printed link opens the page */
  urlSeconds: 3_600,
  /** the longest a SigV4 presigned URL can live (S3 refuses a longer X-Amz-Expires) */
  maxUrlSeconds: 604_800,
  /** one object's upload, retries included: an endpoint that does not answer fails the run after this */
  requestTimeoutMs: 30_000,
  /** a connection to the endpoint that is not established by then counts as not answering */
  connectTimeoutMs: 5_000,
  /** attempts of one request (the SDK's retry of a 5xx, a throttle, a dropped connection) */
  maxAttempts: 3,
});

/** The optional scheduled publish (publishEnabled, off by default), its function timeout and retention. */
export const PUBLISH_SCHEDULE = 'rate(1 hour)';
export const PUBLISH_TIMEOUT_SECONDS = 300;
export const PUBLISH_RETENTION_DAYS = 30;
