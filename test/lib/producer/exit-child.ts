/**
 * A short-lived host for the exit tests (run with `node --import tsx`): records FRAMES frames and
 * never calls close(). EXIT=natural lets the event loop empty; EXIT=process-exit calls
 * process.exit(0) right away. Prints the producer's stats as the last line on exit.
 */

import { createFrameProducer } from '../../../lib/producer/producer.js';
import { sqsClientFor } from '../../../local/fauxqs.js';

const sqs = sqsClientFor(process.env.SQS_ENDPOINT!);
sqs.config.maxAttempts = async () => 1;
const producer = createFrameProducer({
  queueUrl: process.env.QUEUE_URL!,
  sqs,
  exitTimeoutMs: Number(process.env.EXIT_TIMEOUT_MS ?? 5_000),
  requestTimeoutMs: Number(process.env.REQUEST_TIMEOUT_MS ?? 3_000),
});
process.on('exit', () => process.stdout.write(`${JSON.stringify({ stats: producer.stats })}\n`));
for (let i = 0; i < Number(process.env.FRAMES ?? 5); i += 1) {
  producer.record({
    version: 1,
    task_session_id: 's1',
    task_id: 't1',
    tool_call_id: `c${i}`,
    observed_at: '2026-08-12T13:24:58.123456Z',
    subagent_task: { prompt: 'never logged', status: 'running' },
  });
}
if (process.env.EXIT === 'process-exit') process.exit(0);
