import { describe, expect, it } from 'vitest';
import { COST_RANGE } from '../../../../lib/report/sql.js';
import { TARGETS, useTestDatabase } from '../../../support/targets.js';

/*
 * Issue 57 #19 (docs/report.md#fractions-of-a-subcent): `Dialect.readableRounded` reads a cost that
 * is a fraction one way on every dialect: rounded once, half away from zero, to an integer in the
 * range, else NULL. Each value as the host could store it (a SQLite REAL, a PostgreSQL double
 * precision and numeric), against a hand-computed rounding.
 */

const CASES: [stored: number, read: number | null][] = [
  [0.25, 0],
  [0.5, 1],
  [1.5, 2],
  [2.5, 3],
  [-0.5, -1],
  [-2.5, -3],
  [-2.4, -2],
  [7, 7],
  [2_147_483_647.4, 2_147_483_647],
  [-2_147_483_648.4, -2_147_483_648],
  // the rounded value is beyond the range: unreadable, never clamped
  [2_147_483_647.5, null],
  [-2_147_483_648.5, null],
  [1e300, null],
];

describe.each(TARGETS)('issue 57 #19: readableRounded on %s', (target) => {
  const t = useTestDatabase(target, { subagentTable: false });
  const types = target === 'sqlite' ? ['REAL'] : ['double precision', 'numeric'];

  it.each(types)(
    'issue 57 #19: a %s cost is rounded once, half away from zero, and read only where the integer is in −2^31 … 2^31 − 1',
    async (type) => {
      await t.db.query(`CREATE TABLE costs (k INTEGER PRIMARY KEY, v ${type})`);
      for (const [k, [stored]] of CASES.entries())
        await t.db.query('INSERT INTO costs (k, v) VALUES ($1, $2)', [k, String(stored)]);
      const rows = await t.db.query<{ r: number | string | null }>(
        `SELECT ${t.db.dialect.readableRounded('v', ...COST_RANGE)} AS r FROM costs ORDER BY k`,
      );
      expect(rows.map((row) => (row.r === null ? null : Number(row.r)))).toEqual(CASES.map(([, read]) => read));
    },
  );
});
