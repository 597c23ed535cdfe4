/**
 * R6-11 (docs/report.md#money): the one rule that turns the host ledger's subcents into dollars, for
 * the report's table, the CSV's comment cells and the page alike, so one figure never reads two
 * ways (issue 58: `$6.98` beside `$0.4340` in one column, `≥ $0.15` in the table and `≥ $0.1499` on
 * the page, `$-4.10` beside `-$4.10`).
 *
 * - **One precision per column.** Cents (`$6.98`), unless a nonzero value of the column is under
 *   ten cents: then every subcent, for the whole column (`$0.0133`, `$1,204.0000`), so a small cost
 *   keeps two significant digits and is never shown as `$0.00`. A figure alone is a column of one.
 * - **Rounding.** An exact figure to the nearest shown unit, half away from zero (the report's one
 *   rounding rule, as its means: sql.ts `roundedQuotient`); a lower bound (`≥`) down, toward
 *   −∞, so its printed dollars never exceed the figure it bounds (issue 57: `≥ 2,655 subcents` is
 *   `≥ $0.26`, never `≥ $0.27`).
 * - **Signs and separators.** A negative figure (a host may store a refund) is `-$4.10`; the dollars
 *   carry thousands separators (`$1,204.00`), everywhere.
 */

/** 1 USD = 10,000 subcents (the host's unit, office_cost_events.cost_subcents). */
export const SUBCENTS_PER_DOLLAR = 10_000;

/** A column shows cents when every nonzero value in it is at least this (ten cents). */
const CENTS_FROM = 1_000;

/** Digits after the dollar point: cents, or every subcent. */
export type MoneyDecimals = 2 | 4;

/** The one precision of a column of subcents (nulls are not shown, so they do not count). */
export function moneyDecimals(column: Iterable<number | null | undefined>): MoneyDecimals {
  for (const value of column) {
    if (value !== null && value !== undefined && value !== 0 && Math.abs(value) < CENTS_FROM) return 4;
  }
  return 2;
}

export interface MoneyOptions {
  /** the column's precision (moneyDecimals); default the figure's own, as a column of one */
  decimals?: MoneyDecimals;
  /** the figure is a lower bound (shown after `≥`): rounded down, never up */
  lowerBound?: boolean;
}

/**
 * Subcents (an integer) as dollars: `$82.10`, `-$4.10`, `$1,204.00`, `$0.0133`. The caller writes
 * the `≥` of a lower bound; this rounds it down.
 */
export function dollars(subcents: number, options: MoneyOptions = {}): string {
  if (!Number.isSafeInteger(subcents))
    throw new RangeError(
      `dollars: a cost in subcents is an integer, got ${subcents} (a figure of the report document)`,
    );
  const decimals = options.decimals ?? moneyDecimals([subcents]);
  const unit = BigInt(SUBCENTS_PER_DOLLAR / 10 ** decimals);
  const value = BigInt(subcents);
  const shown = options.lowerBound === true ? floorDiv(value, unit) : halfAwayFromZero(value, unit);
  const negative = shown < 0n;
  const magnitude = negative ? -shown : shown;
  const perDollar = 10n ** BigInt(decimals);
  const fraction = String(magnitude % perDollar).padStart(decimals, '0');
  return `${negative ? '-' : ''}$${(magnitude / perDollar).toLocaleString('en-US')}.${fraction}`;
}

/** A column of subcents as dollars at its one precision (moneyDecimals); null stays null. */
export function dollarColumn(
  column: readonly (number | null)[],
  lowerBound: (i: number) => boolean = () => false,
): (string | null)[] {
  const decimals = moneyDecimals(column);
  return column.map((v, i) => (v === null ? null : dollars(v, { decimals, lowerBound: lowerBound(i) })));
}

/** `a ÷ n` (n > 0) rounded down, toward −∞. */
const floorDiv = (a: bigint, n: bigint) => (a >= 0n ? a / n : -((-a + n - 1n) / n));

/** `a ÷ n` (n > 0) to the nearest integer, half away from zero. */
const halfAwayFromZero = (a: bigint, n: bigint) => {
  const magnitude = ((a < 0n ? -a : a) * 2n + n) / (2n * n);
  return a < 0n ? -magnitude : magnitude;
};
