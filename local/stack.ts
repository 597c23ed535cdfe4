import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { type DeadLetter, groupDeadLetters } from '../lib/cli/dead-letters.js';
import type { IngestTotals } from '../lib/cli/ingest-totals.js';
import { type ProxyChoice, proxyFor } from '../lib/cli/local-proxy.js';
import type { ProgressStream } from '../lib/cli/progress.js';
import { TABLE } from '../lib/columns.js';
import { checkDatabaseUrl } from '../lib/config/database-url.js';
import type { Database } from '../lib/db/database.js';
import { openDatabase } from '../lib/db/open.js';
import { PAGE_DEFAULTS, SERVICE_NAME } from '../lib/defaults.js';
import { runHealthCheck } from '../lib/health/check.js';
import type { HealthReport } from '../lib/health/report.js';
import { type MigrationReport, runMigration } from '../lib/migrate/run-migration.js';
import type { Frame } from '../lib/producer/frame.js';
import { createFrameProducer, type ProducerStats } from '../lib/producer/producer.js';
import { USAGE_TOKEN_FIELDS } from '../lib/producer/usage/run-usage.js';
import { redactText } from '../lib/redact.js';
import { buildReport } from '../lib/report/build.js';
import type { FanOutCost, FanOutCostBucket, ReportDocument } from '../lib/report/document.js';
import { renderHtml } from '../lib/report/render/html.js';
import type { SpendReport } from '../lib/spend/run.js';
import { CAPTURE_SINCE_KEY } from '../lib/store/meta.js';
import { formatKey, formatRfc3339, nowMicros, parseStoredTimestamp } from '../lib/time.js';
import { expectedFanOutCost } from './expected-fan-out-cost.js';
import { generateHostStore, type HostStoreSummary } from './generate-host-store.js';
import { HOST_FIXTURES } from './host-fixtures.js';
import {
  type BackfilledRow,
  type HostTurn,
  insertHostMessages,
  type LiveExpectation,
  type LivePlan,
  planLiveStream,
} from './live-stream.js';
import { type OtlpDemoResult, runOtlpDemo } from './otlp-demo.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './pglite-server.js';
import { startLocalPipeline } from './pipeline.js';
import { type DemoPublisher, type LocalS3, type PublishedDemo, publishDemo } from './publish-demo.js';
import { runSpendDemo, type SpendDemo } from './spend-demo.js';

export interface LocalStackOptions {
  /** postgres://… or sqlite:<path> of an EMPTY database; default: embedded PostgreSQL (PGlite) */
  databaseUrl?: string;
  /** messages in the generated host store */
  messages?: number;
  /** new subagent invocations in the live stream */
  live?: number;
  seed?: number;
  /** DATABASE_WS_PROXY for a local PostgreSQL given by databaseUrl */
  wsProxy?: string;
  /** progress lines */
  progress: ProgressStream;
  /** where the report page goes (`report --html`, docs/page.md); default .local/report-page.html */
  page?: string;
  /** then export the store to an OTLP receiver started here (docs/otlp.md#demo-and-benchmark) */
  otlpDemo?: boolean;
  /**
   * R5-6: the S3 emulator the report is published to keeps answering the printed link until this
   * resolves (`npm start -- --serve`: until Ctrl-C); by default it stops with the stack. Called
   * once the stack is finished and its store closed (issue 58 #9), with the result, so the caller
   * prints the summary and the local S3 settings before serving.
   */
  serveUntil?: (result: LocalStackResult, s3: LocalS3) => Promise<void>;
}

/** The default of LocalStackOptions.page, under the git-ignored .local/. */
export const DEFAULT_PAGE = '.local/report-page.html';

export interface PageWritten {
  /** absolute path of the page */
  path: string;
  bytes: number;
  renderMs: number;
  /** the page's own subagents figure (the report's totals) */
  subagents: number;
}

export interface Check {
  name: string;
  expected: string | number;
  got: string | number;
  ok: boolean;
}

export interface RowsBy {
  source: string;
  agent_status: string;
  rows: number;
}

