import type { Queryable } from '../../db/database.js';
import { EXPORT_DEFAULTS } from '../../defaults.js';
import type { OtlpTarget } from '../../export/otlp/config.js';
import type { RetryNotice } from '../../export/otlp/transport.js';
import type { ExportOptions, ExportSummary } from '../../export/run.js';
import { terminalSafe } from '../../terminal-text.js';
import { renderFacts } from '../../text-table.js';
import { type ExportDocument, exportJson } from '../documents.js';
import { EXIT } from '../exit-codes.js';
import type { CommandResult } from '../io.js';
import { requireMigrated } from '../preflight.js';

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

export function renderExport(summary: ExportSummary): string {
  const facts: [string, string | number | null][] = [
    ['endpoint', summary.endpoint],
    ['new', `${plural(summary.new, 'turn')}`],
    [
      're-sent',
      `${plural(summary.re_sent, 'turn')} (${summary.restart ? 'sent again from the first turn: --restart' : 'changed since last sent'})`,
    ],
    ['unchanged', `${plural(summary.unchanged, 'turn')} (not sent again)`],
    // issue 58: a turn the report counts but the export held back is said, never silent
    ...(summary.held_back > 0
      ? [
          [
            'held back',
            `${plural(summary.held_back, 'turn')} whose subagents are all still open: sent once one settles (or with --open-spans)`,
          ] as [string, string],
        ]
      : []),
    ['spans', summary.spans],
    ['requests', summary.requests],
  ];
  if (summary.rejected_spans > 0)
    facts.push([
      'rejected',
      `${plural(summary.rejected_spans, 'span')} by the collector${summary.rejected_message === undefined ? '' : `: ${summary.rejected_message}`}`,
    ]);
  if (summary.unknown_spans > 0)
    facts.push([
      'unknown',
      `${plural(summary.unknown_spans, 'span')} answered 2xx, but ${summary.unknown_reason ?? 'the answer could not be read'}: whether the collector accepted them is not known, so the run stopped before them and the position was kept; run again to send them again (same ids)`,
    ]);
  const columns = Object.entries(summary.unreadable);
  if (columns.length > 0)
    facts.push(['unreadable', columns.map(([column, n]) => `${column} ${n} (left out)`).join(', ')]);
  const skipped = summary.skipped;
  if (skipped.length > 0)
    facts.push([
      'skipped',
      `${plural(skipped.length, 'turn')}: ${skipped
        .slice(0, 5)
        .map(
          (s) =>
            `${s.reason} (session ${terminalSafe(s.task_session_id)}, turn ${s.turn_id === null ? '(none)' : terminalSafe(s.turn_id)})`,
        )
        .join('; ')}${skipped.length > 5 ? `; and ${skipped.length - 5} more (--json lists them)` : ''}`,
    ]);
  for (const note of summary.notes) facts.push(['note', note]);
  facts.push(
    ['position key', summary.position.key ?? '(none: a one-off export)'],
    ['position before', summary.position.before],
    ['position after', summary.position.after],
  );
  return renderFacts(facts);
}

/** One stderr line per retry, as it happens (R4-9). */
export function retryLine(notice: RetryNotice): string {
  return `export: attempt ${notice.attempt} of ${notice.attempts} failed (${notice.reason}); retrying in ${(notice.waitMillis / 1000).toFixed(1)} s\n`;
}

/**
 * `subagent-context export --otlp <url>` (docs/otlp.md): exit 0 once every batch was accepted,
 * 3 when the collector rejected spans of an accepted batch (partialSuccess), answered a batch in a
 * way that leaves its outcome unknown (R4-8: the run stopped before it), or a turn was skipped.
 */
export async function exportCommand(
  db: Queryable,
  target: OtlpTarget,
  options: ExportOptions,
  stderr?: { write(text: string): unknown },
): Promise<CommandResult<ExportDocument>> {
  // a never-migrated store says "run migrate", as report, health and ingest do (issue 34)
  await requireMigrated(db);
  // R4-11: the OpenTelemetry SDK and serializers load when an export runs, not with every command
  const [{ createOtlpSink }, { runExport }] = await Promise.all([
    import('../../export/otlp/transport.js'),
    import('../../export/run.js'),
  ]);
  const sink = createOtlpSink(target, {
    timeoutMillis: EXPORT_DEFAULTS.requestTimeoutMs,
    retries: EXPORT_DEFAULTS.retries,
    backoffMillis: EXPORT_DEFAULTS.backoffMs,
    onRetry: (notice) => stderr?.write(retryLine(notice)),
  });
  try {
    const summary = await runExport(db, sink, target.url, options);
    const attention = summary.rejected_spans > 0 || summary.unknown_spans > 0 || summary.skipped.length > 0;
    return { exitCode: attention ? EXIT.attention : EXIT.ok, result: exportJson(summary), text: renderExport(summary) };
  } finally {
    await sink.shutdown();
  }
}
