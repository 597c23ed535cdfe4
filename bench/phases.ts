import type { Dialect } from '../lib/db/dialect/dialect.js';
import { parseFrame } from '../lib/frame/parse.js';
import { normalizeFrame } from '../lib/normalize.js';
import type { SubagentWrite } from '../lib/row.js';
import { foldBatch, prepareFolded } from '../lib/store/write.js';
import type { QueuedFrame } from './frames.js';

/** The handler's own work per frame, µs, by step: what it spends on top of the database's limit. */
export interface HandlerPhases {
  /** JSON.parse and the frame's schema (lib/frame/parse.ts) */
  parseUs: number;
  /** lib/normalize.ts */
  normalizeUs: number;
  /** one summary per conflict key (lib/store/write.ts foldBatch) */
  foldUs: number;
  /** the statement's parameters (prepareFolded) */
  bindUs: number;
}

/**
 * Each step the handler runs before its statement, timed alone over the same frames in the same
 * batches (best of `repeats`, so a busy moment does not count). The rest of the handler's time
 * above the limit is its bookkeeping (FIFO outcomes, the per-frame lag metric, the EMF document,
 * logging) and the garbage those steps leave.
 */
export function measurePhases(
  dialect: Dialect,
  frames: readonly QueuedFrame[],
  batchSize: number,
  repeats = 5,
): HandlerPhases {
  const batches: QueuedFrame[][] = [];
  for (let i = 0; i < frames.length; i += batchSize) batches.push(frames.slice(i, i + batchSize));
  const perFrame = (run: () => void) => {
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < repeats; r++) {
      const start = performance.now();
      run();
      best = Math.min(best, performance.now() - start);
    }
    return (best * 1000) / frames.length;
  };
  const parsed = batches.map((batch) => batch.map((f) => parseFrame(f.body)));
  const writes: SubagentWrite[][] = parsed.map((batch) =>
    batch.flatMap((p) => {
      if (!p.ok) return [];
      const normalized = normalizeFrame(p.frame);
      return normalized.kind === 'write' ? [normalized.row] : [];
    }),
  );
  const folded = writes.map((batch) => foldBatch(batch));
  return {
    parseUs: perFrame(() => {
      for (const batch of batches) for (const f of batch) parseFrame(f.body);
    }),
    normalizeUs: perFrame(() => {
      for (const batch of parsed) for (const p of batch) if (p.ok) normalizeFrame(p.frame);
    }),
    foldUs: perFrame(() => {
      for (const batch of writes) foldBatch(batch);
    }),
    bindUs: perFrame(() => {
      for (const batch of folded) prepareFolded(dialect, batch);
    }),
  };
}