export interface LocalStackResult {
  database: string;
  store: HostStoreSummary;
  migration: MigrationReport;
  plan: { hostMessages: number; framesRecorded: number; invalidBodies: number; expected: LiveExpectation };
  producer: ProducerStats;
  totals: IngestTotals;
  deadLetters: DeadLetter[];
  health: HealthReport;
  rows: RowsBy[];
  page: PageWritten;
  /** R5-6: the report published to the S3 emulator (docs/publish.md) and its link */
  published: PublishedDemo;
  /** with `otlpDemo` */
  otlp?: OtlpDemoResult;
  /** `subagent-context report --by task --limit 5` of what was captured (R3-5) */
  report: ReportDocument;
  /** R6-8: `spend` over the agent records the demo wrote */
  spend: SpendReport;
  checks: Check[];
  ok: boolean;
  durationMs: number;
}

/** Turns the live stream attaches to: spread over the generated sessions. */
const LIVE_TURNS = 40;
/** frames recorded between two looks at the pipeline's progress */
const STREAM_CHUNK = 25;
const MINUTE = 60_000_000n;
/** the generated store's history: the 30 days before the run */
const HISTORY = 30n * 24n * 60n * MINUTE;

/**
 * `npm start`: the whole job on one machine with nothing running — an embedded PostgreSQL (or the
 * given database) behind the real Neon driver, an SQS emulator with the FIFO queue and its DLQ,
 * a generated host store, migrate (backfill), a live stream producer → queue → poller → ingest,
 * then health — and a summary whose every figure is checked against what the store and the stream
 * must produce.
 */
export async function runLocalStack(options: LocalStackOptions): Promise<LocalStackResult> {
  let publisher: DemoPublisher | undefined;
  try {
    const result = await buildStack(options, (p) => (publisher = p));
    // serving needs the S3 emulator only: the store is finished and closed by now
    await options.serveUntil?.(result, publisher!.s3);
    return result;
  } finally {
    await publisher?.stop();
  }
}

