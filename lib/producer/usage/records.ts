import { type RunUsage, USAGE_TOKEN_FIELDS, type UsageTokenField } from './run-usage.js';

/*
 * What every reader of an agent's records shares (docs/spend.md, R6-3): records come as
 * lines (JSON text) or as objects, one at a time, from an Iterable or an AsyncIterable, so a file of
 * any size is read in bounded memory; a record that cannot be read is counted, never thrown.
 */

/** Lines (JSON text, one record each) or records already parsed, as they come. */
export type RecordSource = Iterable<unknown> | AsyncIterable<unknown>;

/** What a reader returns for one subagent's run. */
export interface UsageReading {
  /** the run's usage (R6-1): only what the records reported; `{}` when they hold no request */
  usage: RunUsage;
  /** records that could not be read: bad JSON, a truncated line, a value of the wrong type or range */
  unreadable_lines: number;
  /** the agent id, session id or thread id the records name, or null when they name none */
  key: string | null;
}

/** A parsed record, or `undefined` for one that could not be read (the reader counts it). */
export type Parsed = Record<string, unknown> | undefined;

/** A blank line (the newline at the end of a file) is no record: skipped, never counted. */
const BLANK = /^\s*$/;

/**
 * The records of a source, parsed: an object stays as it is; a string is parsed as JSON; anything
 * that is not a JSON object (bad JSON, a truncated last line, `42`, `[]`) comes out as `undefined`.
 * `arrays`: a JSON array is spread into its elements (OpenCode's API answers with one).
 */
export async function* recordsOf(source: RecordSource, options: { arrays?: boolean } = {}): AsyncGenerator<Parsed> {
  // a sync source is walked with for…of: `for await` would read each item's `then` (a hostile
  // object's getter could throw there, outside any reader's guard)
  if (Symbol.asyncIterator in source) for await (const item of source) yield* parse(item, options.arrays);
  else for (const item of source) yield* parse(item, options.arrays);
}

function parse(item: unknown, arrays = false): Parsed[] {
  try {
    if (typeof item === 'string' && BLANK.test(item)) return [];
    const value = typeof item === 'string' ? parseJson(item) : item;
    // an async generator awaits what it yields: a record that is a thenable (or whose `then` getter
    // throws) is no record, and reading `then` here keeps that inside this guard
    if (isThenable(value)) return [undefined];
    return arrays && Array.isArray(value)
      ? value.map((v) => (isThenable(v) ? undefined : objectOrUndefined(v)))
      : [objectOrUndefined(value)];
  } catch {
    return [undefined]; // an item whose inspection threw (a revoked proxy): unreadable
  }
}

const isThenable = (value: unknown) =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // bad JSON, a truncated line, nesting deeper than the parser takes
  }
}

const objectOrUndefined = (value: unknown): Parsed =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** A plain object, or undefined. */
export const asObject = objectOrUndefined;

/** A value of the wrong type or range (a symbol: no text a record holds can be mistaken for it). */
export const BAD: unique symbol = Symbol('bad');

/** A reported count: a non-negative safe integer. Absent or null: not reported. Anything else: bad. */
export type Count = number | undefined | typeof BAD;

export function countOf(value: unknown): Count {
  if (value === undefined || value === null) return undefined;
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : BAD;
}

/** A reported string: absent or null is not reported; a non-string is bad; '' is not reported. */
export function textOf(value: unknown): string | undefined | typeof BAD {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return BAD;
  return value === '' ? undefined : value;
}

/** Token counts of one request (or one step), by R6-1's field names; a kind nobody reported is absent. */
export type TokenCounts = Partial<Record<UsageTokenField, number>>;

/**
 * Sums of token counts over a run's requests. A kind is reported when at least one request reported
 * it; a sum beyond the safe integers is not reported (null), never a wrong number.
 */
export class TokenSums {
  private readonly sums = new Map<UsageTokenField, number | null>();
  requests = 0;

  add(counts: TokenCounts): void {
    this.requests++;
    for (const field of USAGE_TOKEN_FIELDS) {
      const value = counts[field];
      if (value === undefined) continue;
      const before = this.sums.get(field);
      if (before === null) continue;
      const sum = (before ?? 0) + value;
      this.sums.set(field, Number.isSafeInteger(sum) ? sum : null);
    }
  }

  /** The sums as R6-1 fields (only those reported), with `requests` when any request was counted. */
  usage(): RunUsage {
    const usage: RunUsage = {};
    for (const field of USAGE_TOKEN_FIELDS) if (this.sums.has(field)) usage[field] = this.sums.get(field) ?? null;
    if (this.requests > 0) usage.requests = Number.isSafeInteger(this.requests) ? this.requests : null;
    return usage;
  }
}

/** Models in the order first seen, joined by `,` as R6-1 says; undefined when none was named. */
export class ModelNames {
  private readonly names = new Set<string>();
  add(model: string | undefined): void {
    if (model !== undefined) this.names.add(model);
  }
  joined(): string | undefined {
    return this.names.size === 0 ? undefined : [...this.names].join(',');
  }
}

/**
 * Dollars (a float, as OpenCode stores them) as subcents (ten thousand to the dollar), rounded up to
 * the next whole subcent so a cost above zero never reads as zero; a float just above a whole
 * subcent by representation error (0.0124 × 10,000 = 124.00000000000001) is that subcent.
 */
export function dollarsToSubcents(dollars: number): number | undefined {
  if (!Number.isFinite(dollars) || dollars < 0) return undefined;
  const scaled = dollars * 10_000;
  const nearest = Math.round(scaled);
  const subcents = Math.abs(scaled - nearest) < 1e-6 ? nearest : Math.ceil(scaled);
  return Number.isSafeInteger(subcents) ? subcents : undefined;
}
