import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../lib/cli/main.js';
import * as D from '../lib/defaults.js';
import { DEFAULT_CONFIRM_DELAY_SECONDS, DEFAULT_GRACE_SECONDS } from '../lib/health/config.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * A scalar of serverless.yml by its key path (`params.default.healthGraceSeconds`). The template
 * holds CloudFormation tags a generic YAML parser refuses, and only plain `key: value` scalars are
 * compared, so indentation is all this needs. A list item (`- sqs:`) counts as a level.
 */
function yamlScalar(text: string, path: string): string | undefined {
  const want = path.split('.');
  const stack: { indent: number; key: string }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '');
    const m = /^(\s*)(?:- )?([\w-]+):\s*(.*)$/.exec(line);
    if (!m || raw.trimStart().startsWith('#')) continue;
    const indent = m[1]!.length + (line.trimStart().startsWith('- ') ? 2 : 0);
    while (stack.length > 0 && stack.at(-1)!.indent >= indent) stack.pop();
    stack.push({ indent, key: m[2]! });
    if (stack.map((s) => s.key).join('.') === want.join('.')) return m[3]!.replace(/^'(.*)'$/, '$1').trim();
  }
  return undefined;
}

describe('lib/defaults.ts is the one place for defaults', () => {
  const yml = readFileSync(join(ROOT, 'serverless.yml'), 'utf8');
  const value = (path: string) => yamlScalar(yml, path);

  it.each([
    ['service', D.SERVICE_NAME],
    ['provider.environment.POWERTOOLS_SERVICE_NAME', D.SERVICE_NAME],
    ['custom.metricsNamespace', D.METRICS_NAMESPACE],
    ['params.default.healthGraceSeconds', D.HEALTH_GRACE_SECONDS],
    ['params.default.healthConfirmDelaySeconds', D.HEALTH_CONFIRM_DELAY_SECONDS],
    ['params.default.healthSchedule', D.HEALTH_SCHEDULE],
    ['params.default.healthOverlapSeconds', D.HEALTH_OVERLAP_SECONDS],
    ['params.default.healthAuditSchedule', D.HEALTH_AUDIT_SCHEDULE],
    ['params.default.healthAuditEnabled', D.HEALTH_AUDIT_ENABLED],
    ['params.default.healthCheckpointLagAlarmSeconds', D.HEALTH_CHECKPOINT_LAG_ALARM_SECONDS],
    ['params.default.ingestMaxConcurrency', D.INGEST_MAX_CONCURRENCY],
    ['params.default.maxReceiveCount', D.MAX_RECEIVE_COUNT],
    ['params.default.oldestMessageAgeAlarmSeconds', D.OLDEST_MESSAGE_AGE_ALARM_SECONDS],
    ['params.default.healthMissingWindowSeconds', D.HEALTH_MISSING_WINDOW_SECONDS],
    ['custom.ingestTimeoutSeconds', D.INGEST_TIMEOUT_SECONDS],
    ['custom.queueVisibilityTimeoutSeconds', D.QUEUE_VISIBILITY_TIMEOUT_SECONDS],
    ['functions.ingest.events.sqs.batchSize', D.INGEST_BATCH_SIZE],
    ['functions.health.timeout', D.HEALTH_TIMEOUT_SECONDS],
    ['functions.migrate.timeout', D.MIGRATE_TIMEOUT_SECONDS],
    ['params.default.exportSchedule', D.EXPORT_SCHEDULE],
    ['params.default.exportEnabled', false],
    ['functions.export.timeout', D.EXPORT_TIMEOUT_SECONDS],
    ['params.default.publishSchedule', D.PUBLISH_SCHEDULE],
    ['params.default.publishEnabled', false],
    ['params.default.publishRetentionDays', D.PUBLISH_RETENTION_DAYS],
    ['functions.publish.timeout', D.PUBLISH_TIMEOUT_SECONDS],
  ])('serverless.yml %s = %s', (path, expected) => {
    expect(value(path)).toBe(String(expected));
  });

  it('the queue visibility timeout is at least 6 × the ingest timeout (AWS guidance for SQS event sources)', () => {
    expect(D.QUEUE_VISIBILITY_TIMEOUT_SECONDS).toBeGreaterThanOrEqual(6 * D.INGEST_TIMEOUT_SECONDS);
  });

  it('the health check reads them, and the CLI usage text prints them', () => {
    expect([DEFAULT_GRACE_SECONDS, DEFAULT_CONFIRM_DELAY_SECONDS]).toEqual([
      D.HEALTH_GRACE_SECONDS,
      D.HEALTH_CONFIRM_DELAY_SECONDS,
    ]);
    expect(USAGE).toContain(`HEALTH_GRACE_SECONDS or ${D.HEALTH_GRACE_SECONDS}`);
    expect(USAGE).toContain(`HEALTH_CONFIRM_DELAY_SECONDS, default ${D.HEALTH_CONFIRM_DELAY_SECONDS}`);
  });

  it('the YAML reader finds nested keys and list items, and misses what is not there', () => {
    const text = "a:\n  b: 1 # note\n  c:\n    - d:\n        e: x\n# a.b: 2\nf: 'q'\n";
    expect([
      yamlScalar(text, 'a.b'),
      yamlScalar(text, 'a.c.d.e'),
      yamlScalar(text, 'f'),
      yamlScalar(text, 'a.z'),
    ]).toEqual(['1', 'x', 'q', undefined]);
  });
});