async function buildStack(
  options: LocalStackOptions,
  keep: (publisher: DemoPublisher) => void,
): Promise<LocalStackResult> {
  const started = performance.now();
  const say = (line: string) => options.progress.write(`${line}\n`);
  const quiet = new Logger({ serviceName: SERVICE_NAME, logLevel: 'ERROR' });
  let embedded: EmbeddedPostgres | undefined;
  let db: Database | undefined;
  let proxy: ProxyChoice | undefined;
  try {
    let database: string;
    if (options.databaseUrl) {
      checkDatabaseUrl(options.databaseUrl, { kind: 'flag', name: '--database-url' });
      proxy = options.wsProxy ? undefined : await proxyFor(options.databaseUrl, process.env);
      // The stack builds its own store (it must be empty): a new SQLite file is made explicitly.
      db = openDatabase(options.databaseUrl, { wsProxy: options.wsProxy ?? proxy?.wsProxy, create: true });
      database = options.databaseUrl.startsWith('sqlite:')
        ? `SQLite ${options.databaseUrl.slice(7)}`
        : `PostgreSQL ${redactText(options.databaseUrl)} (Neon driver)`;
    } else {
      say('starting embedded PostgreSQL (PGlite) behind the Neon driver…');
      embedded = await startEmbeddedPostgres();
      db = openDatabase(embedded.url, { wsProxy: embedded.wsProxy });
      database = 'embedded PostgreSQL (PGlite) via the Neon serverless driver and the local WebSocket proxy';
    }
    // The host's real DDL (local/kandev-schema.ts), with the metadata index every host release since
    // 2026-05 creates: the first `health` a newcomer runs then computes excess (issue 34).
    await HOST_FIXTURES.host.create(db);
    await requireEmpty(db);

    const messages = options.messages ?? 4000;
    say(`generating a host store of ${messages} messages…`);
    // The history ends a minute before migrate samples capture_since, so the live rows that follow
    // continue it (R5-5), as a host's own do, instead of landing months after a fixed period.
    const endAt = nowMicros() - MINUTE;
    const store = await generateHostStore(db, {
      messages,
      seed: options.seed ?? 1,
      costs: true,
      fixture: 'host',
      startAt: endAt - HISTORY,
      endAt,
    });
    say(
      `  ${store.sessions} sessions, ${store.turns} turns, ${store.subagentMessages} subagent messages (${store.qualifyingKeys} qualifying keys, ${store.identityless} without identity, ${store.malformedTotal} malformed)`,
    );

    say('migrate: schema + backfill…');
    const migration = await runMigration(db);
    say(
      `  backfill ${migration.backfill}: ${migration.inserted} rows from ${migration.matched} messages in ${migration.durationMs} ms`,
    );

    const plan = planLiveStream({
      turns: await liveTurns(db),
      backfilled: await backfilledRows(db),
      invocations: options.live ?? 120,
      startAt: nowMicros() + 1000n,
    });
    const { producer, pipeline } = await streamLive(db, plan, quiet, say);

    say('health check…');
    const health = await runHealthCheck(db, { graceSeconds: 0 });
    const deadLetters = await pipeline.deadLetters();
    await pipeline.stop();
    const rows = await rowsBySourceAndStatus(db);
    say("spend: the agents' records of a share of the subagents (Claude Code, OpenCode, Codex)…");
    const spend = await runSpendDemo(db, options.seed ?? 1);
    say(
      `  usage written for ${spend.report.written} of ${spend.report.rows} subagents with a record key (${spend.report.unserved.no_record + spend.report.unserved.agent_not_supported} without a record, ${spend.report.unreadable_lines} unreadable lines)`,
    );
    say('report --html: the page…');
    const page = await writePage(db, options.page ?? DEFAULT_PAGE);
    say(`  ${page.path} (${page.bytes} bytes, rendered in ${page.renderMs} ms)`);
    say('publish: the report to the S3 emulator…');
    const publisher = await publishDemo(db);
    keep(publisher);
    const published = publisher.published;
    say(`  ${published.keys.length} objects; the page: ${published.url}`);
    say('report…');
    const report = await buildReport(db, { by: 'task', limit: 5, graceSeconds: 0 });
    const checks = buildChecks({
      store,
      migration,
      plan,
      totals: pipeline.totals,
      deadLetters,
      health,
      rows,
      report,
      spendDemo: spend,
      asyncWithMetrics: await asyncLaunchedWithMetrics(db),
    });
    checks.push({
      name: 'published page served through its link',
      expected: 'yes',
      got: published.linkServesPage ? 'yes' : 'no',
      ok: published.linkServesPage,
    });
    let otlp: OtlpDemoResult | undefined;
    if (options.otlpDemo) {
      say('OTLP export to a local receiver…');
      otlp = await runOtlpDemo(db);
      const check = (name: string, expected: number, got: number) =>
        checks.push({ name, expected, got, ok: expected === got });
      check('OTLP spans received = sent', otlp.sent, otlp.received);
      check('OTLP invoke_agent spans = settled rows', otlp.settledRows, otlp.subagentSpans);
      check('OTLP root spans = traces', otlp.traces, otlp.received - otlp.subagentSpans);
    }
    return {
      database,
      store,
      migration,
      plan: {
        hostMessages: plan.hostMessages.length,
        framesRecorded: plan.frames.length,
        invalidBodies: plan.invalidBodies.length,
        expected: plan.expected,
      },
      producer,
      totals: pipeline.totals,
      deadLetters,
      health,
      rows,
      page,
      published,
      otlp,
      report,
      spend: spend.report,
      checks,
      ok: checks.every((c) => c.ok),
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await db?.close();
    await proxy?.close();
    await embedded?.stop();
  }
}

async function streamLive(db: Database, plan: LivePlan, logger: Logger, say: (line: string) => void) {
  say('starting the SQS emulator (FIFO queue + DLQ) and the event-source poller…');
  const pipeline = await startLocalPipeline({ db, logger });
  const producer = createFrameProducer({
    queueUrl: pipeline.queues.queueUrl,
    sqs: pipeline.sqs,
    flushIntervalMs: 20,
    logger,
  });
  pipeline.poller.start();
  say(
    `live stream: ${plan.hostMessages.length} new invocations, ${plan.frames.length} frames (+${plan.invalidBodies.length} invalid bodies)…`,
  );
  await insertHostMessages(db, plan.hostMessages);
  const show = () => {
    const c = pipeline.totals.counts;
    say(
      `  sent ${producer.stats.sent}/${plan.frames.length}  ingested ${c.persisted} persisted, ${c.skipped_no_identity} skipped, ${c.invalid} invalid`,
    );
  };
  // A producer that does not follow the contract, midway through the stream: after its second chunk,
  // or after the last one when the stream is shorter (--live 0, 1, 5, 10 send them too).
  let invalidSent = false;
  const sendInvalid = async () => {
    if (invalidSent) return;
    invalidSent = true;
    await pipeline.send(plan.invalidBodies);
  };
  for (let i = 0; i < plan.frames.length; i += STREAM_CHUNK) {
    for (const frame of plan.frames.slice(i, i + STREAM_CHUNK)) producer.record(frame as unknown as Frame);
    if (i === STREAM_CHUNK || i + STREAM_CHUNK >= plan.frames.length) await sendInvalid();
    await producer.flush();
    show();
  }
  await sendInvalid();
  await producer.close();
  await pipeline.poller.stop();
  await pipeline.poller.drain({ timeoutMs: 120_000 });
  show();
  return { producer: producer.stats, pipeline };
}

/** The page of the whole store, as `report --html` writes it (the same builder and renderer). */
async function writePage(db: Database, file: string): Promise<PageWritten> {
  const doc = await buildReport(db, { by: 'task', pageData: true, trees: PAGE_DEFAULTS.trees, graceSeconds: 0 });
  const started = performance.now();
  const html = renderHtml(doc);
  const renderMs = Math.round(performance.now() - started);
  const path = resolve(file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, html);
  return { path, bytes: Buffer.byteLength(html), renderMs, subagents: doc.totals.subagents };
}

async function requireEmpty(db: Database): Promise<void> {
  const [messages] = await db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM task_session_messages');
  const [keys] = await db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM kandev_meta WHERE key = $1', [
    CAPTURE_SINCE_KEY,
  ]);
  if (Number(messages?.n) > 0 || Number(keys?.n) > 0) {
    throw new Error(
      'the local stack generates its own host store and needs an empty database; this one already holds host messages or an activation key. ' +
        'Point --database-url at an empty database, or run `subagent-context migrate` / `health` against an existing store instead.',
    );
  }
}

