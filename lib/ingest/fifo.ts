/**
 * The FIFO group rule, in one place (docs/ingest.md): records of one SQS message group must be
 * applied in order, so a record that stays on the queue keeps every LATER record of its group on
 * the queue with it; other groups are unaffected. Parking, write isolation and the batch response
 * all ask this module. Pure: no SQS, no database.
 */

/** The part of an SQS record the rule reads. `attributes` may be missing on a hand-built event (R2-3). */
export interface Grouped {
  messageId: string;
  attributes?: { MessageGroupId?: string } | null;
}

/**
 * The message group of a record. A record without a MessageGroupId (impossible on a FIFO queue,
 * possible in a hand-built or malformed event) is a group of its own: it can neither block nor be
 * blocked by another record. The value is also a valid SQS MessageGroupId, so parking can reuse it.
 */
export function groupOf(record: Grouped): string {
  return record.attributes?.MessageGroupId || `ungrouped:${record.messageId}`;
}

/**
 * Tracks which groups have a record that stays on the queue. Walk records in arrival order:
 * `blocks(group)` before deciding a record, `fail(group)` when it fails.
 */
export class GroupGate {
  readonly #failed = new Set<string>();

  /** true when an earlier record of `group` failed: this record must not overtake it */
  blocks(group: string): boolean {
    return this.#failed.has(group);
  }

  fail(group: string): void {
    this.#failed.add(group);
  }
}

/**
 * The records that must be reported as batch item failures: each record for which `failsOnItsOwn`
 * holds, and every later record of its group (whatever its own result). Arrival order is the
 * order of `items`.
 */
export function failedUnderFifo<T>(
  items: readonly T[],
  groupOfItem: (item: T) => string,
  failsOnItsOwn: (item: T) => boolean,
): Set<T> {
  const gate = new GroupGate();
  const failed = new Set<T>();
  for (const item of items) {
    const group = groupOfItem(item);
    if (gate.blocks(group) || failsOnItsOwn(item)) {
      gate.fail(group);
      failed.add(item);
    }
  }
  return failed;
}

/** Items by group, each group in arrival order; groups in order of first appearance. */
export function byGroup<T>(items: readonly T[], groupOfItem: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groupOfItem(item);
    const members = groups.get(group);
    if (members) members.push(item);
    else groups.set(group, [item]);
  }
  return [...groups.values()];
}
