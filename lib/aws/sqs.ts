import type { BatchResultErrorEntry, SendMessageBatchRequest } from '@aws-sdk/client-sqs';
import { callAwsJson } from './json-protocol.js';

/**
 * What parking frames on the dead-letter queue needs of SQS (lib/ingest/dead-letter.ts): one call.
 * The deployed ingest function uses `signedSqs` (no SDK: the SQS client alone is ~450 KiB minified);
 * local runs, tests and benchmarks wrap the SDK client they already hold (lib/queue/sqs-via-sdk.ts).
 */
export interface SendMessageBatchClient {
  /** `signal` ends the call, retries included (R2-5: the invocation's deadline) */
  sendMessageBatch(
    input: SendMessageBatchRequest,
    options?: { signal?: AbortSignal },
  ): Promise<{ Failed?: BatchResultErrorEntry[] }>;
}

/** SendMessageBatch through a signed fetch (AWS JSON 1.0); region, credentials and AWS_ENDPOINT_URL_SQS from the environment. */
export const signedSqs: SendMessageBatchClient = {
  sendMessageBatch: (input, options) =>
    callAwsJson<{ Failed?: BatchResultErrorEntry[] }>({
      service: 'sqs',
      target: 'AmazonSQS.SendMessageBatch',
      jsonVersion: '1.0',
      body: input,
      signal: options?.signal,
    }),
};