async function liveTurns(db: Database): Promise<HostTurn[]> {
  const turns = await db.query<HostTurn>(
    `SELECT t.task_session_id, s.task_id, t.id AS turn_id FROM task_session_turns t JOIN task_sessions s ON s.id = t.task_session_id ORDER BY t.id`,
  );
  const step = Math.max(1, Math.floor(turns.length / LIVE_TURNS));
  return turns.filter((_, i) => i % step === 0).slice(0, LIVE_TURNS);
}

async function backfilledRows(db: Database): Promise<BackfilledRow[]> {
  return db.query<BackfilledRow>(
    `SELECT task_session_id, task_id, tool_call_id, agent_status FROM ${TABLE} WHERE source = 'backfill' ORDER BY task_session_id, tool_call_id`,
  );
}

async function rowsBySourceAndStatus(db: Database): Promise<RowsBy[]> {
  const rows = await db.query<{ source: string; agent_status: string | null; rows: number | string }>(
    `SELECT source, agent_status, COUNT(*) AS rows FROM ${TABLE} GROUP BY source, agent_status`,
  );
  return rows
    .map((r) => ({ source: r.source, agent_status: r.agent_status ?? '(absent)', rows: Number(r.rows) }))
    .sort(
      (a, b) => a.source.localeCompare(b.source) || b.rows - a.rows || a.agent_status.localeCompare(b.agent_status),
    );
}

