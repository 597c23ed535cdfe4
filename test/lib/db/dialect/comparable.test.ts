import { describe, expect, it } from 'vitest';
import {
  formatCanonical,
  formatHostSqlite,
  formatKey,
  formatRfc3339,
  type Micros,
  parseRfc3339,
} from '../../../../lib/time.js';
import { TARGETS, useTestDatabase } from '../../../support/targets.js';

/** The text forms a TIMESTAMP column meets: the host driver's trimmed ones, key and RFC 3339 ones. */
const FORMS: [string, (us: Micros) => string][] = [
  ['the host trimmed form (…:37.5+00:00, …:37+00:00)', formatHostSqlite],
  ['the key form (…T…:37.500000000Z)', formatKey],
  ['RFC 3339 (…T…:37.500000Z)', formatRfc3339],
  ['the canonical form (…:37.500000)', formatCanonical],
];

/** Keys whose neighbour 1 µs earlier changes width when trimmed. */
const KEYS = [
  '2026-07-30T01:39:37.5Z',
  '2026-07-30T01:39:37Z',
  '2026-07-30T01:39:37.000001Z',
  '2026-07-30T01:39:37.999999Z',
].map((text) => parseRfc3339(text)!);

describe.each(TARGETS)('AC-24e: microsecond-exact timestamp comparison in SQL on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });

  async function storeAround(format: (us: Micros) => string) {
    await t.db.query('CREATE TABLE stamps (id TEXT PRIMARY KEY, k INTEGER NOT NULL, at TIMESTAMP NOT NULL)');
    for (const [k, key] of KEYS.entries()) {
      await t.db.query('INSERT INTO stamps (id, k, at) VALUES ($1, $2, $3)', [`before-${k}`, k, format(key - 1n)]);
      await t.db.query('INSERT INTO stamps (id, k, at) VALUES ($1, $2, $3)', [`at-${k}`, k, format(key)]);
    }
  }

  it.each(FORMS)('keeps a row at the key and drops one 1 µs before it, stored in %s', async (_form, format) => {
    await storeAround(format);
    const { comparable, timestampParam } = t.db.dialect;
    for (const [k, key] of KEYS.entries()) {
      const rows = await t.db.query<{ id: string }>(
        `SELECT id FROM stamps WHERE k = $1 AND ${comparable('at')} >= ${timestampParam(2)} ORDER BY id`,
        [k, formatCanonical(key)],
      );
      expect(
        rows.map((r) => r.id),
        formatKey(key),
      ).toEqual([`at-${k}`]);
    }
  });

  it.each(FORMS)('counts a row 1 µs before the key as before it, stored in %s', async (_form, format) => {
    await storeAround(format);
    const { comparable, timestampParam } = t.db.dialect;
    for (const [k, key] of KEYS.entries()) {
      const rows = await t.db.query<{ id: string }>(
        `SELECT id FROM stamps WHERE k = $1 AND ${comparable('at')} < ${timestampParam(2)} ORDER BY id`,
        [k, formatCanonical(key)],
      );
      expect(
        rows.map((r) => r.id),
        formatKey(key),
      ).toEqual([`before-${k}`]);
    }
  });

  it('orders rows stored in mixed forms by instant', async () => {
    await t.db.query('CREATE TABLE stamps (id TEXT PRIMARY KEY, at TIMESTAMP NOT NULL)');
    const instants = KEYS.flatMap((key) => [key - 1n, key]);
    // each instant in a different form than its neighbours, inserted in reverse; equal instants tie-break by id
    for (const [i, us] of [...instants.entries()].reverse()) {
      await t.db.query('INSERT INTO stamps (id, at) VALUES ($1, $2)', [
        String(i).padStart(2, '0'),
        FORMS[i % FORMS.length]![1](us),
      ]);
    }
    const rows = await t.db.query<{ id: string }>(
      `SELECT id FROM stamps ORDER BY ${t.db.dialect.comparable('at')}, id`,
    );
    const expected = [...instants.entries()]
      .sort(([, a], [, b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([i]) => String(i).padStart(2, '0'));
    expect(rows.map((r) => r.id)).toEqual(expected);
  });

  it('compares two stored columns 1 µs apart in different forms', async () => {
    await t.db.query('CREATE TABLE pairs (id TEXT PRIMARY KEY, a TIMESTAMP NOT NULL, b TIMESTAMP NOT NULL)');
    const key = KEYS[0]!;
    await t.db.query('INSERT INTO pairs VALUES ($1, $2, $3)', ['later', formatKey(key), formatHostSqlite(key - 1n)]);
    await t.db.query('INSERT INTO pairs VALUES ($1, $2, $3)', ['equal', formatRfc3339(key), formatHostSqlite(key)]);
    const { comparable } = t.db.dialect;
    const later = await t.db.query<{ id: string }>(
      `SELECT id FROM pairs WHERE ${comparable('a')} > ${comparable('b')}`,
    );
    const equal = await t.db.query<{ id: string }>(
      `SELECT id FROM pairs WHERE ${comparable('a')} = ${comparable('b')}`,
    );
    expect(later.map((r) => r.id)).toEqual(['later']);
    expect(equal.map((r) => r.id)).toEqual(['equal']);
  });
});
