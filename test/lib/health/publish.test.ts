import { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { logHealthReport, recordHealthMetrics } from '../../../lib/health/publish.js';
import type { HealthReport } from '../../../lib/health/report.js';

const BASE: HealthReport = {
  status: 'healthy',
  kind: 'scheduled',
  window: { from: '2026-08-12T12:50:00.000000Z', to: '2026-08-12T12:55:00.500000Z' },
  recent: null,
  checkpoint: {
    before: '2026-08-12T12:50:00.000000Z',
    after: '2026-08-12T12:55:00.500000Z',
    moved: true,
    acknowledged: false,
  },
  shortfall: 0,
  excess: 3,
  excessLeftToAudit: null,
  collisions: 1,
  lastObservedAt: '2026-08-12T13:00:00.000000Z',
  captureSince: '2026-08-12T12:00:00.000000Z',
  missing: [],
  history: null,
  unacknowledgedShortfall: null,
  unreadableCreatedAt: null,
  checkedAt: '2026-08-12T13:10:00.500000Z',
};

function emitted(report: HealthReport): Record<string, unknown> {
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'health-test' });
  recordHealthMetrics(metrics, report);
  const emf = metrics.serializeMetrics() as unknown as Record<string, unknown> & {
    _aws: { CloudWatchMetrics: { Metrics: { Name: string; Unit: string }[] }[] };
  };
  const names = emf._aws.CloudWatchMetrics[0]!.Metrics.map((m) => m.Name);
  return Object.fromEntries(names.map((name) => [name, emf[name]]));
}

function logged(report: HealthReport): { level: string; message: string; fields: Record<string, unknown> }[] {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const record = (level: string) => (message: string, fields: Record<string, unknown>) =>
    lines.push({ level, message, fields });
  logHealthReport(
    { info: record('INFO'), error: record('ERROR') } as unknown as Parameters<typeof logHealthReport>[0],
    report,
  );
  return lines;
}

describe('health metrics', () => {
  it('emits every count, and seconds since the last observed row, for a completed check', () => {
    expect(emitted(BASE)).toEqual({
      health_check_ok: 1,
      not_activated: 0,
      shortfall: 0,
      excess: 3,
      collisions: 1,
      seconds_since_last_observed: 600,
      checkpoint_lag_seconds: 900,
    });
  });

  it('the full audit emits its counts under audit_ names, so an acknowledged shortfall does not re-trigger the shortfall alarm', () => {
    expect(emitted({ ...BASE, kind: 'full', checkpoint: null, shortfall: 2 })).toEqual({
      audit_health_check_ok: 1,
      not_activated: 0,
      audit_shortfall: 2,
      audit_excess: 3,
      audit_collisions: 1,
      seconds_since_last_observed: 600,
    });
  });

  it('issue 26: excess left to the full audit (no host index) emits no excess data point, never a 0 that says "none"', () => {
    const report: HealthReport = {
      ...BASE,
      excess: null,
      excessLeftToAudit: { missingIndex: 'idx_messages_metadata_tool_call_id', reason: 'left to the full audit' },
    };
    expect(emitted(report)).toEqual({
      health_check_ok: 1,
      not_activated: 0,
      shortfall: 0,
      collisions: 1,
      seconds_since_last_observed: 600,
      checkpoint_lag_seconds: 900,
    });
  });

  it('a checkpoint never written yet lags from capture_since', () => {
    const report: HealthReport = {
      ...BASE,
      checkpoint: { before: null, after: null, moved: false, acknowledged: false },
    };
    expect(emitted(report)).toMatchObject({ checkpoint_lag_seconds: 4200 });
  });

  it('AC-28a: emits not_activated and no comparison counts when capture_since is absent', () => {
    const report: HealthReport = {
      ...BASE,
      status: 'not_activated',
      shortfall: null,
      excess: null,
      collisions: null,
      lastObservedAt: null,
      captureSince: null,
    };
    expect(emitted(report)).toEqual({ health_check_ok: 1, not_activated: 1 });
  });

  it('a writer silent since activation reports the seconds since capture_since, never 0', () => {
    expect(emitted({ ...BASE, status: 'silent', lastObservedAt: null })).toMatchObject({
      seconds_since_last_observed: 4200,
    });
  });
});

describe('health log line', () => {
  it.each([
    ['shortfall', 'ERROR'],
    ['silent', 'ERROR'],
    ['not_activated', 'ERROR'],
    ['healthy', 'INFO'],
  ] as const)('a %s check logs one %s line', (status, level) => {
    const lines = logged({ ...BASE, status });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level, fields: { status } });
  });

  it('a shortfall line names the missing keys and what to check', () => {
    const missing = [{ task_session_id: 's1', tool_call_id: 'c1' }];
    const [line] = logged({ ...BASE, status: 'shortfall', shortfall: 1, missing });
    expect(line!.message).toContain('1 subagent invocations');
    expect(line!.fields).toMatchObject({ missing, action: expect.stringContaining('dead-letter queue') });
  });
});
