import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startSilentEndpoint } from '../../../local/sqs-faults.js';
import { takeAll, useSqs } from '../../support/sqs.js';

const run = promisify(execFile);
const CHILD = new URL('./exit-child.ts', import.meta.url).pathname;

/** Runs the child host; returns its JSON log lines, its final stats and how long it lived. */
async function host(env: Record<string, string>) {
  const started = Date.now();
  const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...env,
    },
    timeout: 75_000,
  });
  const output = `${stdout}\n${stderr}`; // Powertools writes WARN to stderr
  const lines = output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const stats = lines.find((l) => l.stats)!.stats as { sent: number; dropped: Record<string, number> };
  return { lines, stats, warnings: lines.filter((l) => l.level === 'WARN'), elapsedMs: Date.now() - started, output };
}

describe('P4: nothing is lost silently when the host exits without close()', () => {
  const q = useSqs();

  it('P4: a host that records 5 frames and ends (event loop empties) still sends them (beforeExit flush)', async () => {
    const { stats, warnings } = await host({ SQS_ENDPOINT: q.endpoint, QUEUE_URL: q.queueUrl, EXIT: 'natural' });
    expect(stats.sent).toBe(5);
    expect(warnings).toEqual([]);
    expect((await takeAll(q.sqs, q.queueUrl)).map((m) => JSON.parse(m.Body!).tool_call_id)).toEqual([
      'c0',
      'c1',
      'c2',
      'c3',
      'c4',
    ]);
  }, 90_000);

  it('P4: a host that calls process.exit() with 5 frames held logs their count once (dropped: exited)', async () => {
    const { stats, warnings, output } = await host({
      SQS_ENDPOINT: q.endpoint,
      QUEUE_URL: q.queueUrl,
      EXIT: 'process-exit',
    });
    expect(stats).toMatchObject({ sent: 0, dropped: { exited: 5 } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      message: 'subagent frames dropped by the producer',
      reason: 'exited',
      count: 5,
    });
    expect(output).not.toContain('never logged');
  }, 90_000);

  it('P4: with an endpoint that never answers, the exit flush gives up after exitTimeoutMs and logs the count once', async () => {
    const silent = await startSilentEndpoint();
    try {
      const { stats, warnings, elapsedMs } = await host({
        SQS_ENDPOINT: silent.endpoint,
        QUEUE_URL: q.queueUrl,
        EXIT: 'natural',
        EXIT_TIMEOUT_MS: '500',
        REQUEST_TIMEOUT_MS: '60000', // without the exit deadline the child would wait minutes
      });
      expect(stats).toMatchObject({ sent: 0, dropped: { timeout: 5 } });
      expect(warnings.map((w) => [w.reason, w.count])).toEqual([['timeout', 5]]);
      expect(elapsedMs).toBeLessThan(45_000); // tsx start-up on a loaded machine included; without the deadline: minutes
    } finally {
      await silent.close();
    }
  }, 90_000);
});
