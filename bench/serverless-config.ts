import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

interface YamlType {
  new (
    tag: string,
    options: { kind: 'scalar' | 'sequence' | 'mapping'; construct: (data: unknown) => unknown },
  ): unknown;
}
interface JsYaml {
  load(text: string, options: { schema: unknown }): unknown;
  Type: YamlType;
  DEFAULT_SCHEMA: { extend(types: unknown[]): unknown };
}

// js-yaml comes with osls (the deploy tool, a devDependency); the benchmark only reads the file.
const yaml = createRequire(import.meta.url)('js-yaml') as JsYaml;

const CLOUDFORMATION_TAGS = [
  'Ref',
  'GetAtt',
  'Sub',
  'Join',
  'If',
  'Equals',
  'Select',
  'Split',
  'ImportValue',
  'FindInMap',
  'GetAZs',
  'Base64',
  'Cidr',
  'Not',
  'And',
  'Or',
  'Condition',
];
const schema = yaml.DEFAULT_SCHEMA.extend(
  CLOUDFORMATION_TAGS.flatMap((tag) =>
    (['scalar', 'sequence', 'mapping'] as const).map(
      (kind) => new yaml.Type(`!${tag}`, { kind, construct: (data) => ({ [tag]: data }) }),
    ),
  ),
);

export interface DeployedShape {
  /** serverless-esbuild's options (custom.esbuild) */
  esbuild: Record<string, unknown>;
  /** provider.runtime, e.g. nodejs22.x */
  runtime: string;
  architecture: string;
  /** MB per function (function setting, else provider.memorySize, else the Lambda default 1024) */
  memoryMb: Record<string, number>;
  /** seconds per function (function setting, `${self:custom.…}` resolved, else provider.timeout, else the framework's 6) */
  timeoutSeconds: Record<string, number>;
  /** function name → handler module path, e.g. functions/ingest.ts */
  entries: Record<string, string>;
  /** the SQS event source's batch size of the ingest function */
  ingestBatchSize: number;
  /** provider + function environment of each function (only literal values) */
  environment: Record<string, Record<string, string>>;
}

/** What serverless.yml deploys, as far as the benchmarks' cold-start and cost figures need it. */
export function readServerlessConfig(path = 'serverless.yml'): DeployedShape {
  const doc = yaml.load(readFileSync(path, 'utf8'), { schema }) as {
    custom?: { esbuild?: Record<string, unknown> } & Record<string, unknown>;
    provider: {
      runtime: string;
      architecture?: string;
      memorySize?: number;
      timeout?: number;
      environment?: Record<string, unknown>;
    };
    functions: Record<
      string,
      {
        handler: string;
        memorySize?: number;
        timeout?: number | string;
        environment?: Record<string, unknown>;
        events?: { sqs?: { batchSize?: number } }[];
      }
    >;
  };
  const memoryMb: Record<string, number> = {};
  const timeoutSeconds: Record<string, number> = {};
  const entries: Record<string, string> = {};
  const environment: Record<string, Record<string, string>> = {};
  let ingestBatchSize = 10;
  for (const [name, fn] of Object.entries(doc.functions)) {
    memoryMb[name] = fn.memorySize ?? doc.provider.memorySize ?? 1024;
    // e.g. ingest's `${self:custom.ingestTimeoutSeconds}`
    const custom = typeof fn.timeout === 'string' ? /^\$\{self:custom\.(\w+)\}$/.exec(fn.timeout)?.[1] : undefined;
    timeoutSeconds[name] = Number(
      (custom === undefined ? fn.timeout : doc.custom?.[custom]) ?? doc.provider.timeout ?? 6,
    );
    entries[name] = `${fn.handler.slice(0, fn.handler.lastIndexOf('.'))}.ts`;
    environment[name] = literals({ ...doc.provider.environment, ...fn.environment });
    const sqs = fn.events?.find((e) => e.sqs)?.sqs;
    if (name === 'ingest' && sqs?.batchSize) ingestBatchSize = sqs.batchSize;
  }
  return {
    esbuild: doc.custom?.esbuild ?? {},
    runtime: doc.provider.runtime,
    architecture: doc.provider.architecture ?? 'x86_64',
    memoryMb,
    timeoutSeconds,
    entries,
    ingestBatchSize,
    environment,
  };
}

/** Variables resolved at deploy time (`${…}`) and CloudFormation references are left out. */
function literals(env: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).flatMap(([key, value]) =>
      typeof value === 'string' && !value.includes('${') ? [[key, value]] : [],
    ),
  );
}
