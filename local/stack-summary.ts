import { resolve } from 'node:path';
import { renderHealth } from '../lib/cli/commands/health.js';
import { renderMigration } from '../lib/cli/commands/migrate.js';
import { renderSpend } from '../lib/cli/commands/spend.js';
import { renderCounters, renderDeadLetters } from '../lib/cli/render-ingest.js';
import { renderReportTable } from '../lib/report/render/table.js';
import { renderFacts, renderTable } from '../lib/text-table.js';
import { humanDuration } from '../lib/units.js';
import type { LocalStackResult } from './stack.js';

/** What `npm start` leaves to explore: a SQLite file (`--sqlite`), the given database, or nothing. */
export type KeptStore = { kind: 'sqlite'; path: string } | { kind: 'database-url' } | { kind: 'none' };

export interface SummaryContext {
  /** wall clock since the process started, in ms */
  wallMs: number;
  kept: KeptStore;
}

/** A path as one shell word: quoted only when it needs it. */
const shellWord = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);

/** The command that prints the report of a kept SQLite store, as it can be copied. */
export function reportCommandFor(path: string): string {
  return `npm run --silent cli -- report --database-url ${shellWord(`sqlite:${path}`)}`;
}

/**
 * The summary's last lines: where the store is and the command that reads it, the command last so
 * it can be copied as it is; after the embedded PostgreSQL, how to keep a store next time.
 */
function keptText(kept: KeptStore): string {
  if (kept.kind === 'sqlite')
    return `The store stays at ${kept.path}: explore it with report, health or export (README). Its report:\n${reportCommandFor(kept.path)}`;
  if (kept.kind === 'database-url')
    return 'The store stays in the database given: its report is `npm run --silent cli -- report --database-url <the same URL>`.';
  return (
    'The embedded PostgreSQL ended with this run, and its store with it. To keep a store to explore, run\n' +
    'npm start -- --sqlite demo.db\n' +
    `and then ${reportCommandFor(resolve('demo.db'))} prints its report.`
  );
}

/** The closing summary of `npm start`: what ran, what it produced, and expected vs got. */
export function renderStackSummary(result: LocalStackResult, ctx: SummaryContext): string {
  const { store, producer } = result;
  const failed = result.checks.filter((c) => !c.ok);
  const section = (title: string, body: string) => `== ${title} ==\n${body}`;
  return [
    section('database', result.database),
    section(
      'generated host store',
      renderFacts([
        ['messages', store.messages],
        ['sessions / turns', `${store.sessions} / ${store.turns}`],
        ['subagent messages', store.subagentMessages],
        ['qualifying keys', store.qualifyingKeys],
        [
          'superseded messages',
          `${store.supersededMessages} (a later message of the same key: ${store.qualifyingMessages} qualifying messages make ${store.qualifyingKeys} rows)`,
        ],
        ['without identity', store.identityless],
        ['malformed metadata', store.malformedTotal],
        ['nested', store.nested],
        ...(store.costs
          ? ([
              [
                'cost ledger (office_cost_events)',
                `${store.costs.events} events: ${store.costs.unpricedEvents} unpriced (cost 0), ${store.costs.legacyEvents} from before the host's cost contract (no cost_source, no turn), ${store.costs.nullTokensOut} without tokens_out`,
              ],
            ] as const)
          : []),
        [
          'fan-out (n: turns)',
          Object.entries(store.fanOut)
            .map(([n, turns]) => `${n}:${turns}`)
            .join(' '),
        ],
      ]),
    ),
    section('migrate', renderMigration(result.migration)),
    section(
      'live stream',
      renderFacts([
        ['new invocations (host messages)', result.plan.hostMessages],
        [
          'new rows expected',
          result.plan.expected.newRows === result.plan.hostMessages
            ? result.plan.expected.newRows
            : `${result.plan.expected.newRows} (${result.plan.hostMessages} invocations; a tool call id reused by another agent execution is a row of its own: the collisions under health)`,
        ],
        ['frames recorded', result.plan.framesRecorded],
        ['frames sent by the producer', producer.sent],
        ['frames dropped by the producer', Object.values(producer.dropped).reduce((a, b) => a + b, 0)],
        ['invalid bodies injected', result.plan.invalidBodies],
      ]),
    ),
    section(
      'rows by source and agent_status',
      `${renderTable(
        ['source', 'agent_status', 'rows'],
        result.rows.map((r) => [r.source, r.agent_status, r.rows]),
      )}${result.rows.some((r) => r.agent_status === '(absent)') ? '\n(absent): the row has no agent_status (the host message it came from has none)' : ''}`,
    ),
    section('ingest counters', renderCounters(result.totals)),
    section('dead-letter queue', renderDeadLetters(result.deadLetters)),
    section('health', renderHealth(result.health, { graceSeconds: 0 })),
    section("spend (the agents' records of a share of the subagents; docs/spend.md)", renderSpend(result.spend)),
    ...(result.otlp
      ? [
          section(
            'OTLP export (--otlp-demo)',
            renderFacts([
              ['endpoint', result.otlp.endpoint],
              ['spans received', result.otlp.received],
              ['traces (turns)', result.otlp.traces],
              ['invoke_agent spans', result.otlp.subagentSpans],
              ['requests', result.otlp.requests],
            ]),
          ),
        ]
      : []),
    section('report (subagent-context report --by task --limit 5)', renderReportTable(result.report, { color: false })),
    section(
      'report page (open it in a browser)',
      renderFacts([
        ['file', result.page.path],
        ['size', `${result.page.bytes.toLocaleString('en-US')} bytes`],
        ['rendered in', humanDuration(result.page.renderMs)],
        ['note', 'each run writes over this file; --page <file> keeps another'],
      ]),
    ),
    section(
      'published report (docs/publish.md)',
      renderFacts([
        ['objects', result.published.keys.join(', ')],
        ['link', result.published.url],
        [
          'note',
          'S3 here is the in-process emulator: the link answers while npm start runs (npm start -- --serve keeps it up until Ctrl-C)',
        ],
      ]),
    ),
    section(
      'expected vs got',
      renderTable(
        ['check', 'expected', 'got', 'result'],
        result.checks.map((c) => [c.name, c.expected, c.got, c.ok ? 'OK' : 'MISMATCH']),
      ),
    ),
    `${
      failed.length === 0
        ? `ALL ${result.checks.length} CHECKS OK`
        : `${failed.length} MISMATCH(ES) of ${result.checks.length} checks: ${failed.map((c) => c.name).join('; ')}`
    } in ${humanDuration(ctx.wallMs)} (wall clock since npm start began; the stack itself ${humanDuration(result.durationMs)})`,
    keptText(ctx.kept),
  ].join('\n\n');
}
