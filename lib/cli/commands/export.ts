import type { Queryable } from '../../db/database.js';
import { EXPORT_DEFAULTS } from '../../defaults.js';
import type { OtlpTarget } from '../../export/otlp/config.js';
import type { ExportOptions, ExportSummary } from '../../export/run.js';
import { EXIT } from '../exit-codes.js';
import type { CommandResult } from '../io.js';
import { requireMigrated } from '../preflight.js';
import { renderFacts } from '../table.js';

export function renderExport(summary: ExportSummary): string {
  return renderFacts([
    ['endpoint', summary.endpoint],
    ['turns', summary.turns],
    ['spans', summary.spans],
    ['requests', summary.requests],
    ['position key', summary.position.key ?? '(none: a one-off export)'],
    ['position before', summary.position.before],
    ['position after', summary.position.after],
  ]);
}

/** `subagent-context export --otlp <url>` (docs/otlp.md): exit 0 once every batch was accepted. */
export async function exportCommand(
  db: Queryable,
  target: OtlpTarget,
  options: ExportOptions,
): Promise<CommandResult<ExportSummary>> {
  // a never-migrated store says "run migrate", as report, health and ingest do (issue 34)
  await requireMigrated(db);
  // The OpenTelemetry exporters load only when an export runs: every other command starts faster.
  const [{ createOtlpSink }, { runExport }] = await Promise.all([
    import('../../export/otlp/transport.js'),
    import('../../export/run.js'),
  ]);
  const sink = createOtlpSink(target, {
    timeoutMillis: EXPORT_DEFAULTS.requestTimeoutMs,
    retries: EXPORT_DEFAULTS.retries,
    backoffMillis: EXPORT_DEFAULTS.backoffMs,
  });
  try {
    const summary = await runExport(db, sink, target.url, options);
    return { exitCode: EXIT.ok, result: summary, text: renderExport(summary) };
  } finally {
    await sink.shutdown();
  }
}
