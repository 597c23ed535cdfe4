import * as z from 'zod/mini';
import { MAX_METRIC } from '../columns.js';
import { COST_SOURCES, USAGE_COUNT_FIELDS } from '../producer/usage/run-usage.js';
import { identityProblem, MAX_IDENTITY_CHARS, MAX_TEXT_CHARS } from '../text.js';
import { parseRfc3339 } from '../time.js';
import { jsonKind, quote } from './describe.js';

// zod/mini: the same schema language as the classic `z` API, functions instead of methods, so a
// bundle keeps only what the frame uses (~30 KiB minified instead of 445 KiB; docs/frame.md).
// This file stays the one source of the published JSON Schema (json-schema.ts, `npm run schema`).

/**
 * Metrics and booleans are declared loosely at runtime on purpose: a malformed metric must not
 * make the frame invalid (docs/frame.md, AC-9); normalization classifies it. The `meta` is what the
 * published JSON Schema tells producers to send.
 */
// R2-2: `null` is "absent" for every optional field; the published types say so.
const metric = z.optional(
  z.unknown().check(
    z.meta({
      type: ['integer', 'null'],
      minimum: 0,
      maximum: MAX_METRIC,
      description:
        "non-negative integer; a larger value (the host's INTEGER column is 32-bit) is stored as NULL and counted as anomalous_value",
    }),
  ),
);
const flag = z.optional(z.unknown().check(z.meta({ type: ['boolean', 'null'] })));
const STORED_TEXT = `Stored with U+0000 removed, an unpaired surrogate as U+FFFD, cut at ${MAX_TEXT_CHARS} characters.`;
const text = z.optional(z.unknown().check(z.meta({ type: ['string', 'null'], description: STORED_TEXT })));
/** Read by nobody downstream: the description tells producers they may leave it out (docs/producers.md). */
const neverStored = z.optional(
  z.unknown().check(
    z.meta({
      type: ['string', 'null'],
      description: 'Never stored: producers may omit it (lib/producer does), keeping the message small.',
    }),
  ),
);

const safeCount = {
  type: ['integer', 'null'],
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
} as const;

/**
 * R6-1 (docs/spend.md#the-frame): the subagent's whole run, as its agent recorded it. Loose at
 * runtime like the metrics: a malformed usage, or a malformed field of it, is not reported and
 * counts the frame as anomalous_value (AC-9), never invalid (lib/usage-write.ts classifies it).
 */
const usage = z.optional(
  z.unknown().check(
    z.meta({
      type: ['object', 'null'],
      description:
        "The subagent's whole run (never one request; a producer with only the final request sends none). Every field optional, null is not reported; a wrong type or range is not reported and counts as anomalous_value. A cost without cost_source, or cost_subcents 0 with tokens above 0, is stored as unpriced.",
      properties: {
        ...Object.fromEntries(USAGE_COUNT_FIELDS.map((name) => [name, safeCount])),
        cost_subcents: { ...safeCount, description: 'ten thousand to the US dollar, as the host ledger' },
        cost_source: { type: ['string', 'null'], enum: [...COST_SOURCES, null] },
        model: {
          type: ['string', 'null'],
          description: 'the model, or the models joined by "," when the run used several',
        },
        complete: { type: ['boolean', 'null'], description: 'the run is over and the figures are final' },
      },
    }),
  ),
);

/** zod calls an error map with the offending input; `undefined` means the field is absent. */
type Issue = { input?: unknown };
const got = (issue: Issue) => `got ${jsonKind(issue.input)}`;

/**
 * R2-1: an identity value with U+0000, an unpaired surrogate or more than MAX_IDENTITY_CHARS
 * characters makes the frame invalid; the reason names the field and the rule, never the value.
 */
const identityRule = (field: string) =>
  z.refine<string>((v) => identityProblem(v) === undefined, {
    error: (issue) => `${field} ${identityProblem(String(issue.input))}; ids are stored as sent, so send a valid id`,
  });

const IDENTITY_TEXT = `Stored as sent: more than ${MAX_IDENTITY_CHARS} characters, a U+0000 or an unpaired surrogate makes the frame invalid.`;

/** R2-2: `null` is absent. */
const nullable = <T extends z.ZodMiniType>(schema: T) => z.optional(z.nullable(schema));

/** `task_session_id`, `task_id`, `tool_call_id`: absent, null or "" skips the frame, any non-string is invalid. */
const identity = (field: string) =>
  nullable(
    z
      .string({
        error: (issue) => `${field} must be a string, ${got(issue)} (an empty, null or absent value skips the frame)`,
      })
      .check(identityRule(field), z.meta({ maxLength: MAX_IDENTITY_CHARS, description: IDENTITY_TEXT })),
  );

/** `turn_id`, `parent_tool_call_id`, `execution_id`: identity rules too (R2-1); absent, null or "" is absent. */
const optionalIdentity = (field: string) =>
  nullable(
    z
      .string({ error: (issue) => `${field} must be a string when present, ${got(issue)}` })
      .check(identityRule(field), z.meta({ maxLength: MAX_IDENTITY_CHARS, description: IDENTITY_TEXT })),
  );

const optionalText = (field: string) =>
  nullable(
    z
      .string({ error: (issue) => `${field} must be a string when present, ${got(issue)}` })
      .check(z.meta({ description: STORED_TEXT })),
  );

export const subagentTaskSchema = z.object(
  {
    description: text,
    prompt: neverStored,
    subagent_type: text,
    status: text,
    agent_id: text,
    model: text,
    child_session_id: text,
    result_text: neverStored,
    output_file: neverStored,
    duration_ms: metric,
    total_tokens: metric,
    tool_use_count: metric,
    is_async: flag,
    can_read_output_file: flag,
    usage,
  },
  {
    error: (issue) =>
      issue.input === undefined
        ? "subagent_task is required: the host's normalized subagent payload object"
        : `subagent_task must be an object, ${got(issue)}`,
  },
);

export const frameSchema = z
  .object({
    version: z.literal(1, {
      error: (issue) =>
        issue.input === undefined
          ? 'version is required and must be 1'
          : `version must be 1 (the only frame version this consumer reads), ${got(issue)}`,
    }),
    task_session_id: identity('task_session_id'),
    task_id: identity('task_id'),
    tool_call_id: identity('tool_call_id'),
    turn_id: optionalIdentity('turn_id'),
    parent_tool_call_id: optionalIdentity('parent_tool_call_id'),
    execution_id: optionalIdentity('execution_id'),
    tool_status: optionalText('tool_status'),
    observed_at: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? 'observed_at is required: an RFC 3339 instant such as 2026-08-12T13:24:58.123Z'
            : `observed_at must be an RFC 3339 instant string such as 2026-08-12T13:24:58.123Z, ${got(issue)}`,
      })
      .check(
        z.refine((v) => parseRfc3339(v) !== undefined, {
          error: (issue) =>
            `observed_at ${quote(issue.input)} is not an RFC 3339 instant with an offset, e.g. 2026-08-12T13:24:58.123Z`,
        }),
        z.meta({ format: 'date-time' }),
      ),
    subagent_task: subagentTaskSchema.check(
      z.meta({
        description: "The host's normalized subagent payload; prompt, result_text and output_file are never stored.",
      }),
    ),
  })
  .check(
    z.meta({
      title: 'subagent-context frame v1',
      description: 'One observation of a subagent invocation, as the host enqueues it (SQS message body).',
    }),
  );

export type Frame = z.infer<typeof frameSchema>;
export type SubagentTask = z.infer<typeof subagentTaskSchema>;
