import { renderHealth } from '../lib/cli/commands/health.js';
import { renderMigration } from '../lib/cli/commands/migrate.js';
import { renderCounters, renderDeadLetters } from '../lib/cli/render-ingest.js';
import { renderFacts, renderTable } from '../lib/cli/table.js';
import { renderReportTable } from '../lib/report/render/table.js';
import type { LocalStackResult } from './stack.js';

/** The closing summary of `npm start`: what ran, what it produced, and expected vs got. */
export function renderStackSummary(result: LocalStackResult): string {
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
        ['superseded messages', store.supersededMessages],
        ['without identity', store.identityless],
        ['malformed metadata', store.malformedTotal],
        ['nested', store.nested],
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
        ['frames recorded', result.plan.framesRecorded],
        ['frames sent by the producer', producer.sent],
        ['frames dropped by the producer', Object.values(producer.dropped).reduce((a, b) => a + b, 0)],
        ['invalid bodies injected', result.plan.invalidBodies],
      ]),
    ),
    section(
      'rows by source and agent_status',
      renderTable(
        ['source', 'agent_status', 'rows'],
        result.rows.map((r) => [r.source, r.agent_status, r.rows]),
      ),
    ),
    section('ingest counters', renderCounters(result.totals)),
    section('dead-letter queue', renderDeadLetters(result.deadLetters)),
    section('health', renderHealth(result.health, { graceSeconds: 0 })),
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
        ['size', `${result.page.bytes} bytes`],
        ['rendered in', `${result.page.renderMs} ms`],
      ]),
    ),
    section(
      'expected vs got',
      renderTable(
        ['check', 'expected', 'got', ''],
        result.checks.map((c) => [c.name, c.expected, c.got, c.ok ? 'OK' : 'MISMATCH']),
      ),
    ),
    failed.length === 0
      ? `ALL ${result.checks.length} CHECKS OK in ${(result.durationMs / 1000).toFixed(1)} s`
      : `${failed.length} MISMATCH(ES) of ${result.checks.length} checks: ${failed.map((c) => c.name).join('; ')}`,
  ].join('\n\n');
}
