import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SendMessageBatchClient } from '../aws/sqs.js';

/**
 * An SDK client in the shape the ingest handler parks with (lib/aws/sqs.ts). Its own module, so
 * the deployed ingest function (which uses the signed client) never bundles the SDK's commands.
 */
export function sqsViaSdk(client: SQSClient): SendMessageBatchClient {
  return {
    sendMessageBatch: (input, options) =>
      client.send(new SendMessageBatchCommand(input), { abortSignal: options?.signal }),
  };
}