/** docs/merge.md#recording-one-frame: the one shape that must never go wrong — an async launch stores NULL, not 0. */
async function asyncLaunchedWithMetrics(db: Database): Promise<number> {
  const [row] = await db.query<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM ${TABLE} WHERE agent_status = 'async_launched' AND (total_tokens IS NOT NULL OR duration_ms IS NOT NULL OR tool_use_count IS NOT NULL)`,
  );
  return Number(row?.n ?? 0);
}

export interface CheckInputs {
  store: HostStoreSummary;
  migration: MigrationReport;
  plan: { expected: LiveExpectation };
  totals: IngestTotals;
  deadLetters: DeadLetter[];
  health: HealthReport;
  rows: RowsBy[];
  report: ReportDocument;
  /** R6-8: what spend did with the records the demo wrote, beside the generator's own sums */
  spendDemo?: SpendDemo;
  asyncWithMetrics: number;
}

/** Every figure the summary shows, against what the generated store and the planned stream must give. */
export function buildChecks(input: CheckInputs): Check[] {
  const { store, migration, plan, totals, deadLetters, health, rows } = input;
  const want = plan.expected;
  const checks: Check[] = [];
  const check = (name: string, expected: string | number, got: string | number) =>
    checks.push({ name, expected, got, ok: expected === got });

  check('backfill', 'completed', migration.backfill);
  check('backfill rows inserted = qualifying keys', store.qualifyingKeys, migration.inserted);
  check('backfill messages matched', store.qualifyingMessages, migration.matched);
  check(
    'backfill_through = newest qualifying message',
    store.newestQualifyingCreatedAt === null ? '' : formatKey(store.newestQualifyingCreatedAt),
    migration.backfillThrough ?? '(absent)',
  );

  const expectedRows = new Map<string, number>();
  const add = (source: string, status: string, n: number) =>
    expectedRows.set(`${source}\u0000${status}`, (expectedRows.get(`${source}\u0000${status}`) ?? 0) + n);
  for (const [status, n] of Object.entries(store.byStatus)) add('backfill', status, n);
  for (const { from, to } of want.backfillStatusChanges) {
    add('backfill', from, -1);
    add('backfill', to, 1);
  }
  for (const [status, n] of Object.entries(want.newRowsByStatus)) add('live', status, n);
  const gotRows = new Map(rows.map((r) => [`${r.source}\u0000${r.agent_status}`, r.rows]));
  for (const key of new Set([...expectedRows.keys(), ...gotRows.keys()])) {
    const [source, status] = key.split('\u0000');
    const expected = expectedRows.get(key) ?? 0;
    const got = gotRows.get(key) ?? 0;
    if (expected !== 0 || got !== 0) check(`rows ${source} ${status}`, expected, got);
  }
  check(
    'rows total',
    store.qualifyingKeys + want.newRows,
    rows.reduce((sum, r) => sum + r.rows, 0),
  );
  check('async_launched rows with a metric (must be NULL)', 0, input.asyncWithMetrics);

  const c = totals.counts;
  check('attempted', want.attempted, c.attempted);
  check('persisted', want.persisted, c.persisted);
  check('skipped_no_identity', want.skipped_no_identity, c.skipped_no_identity);
  check('failed', 0, c.failed);
  check(
    'attempted = skipped_no_identity + persisted + failed',
    c.attempted,
    c.skipped_no_identity + c.persisted + c.failed,
  );
  check('anomalous_value', want.anomalous_value, c.anomalous_value);
  check('unknown_execution', want.unknown_execution, c.unknown_execution);
  check('invalid', want.invalid, c.invalid);
  check('orphaned', 0, c.orphaned);

  const parked = groupDeadLetters(deadLetters);
  check(
    'dead-letter queue: invalid frames',
    want.invalid,
    parked.filter((g) => g.failure === 'invalid_frame').reduce((s, g) => s + g.count, 0),
  );
  check(
    'dead-letter queue: anything else',
    0,
    parked.filter((g) => g.failure !== 'invalid_frame').reduce((s, g) => s + g.count, 0),
  );

  // 'silent': nothing observed since activation, which is what a stream of no frames (--live 0) leaves.
  check('health status', want.newRows > 0 ? 'healthy' : 'silent', health.status);
  check('health shortfall', 0, health.shortfall ?? -1);
  // The minimal host schema has no idx_messages_metadata_tool_call_id: the scheduled check then
  // leaves excess to the full audit (issue 26) and says so instead of a count.
  if (health.excessLeftToAudit === null) check('health excess', 0, health.excess ?? -1);
  else check('health excess (left to the full audit)', 'not computed', health.excess ?? 'not computed');
  check('health collisions', want.collisions, health.collisions ?? -1);

  // The report (R3-5…R3-8) against the generator's and the stream's truth.
  const { totals: figures, completeness } = input.report;
  const subagents = store.qualifyingKeys + want.newRows;
  check('report subagents = rows', subagents, figures.subagents);
  check('report backfill = qualifying keys', store.qualifyingKeys, figures.backfill);
  check('report live = new rows', want.newRows, figures.live);
  check('report sessions = generated sessions', store.sessions, figures.sessions ?? -1);
  check('report contexts = sessions + subagents', store.sessions + subagents, figures.contexts ?? -1);
  check('report cost = generated ledger', store.costs?.subcents ?? -1, figures.cost_subcents ?? -1);
  check(
    'report estimated cost = generated ledger',
    store.costs?.estimatedSubcents ?? -1,
    figures.estimated_cost_subcents ?? -1,
  );
  reportCostChecks(input, check);
  if (input.spendDemo) spendChecks(input.spendDemo, figures.spend, check);
  check(
    'report capture_since = migrate',
    asReportInstant(migration.captureSince),
    completeness.capture_since ?? '(null)',
  );
  check(
    'report shortfall open',
    'no',
    completeness.shortfall.checked ? (completeness.shortfall.open ? 'yes' : 'no') : 'unchecked',
  );
  return checks;
}

/** R6-8: spend's counts and the report's spend figures against the records the generator wrote. */
function spendChecks(
  { report, expected }: SpendDemo,
  spend: ReportDocument['totals']['spend'],
  check: (name: string, expected: string | number, got: string | number) => void,
): void {
  check('spend: usage written = generated records', expected.subagents_with_usage, report.written);
  check(
    'spend: subagents without a record = generated missing',
    expected.missing,
    report.unserved.no_record + report.unserved.agent_not_supported,
  );
  check('spend: unreadable lines = generated', expected.unreadable_lines, report.unreadable_lines);
  check(
    'report spend: subagents with usage = generated',
    expected.subagents_with_usage,
    spend.subagents_with_usage ?? -1,
  );
  check('report spend: complete runs = generated', expected.complete, spend.complete ?? -1);
  for (const field of USAGE_TOKEN_FIELDS)
    check(`report spend: ${field} = generated`, expected.tokens[field] ?? '(null)', spend[field] ?? '(null)');
  check('report spend: cost = generated, priced', expected.cost_subcents ?? '(null)', spend.cost_subcents ?? '(null)');
  check('report spend: unpriced runs = generated', expected.unpriced, spend.unpriced ?? -1);
}

/**
 * R5-1…R5-3: the report's cost figures against what the generator wrote (its ledger summary and
 * turn ledger) and the rows the live stream adds to its turns, never against the report itself.
 */
function reportCostChecks(
  input: CheckInputs,
  check: (name: string, expected: string | number, got: string | number) => void,
): void {
  const { totals: figures, completeness } = input.report;
  const costs = input.store.costs;
  if (costs === null) return;
  const contexts = input.store.sessions + input.store.qualifyingKeys + input.plan.expected.newRows;
  check(
    'report cost per context = generated ledger ÷ contexts',
    // R6-11: half away from zero; a lower bound (an unpriced event left out) rounded down
    (costs.unpricedEvents > 0 ? Math.floor : Math.round)(costs.subcents / contexts),
    figures.cost_per_context_subcents ?? -1,
  );
  check('report unpriced events = generated unpriced', costs.unpricedEvents, figures.unpriced_events ?? -1);
  // R6-9: the estimated part counts its own
  check(
    'report estimated unpriced events = generated estimated unpriced',
    costs.estimatedUnpricedEvents,
    figures.estimated_unpriced_events ?? -1,
  );
  check('completeness unpriced events = generated unpriced', costs.unpricedEvents, completeness.unpriced_events ?? -1);
  check(
    'report cost is a lower bound (unpriced events)',
    String(costs.unpricedEvents > 0),
    String(figures.cost_lower_bound),
  );
  check(
    'report measured cost = generated provider_reported',
    costs.measuredSubcents,
    figures.measured_cost_subcents ?? -1,
  );
  check(
    'report list-priced cost = generated models_dev_list',
    costs.listPricedSubcents,
    figures.list_priced_cost_subcents ?? -1,
  );

  const want = expectedFanOutCost(costs, input.plan.expected.topLevelByTurn);
  const got = input.report.fan_out_cost;
  const sum = (f: FanOutCost | null, pick: (b: FanOutCostBucket) => number | null) =>
    f === null ? -1 : f.buckets.reduce((n, b) => n + (pick(b) ?? 0), 0);
  check(
    'fan-out cost: turns over the buckets = generated turns',
    input.store.turns,
    sum(got, (b) => b.turns),
  );
  check(
    'fan-out cost: costed + unpriced + without cost = turns',
    sum(got, (b) => b.turns),
    sum(got, (b) => b.costed_turns + (b.unpriced_turns ?? 0) + b.turns_without_cost + b.unreadable_cost_turns),
  );
  check(
    'fan-out cost: unpriced turns = generated',
    sum(want, (b) => b.unpriced_turns),
    sum(got, (b) => b.unpriced_turns),
  );
  check(
    'fan-out cost: turns without cost = generated',
    sum(want, (b) => b.turns_without_cost),
    sum(got, (b) => b.turns_without_cost),
  );
  check(
    'fan-out cost: costed turns’ cost = generated',
    sum(want, (b) => b.cost_subcents),
    sum(got, (b) => b.cost_subcents),
  );
  // R6-10: each event once: the costed turns, the priced events of the others and those on no turn
  check(
    'fan-out cost: priced events of turns not costed = generated',
    sum(want, (b) => b.uncosted_turns_priced_cost_subcents),
    sum(got, (b) => b.uncosted_turns_priced_cost_subcents),
  );
  check(
    'fan-out cost: costed + not costed + no turn = the total cost',
    figures.cost_subcents ?? -1,
    sum(got, (b) => b.cost_subcents) +
      sum(got, (b) => b.uncosted_turns_priced_cost_subcents) +
      (got?.unattributed_cost_subcents ?? 0),
  );
  for (const [i, b] of want.buckets.entries()) {
    const g = got?.buckets[i];
    check(
      `fan-out cost ${b.fan_out}: turns (costed, unpriced, without cost)`,
      turnsText(b),
      g ? turnsText(g) : '(none)',
    );
    check(`fan-out cost ${b.fan_out}: cost, mean, median, p95`, costText(b), g ? costText(g) : '(none)');
  }
  check(
    'fan-out cost: unattributed events = generated legacy rows',
    costs.legacyEvents,
    got?.unattributed_events ?? -1,
  );
  check(
    'fan-out cost: unattributed cost = generated legacy rows',
    want.unattributed_cost_subcents ?? '(null)',
    got === null ? -1 : (got.unattributed_cost_subcents ?? '(null)'),
  );
}

/** A bucket's turns, one cell of the expected-vs-got table. */
const turnsText = (b: FanOutCostBucket) =>
  `${b.turns} (${b.costed_turns}, ${b.unpriced_turns ?? 'null'}, ${b.turns_without_cost})`;
/** A bucket's cost figures (subcents; – when none is costed), one cell. */
const costText = (b: FanOutCostBucket) =>
  [b.cost_subcents, b.mean_subcents, b.median_subcents, b.p95_subcents].map((v) => (v === null ? '–' : v)).join(', ');

/** A kandev_meta key in the report's instant form (RFC 3339, microseconds). */
function asReportInstant(key: string | null | undefined): string {
  const us = key ? parseStoredTimestamp(key) : undefined;
  return us === undefined ? '(null)' : formatRfc3339(us);
}
