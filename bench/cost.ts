/**
 * Cost per million frames from measured figures and list prices. Prices: AWS list prices for
 * us-east-1 (eu-west-1, serverless.yml's default region, lists the same for these items), first
 * pricing tier, free tiers ignored. Taken from aws.amazon.com/lambda/pricing and
 * aws.amazon.com/sqs/pricing as restated by third-party summaries dated 2026-03-14
 * (cloudburn.io) and 2026-06-13 (factualminds.com); this machine cannot reach AWS to re-check.
 */
export const PRICES = {
  asOf: 'us-east-1 list prices as published in 2026 (restated 2026-03-14 and 2026-06-13; sources in bench/cost.ts)',
  lambdaArm64PerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  sqsFifoPerMillionRequests: 0.5,
  /** SQS bills every 64 KiB chunk of a request's payload as one request */
  sqsChunkBytes: 64 * 1024,
} as const;

export interface CostInputs {
  /** frames per ingest invocation (the event source's batch size) */
  batchSize: number;
  /** measured mean handler time per invocation, ms (wall time of a run ÷ invocations) */
  meanInvocationMs: number;
  memoryMb: number;
  /** mean SQS message body, bytes */
  meanBodyBytes: number;
}

export interface CostPerMillionFrames {
  invocations: number;
  /** GB-s billed: each invocation rounded up to the next millisecond */
  gbSeconds: number;
  lambdaCompute: number;
  lambdaRequests: number;
  /** SendMessageBatch + ReceiveMessage + DeleteMessageBatch, in 64 KiB chunks */
  sqsRequests: number;
  sqs: number;
  total: number;
}

export function costPerMillionFrames(input: CostInputs): CostPerMillionFrames {
  const frames = 1_000_000;
  const invocations = frames / input.batchSize;
  const billedMs = Math.ceil(input.meanInvocationMs);
  const gbSeconds = invocations * (billedMs / 1000) * (input.memoryMb / 1024);
  // The producer sends up to 10 frames per SendMessageBatch and the event source receives and
  // deletes them in batches of the same size: three requests per batch, each billed per 64 KiB.
  const batches = frames / Math.min(input.batchSize, 10);
  const chunks = Math.ceil((Math.min(input.batchSize, 10) * input.meanBodyBytes) / PRICES.sqsChunkBytes);
  const sqsRequests = batches * (chunks /* send */ + chunks /* receive */ + 1) /* delete */;
  const lambdaCompute = gbSeconds * PRICES.lambdaArm64PerGbSecond;
  const lambdaRequests = (invocations / 1_000_000) * PRICES.lambdaPerMillionRequests;
  const sqs = (sqsRequests / 1_000_000) * PRICES.sqsFifoPerMillionRequests;
  return {
    invocations,
    gbSeconds,
    lambdaCompute,
    lambdaRequests,
    sqsRequests,
    sqs,
    total: lambdaCompute + lambdaRequests + sqs,
  };
}

/** The billed INIT phase of one cold start (billed for managed runtimes since 2025-08-01). */
export function coldStartCost(initMs: number, memoryMb: number): number {
  return (Math.ceil(initMs) / 1000) * (memoryMb / 1024) * PRICES.lambdaArm64PerGbSecond;
}
