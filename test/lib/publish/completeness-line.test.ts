import { describe, expect, it } from 'vitest';
import { completenessLine } from '../../../lib/publish/run.js';
import { type Completeness, NOTHING_UNREADABLE } from '../../../lib/report/document.js';

const completeness = (unpriced: number | null): Completeness => ({
  capture_since: '2026-08-01T00:00:00.000000Z',
  backfill_through: null,
  verified_through: null,
  shortfall: { open: false, count: 0, checked: true },
  missing: [],
  unreadable: { ...NOTHING_UNREADABLE },
  lower_bound_sessions: 0,
  unpriced_events: unpriced,
  notes: [],
});

describe("publish's completeness line (issue 58, R5-6)", () => {
  it.each([
    [28, '28 unpriced cost event(s): every cost that leaves one out is a lower bound'],
    [0, 'no unpriced cost event'],
    [null, 'unpriced cost events not known (no cost_source in the ledger, or no ledger)'],
  ])('R5-1: %s unpriced events: the line says "%s"', (unpriced, words) => {
    expect(completenessLine(completeness(unpriced)).split('; ')).toContain(words);
  });
});
