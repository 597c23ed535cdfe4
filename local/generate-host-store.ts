import type { Column, ColumnType } from '../lib/columns.js';
import type { Database } from '../lib/db/database.js';
import { type Micros, parseRfc3339 } from '../lib/time.js';
import { HOST_FIXTURES, type HostFixtureName } from './host-fixtures.js';
import { createKandevCostEvents } from './kandev-schema.js';

/**
 * A synthetic host store shaped like the real sample (docs/README.md#real-traffic), for tests, the local stack and
 * benchmarks: sessions, turns and `task_session_messages` whose subagent messages follow the
 * sample's status mix and fan-out, plus the malformed metadata real stores hold (docs/migrate.md#5-malformed-metadata).
 * Deterministic for a seed; inserted in multi-row batches so a million messages is feasible.
 */
export interface GenerateOptions {
  /** total rows inserted into task_session_messages */
  messages: number;
  /** share of them that are subagent messages (kind = subagent_task); default 0.1 */
  subagentShare?: number;
  /** PRNG seed; the same seed and options give the same store; default 1 */
  seed?: number;
  /**
   * malformed rows, cycling through MALFORMED_KINDS; default max(7, messages / 1000), bounded by
   * the slots available. Document kinds replace ordinary messages, value kinds subagent ones.
   */
  malformed?: number;
  /** created_at of the generated messages spans [startAt, endAt); default 2026-07-01 + 30 days */
  startAt?: Micros;
  endAt?: Micros;
  /** prefix of every generated id, so several stores can share one database; default `g<seed>-` */
  idPrefix?: string;
  /**
   * the host schema the database has (local/host-fixtures.ts); default `minimal`. On `host` the
   * tasks, sessions and turns carry the real host's NOT NULL columns, and documents the host's
   * store cannot hold (not JSON) are not generated.
   */
  fixture?: HostFixtureName;
  /**
   * also write the host's office cost ledger (office_cost_events, created with the host's DDL when
   * absent) as the host writes it under its cost contract v3 (R3-7, R5-5; costLedger below)
   */
  costs?: boolean;
}

/** What the generated cost ledger holds: the truth the report's cost figures must equal. */
export interface CostSummary {
  events: number;
  /** SUM(cost_subcents) over every event (an unpriced one stores 0) */
  subcents: number;
  /** the part with estimated = 1 */
  estimatedSubcents: number;
  /** R5-1: events with cost_source = 'unpriced' (cost_subcents 0: no price was found) */
  unpricedEvents: number;
  /** R6-9: of them, those with estimated = 1 (the estimated part's own unpriced events) */
  estimatedUnpricedEvents: number;
  /** R5-2: the cost of the events with cost_source 'provider_reported' and 'models_dev_list' */
  measuredSubcents: number;
  listPricedSubcents: number;
  /** rows written before the host's cost contract: NULL cost_source, turn_id and cost_contract_version */
  legacyEvents: number;
  legacySubcents: number;
  /** contract rows whose tokens_out is NULL (the agent reported none) */
  nullTokensOut: number;
  /** R5-3: per generated turn, what its fan-out cost figures are made of (local/expected-fan-out-cost.ts) */
  turnLedger: TurnLedger;
}

/**
 * Per generated turn `t` (id generatedTurnId(idPrefix, t)): the top-level
 * subagent keys the generator wrote on it, the sum of its ledger events' cost_subcents (null: no
 * event names it) and whether one of them is unpriced (1) or not (0). Plain arrays, so
 * `npm start --json` prints them as they are.
 */
export interface TurnLedger {
  idPrefix: string;
  topLevel: number[];
  cost: Array<number | null>;
  unpriced: number[];
}

/**
 * Documents that cannot be read (NULL, '', 'null', invalid JSON) are never subagent messages;
 * the value kinds are qualifying subagent messages whose one bad value must become NULL/0.
 */
export const MALFORMED_KINDS = [
  'null',
  'empty',
  'json_null',
  'invalid_json',
  'string_metric',
  'fraction_metric',
  'string_boolean',
] as const;
export type MalformedKind = (typeof MALFORMED_KINDS)[number];
const DOCUMENT_KINDS: readonly MalformedKind[] = ['null', 'empty', 'json_null', 'invalid_json'];
const VALUE_KINDS: readonly MalformedKind[] = ['string_metric', 'fraction_metric', 'string_boolean'];

/** What was generated, so callers can check a backfill or health report against it. */
export interface HostStoreSummary {
  messages: number;
  /** messages whose metadata says kind = subagent_task (qualifying or not) */
  subagentMessages: number;
  /** subagent messages passing the identity filter (docs/migrate.md#3-the-backfill-transaction) */
  qualifyingMessages: number;
  /** distinct (task_session_id, tool_call_id) among them: the rows a backfill inserts */
  qualifyingKeys: number;
  /** qualifying messages superseded by a newer message of the same key (AC-21b) */
  supersededMessages: number;
  /** subagent messages without identity (empty task_id or tool_call_id): skipped (AC-21a) */
  identityless: number;
  /** agent status of each key's newest message; `(absent)` when it has none */
  byStatus: Record<string, number>;
  malformed: Record<MalformedKind, number>;
  malformedTotal: number;
  /** keys whose newest message has parent_tool_call_id set */
  nested: number;
  /** fan-out → number of turns with that many distinct keys */
  fanOut: Record<number, number>;
  /** the same counting top-level keys only (no parent_tool_call_id): the report's fan_out (R3-5) */
  topLevelFanOut: Record<number, number>;
  sessions: number;
  turns: number;
  /** created_at of the first and last generated message; null when messages = 0 */
  createdAt: { first: Micros; last: Micros } | null;
  /** MAX(created_at) over qualifying messages: what backfill_through must equal; null when none */
  newestQualifyingCreatedAt: Micros | null;
  /** the office cost ledger written with `costs`; null without */
  costs: CostSummary | null;
}

/** docs/README.md#real-traffic: turns fanned out to n subagents in the real sample. */
const FAN_OUT_WEIGHTS: ReadonlyArray<readonly [number, number]> = [
  [1, 65],
  [2, 12],
  [3, 42],
  [4, 5],
  [5, 2],
  [8, 1],
];
/** docs/README.md#real-traffic: agent status shares (the one absent status is placed explicitly). */
const STATUS_WEIGHTS: ReadonlyArray<readonly [Status, number]> = [
  ['async_launched', 190],
  ['completed', 57],
  ['started', 5],
];
type Status = 'async_launched' | 'completed' | 'started' | 'absent';
/** The launching tool call's ACP status: deliberately not always the child's own status. */
const TOOL_STATUS: Record<Status, string> = {
  async_launched: 'completed',
  completed: 'completed',
  started: 'in_progress',
  absent: 'pending',
};
const MODELS = ['claude-opus-5[1m]', 'claude-sonnet-4-5', 'gpt-5-codex'];
const TYPES = ['security-reviewer', 'general-purpose', 'Explore', 'code-reviewer', 'test-runner'];
const DESCRIPTIONS = ['Review auth', 'Find call sites', 'Run the test suite', 'Summarise the diff', 'Check migrations'];
const LARGEST_TOTAL_TOKENS = 275_717;
const TURNS_PER_SESSION = 6;
const MESSAGES_PER_TURN = 25;
const BATCH_ROWS = 5_000;
const DEFAULT_START = parseRfc3339('2026-07-01T00:00:00Z')!;
const DEFAULT_SPAN = 30n * 86_400_000_000n;
/**
 * Per-million-token rates in subcents (1 USD = 10,000 subcents): $3 in, $0.30 cached read, $3.75
 * cached write, $15 out, as the host's catalog (models.dev) prices a mid model.
 */
const RATE_IN = 30_000;
const RATE_CACHED_READ = 3_000;
const RATE_CACHED_WRITE = 37_500;
const RATE_OUT = 150_000;
/** kandev's office/models CostContractVersion, written on every row of the contract */
const COST_CONTRACT_VERSION = 3;
const PRICING_CATALOG_VERSION = 'models.dev@2026-08-01';
/** the first fifth of the period predates the host's cost contract: its rows are legacy */
const LEGACY_SHARE = 5n;
/** of the contract's events, unpriced ones: about one event in ten of the whole ledger (R5-5) */
const UNPRICED_SHARE = 0.12;
const COST_COLUMNS = columns([
  ['id', 'text'],
  ['session_id', 'text'],
  ['task_id', 'text'],
  ['turn_id', 'text'],
  ['model', 'text'],
  ['provider', 'text'],
  ['tokens_in', 'integer'],
  ['tokens_cached_in', 'integer'],
  ['tokens_cached_read', 'integer'],
  ['tokens_cached_write', 'integer'],
  ['tokens_out', 'integer'],
  ['cost_subcents', 'integer'],
  ['estimated', 'integer'],
  ['usage_event_id', 'text'],
  ['cost_source', 'text'],
  ['rate_input_per_million', 'integer'],
  ['rate_cached_read_per_million', 'integer'],
  ['rate_cached_write_per_million', 'integer'],
  ['rate_output_per_million', 'integer'],
  ['pricing_catalog_version', 'text'],
  ['cost_contract_version', 'integer'],
  ['occurred_at', 'timestamp'],
  ['created_at', 'timestamp'],
]);

/** mulberry32: small, fast and deterministic; quality is ample for test data (the benchmarks' frames use it too). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function weighted<T>(random: () => number, table: ReadonlyArray<readonly [T, number]>): T {
  const total = table.reduce((sum, [, w]) => sum + w, 0);
  let r = random() * total;
  for (const [value, w] of table) {
    r -= w;
    if (r < 0) return value;
  }
  return table[table.length - 1]![0];
}

export const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
export const between = (random: () => number, lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
const pad = (n: number) => n.toString().padStart(8, '0');
/** The id of generated turn `t` in a store of id prefix `prefix` (GenerateOptions.idPrefix). */
export const generatedTurnId = (prefix: string, t: number) => `${prefix}turn-${pad(t)}`;

interface Invocation {
  toolCallId: string;
  status: Status;
  parentToolCallId: string;
  malformed?: MalformedKind;
}

function columns(spec: ReadonlyArray<readonly [string, ColumnType]>): Column[] {
  return spec.map(([name, type]) => ({ name, type, nullable: true, merge: 'keep' }));
}
const SESSION_COLUMNS = columns([
  ['id', 'text'],
  ['task_id', 'text'],
]);
const TURN_COLUMNS = columns([
  ['id', 'text'],
  ['task_session_id', 'text'],
]);
const TASK_TITLE_COLUMNS = columns([
  ['id', 'text'],
  ['title', 'text'],
]);
const TASK_TOPICS = ['login page', 'billing export', 'search index', 'flaky CI job', 'onboarding flow', 'rate limiter'];
const TASK_VERBS = ['Fix the', 'Speed up the', 'Refactor the', 'Add tests for the', 'Document the'];
/** A task title like a person writes one ("Fix the login page"), numbered past the first thirty. */
function taskTitle(n: number): string {
  const base = `${TASK_VERBS[n % TASK_VERBS.length]} ${TASK_TOPICS[Math.floor(n / TASK_VERBS.length) % TASK_TOPICS.length]}`;
  const round = Math.floor(n / (TASK_VERBS.length * TASK_TOPICS.length));
  return round === 0 ? base : `${base} (${round + 1})`;
}
/** The real host's NOT NULL columns without a DEFAULT (local/kandev-schema.ts). */
const HOST_TASK_COLUMNS = columns([
  ['id', 'text'],
  ['title', 'text'],
  ['created_at', 'timestamp'],
  ['updated_at', 'timestamp'],
]);
const HOST_SESSION_COLUMNS = columns([
  ['id', 'text'],
  ['task_id', 'text'],
  ['started_at', 'timestamp'],
  ['updated_at', 'timestamp'],
]);
const HOST_TURN_COLUMNS = columns([
  ['id', 'text'],
  ['task_session_id', 'text'],
  ['task_id', 'text'],
  ['started_at', 'timestamp'],
  ['created_at', 'timestamp'],
  ['updated_at', 'timestamp'],
]);
const MESSAGE_COLUMNS = columns([
  ['id', 'text'],
  ['task_session_id', 'text'],
  ['task_id', 'text'],
  ['turn_id', 'text'],
  ['author_type', 'text'],
  ['content', 'text'],
  ['type', 'text'],
  ['metadata', 'text'],
  ['created_at', 'timestamp'],
  ['updated_at', 'timestamp'],
]);

/** Multi-row inserts through the dialect's one-statement row source, BATCH_ROWS at a time. */
class BatchInserter {
  private rows: unknown[][] = [];
  constructor(
    private readonly db: Database,
    private readonly table: string,
    private readonly cols: Column[],
  ) {}
  async add(row: unknown[]): Promise<void> {
    this.rows.push(row);
    if (this.rows.length >= BATCH_ROWS) await this.flush();
  }
  async flush(): Promise<void> {
    if (this.rows.length === 0) return;
    const { dialect } = this.db;
    const sql = `INSERT INTO ${this.table} (${this.cols.map((c) => c.name).join(', ')}) ${dialect.selectRows(this.cols)}`;
    const rows = this.rows;
    this.rows = [];
    await this.db.query(sql, dialect.bindRows(this.cols, rows));
    // On SQLite a statement resolves at once (better-sqlite3 is synchronous), so a run of batches
    // is one long chain of microtasks and a signal's listener waited for the whole store (about
    // 25 s at 400,000 messages): a turn of the event loop after each batch lets Ctrl-C stop it
    // within a batch (issue 58 #10).
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

export async function generateHostStore(db: Database, options: GenerateOptions): Promise<HostStoreSummary> {
  const total = Math.max(0, Math.floor(options.messages));
  const seed = options.seed ?? 1;
  const random = prng(seed);
  const prefix = options.idPrefix ?? `g${seed}-`;
  const startAt = options.startAt ?? DEFAULT_START;
  const endAt = options.endAt ?? startAt + DEFAULT_SPAN;
  if (endAt <= startAt) throw new Error('generateHostStore: endAt must be after startAt');

  // Slots: subagent messages = invocations (one per key) + superseding duplicates + identityless.
  const subagentSlots = Math.min(total, Math.round(total * (options.subagentShare ?? 0.1)));
  const identityless = subagentSlots >= 20 ? Math.max(1, Math.round(subagentSlots * 0.01)) : 0;
  const superseding = subagentSlots >= 50 ? Math.max(1, Math.round(subagentSlots * 0.005)) : 0;
  const keyCount = subagentSlots - identityless - superseding;
  const ordinary = total - subagentSlots;

  // Malformed kinds cycle; each kind only where it has room.
  const malformed = Object.fromEntries(MALFORMED_KINDS.map((k) => [k, 0])) as Record<MalformedKind, number>;
  const wanted = options.malformed ?? Math.max(MALFORMED_KINDS.length, Math.floor(total / 1000));
  let documentMalformed = 0;
  let valueMalformed = 0;
  const fixture = HOST_FIXTURES[options.fixture ?? 'minimal'];
  const storable = (kind: MalformedKind) => fixture.holdsMetadata(documentText(kind), db.dialect.name);
  const hasRoom = (kind: MalformedKind) =>
    DOCUMENT_KINDS.includes(kind) ? storable(kind) && documentMalformed < ordinary : valueMalformed < keyCount;
  for (let i = 0, placed = 0; placed < wanted && MALFORMED_KINDS.some(hasRoom); i++) {
    const kind = MALFORMED_KINDS[i % MALFORMED_KINDS.length]!;
    if (!hasRoom(kind)) continue;
    malformed[kind] += 1;
    if (DOCUMENT_KINDS.includes(kind)) documentMalformed += 1;
    else valueMalformed += 1;
    placed += 1;
  }

  // Invocations grouped into fan-out turns.
  const fanOutTurns: Invocation[][] = [];
  let made = 0;
  while (made < keyCount) {
    const n = Math.min(weighted(random, FAN_OUT_WEIGHTS), keyCount - made);
    const turn: Invocation[] = [];
    for (let j = 0; j < n; j++) {
      turn.push({
        toolCallId: `toolu_${prefix}${pad(made++)}`,
        status: weighted(random, STATUS_WEIGHTS),
        parentToolCallId: '',
      });
    }
    fanOutTurns.push(turn);
  }
  const invocations = fanOutTurns.flat();
  if (invocations.length >= 2) invocations[Math.floor(invocations.length / 2)]!.status = 'absent';
  // Exactly one nested subagent: the second of the first turn that fans out, else any second.
  if (invocations.length >= 2) {
    const turn = fanOutTurns.find((t) => t.length >= 2) ?? [invocations[0]!, invocations[1]!];
    turn[1]!.parentToolCallId = turn[0]!.toolCallId;
  }
  // Bad values land on completed invocations first, where metrics are reported.
  const valueTargets = [
    ...invocations.filter((i) => i.status === 'completed'),
    ...invocations.filter((i) => i.status !== 'completed'),
  ];
  let target = 0;
  for (const kind of VALUE_KINDS) for (let k = 0; k < malformed[kind]; k++) valueTargets[target++]!.malformed = kind;

  // A fifth of the turns launch no subagent (the host's ledger still costs them, R5-5).
  const turns = Math.max(Math.ceil(fanOutTurns.length * 1.25), Math.ceil(total / MESSAGES_PER_TURN));
  const sessions = Math.ceil(turns / TURNS_PER_SESSION);
  const fanOutAt = new Map<number, Invocation[]>();
  for (const [f, t] of fanOutTurns.entries()) fanOutAt.set(Math.floor((f * turns) / fanOutTurns.length), t);
  // Superseded keys are plain async launches that later complete, spread over the store.
  const launches = invocations.filter((i) => i.status === 'async_launched' && !i.parentToolCallId && !i.malformed);
  const superseded = new Set(
    Array.from(
      { length: Math.min(superseding, launches.length) },
      (_, d) => launches[Math.floor((d * launches.length) / superseding)]!,
    ),
  );
  const identitylessAt = new Map<number, number>();
  for (let i = 0; i < identityless; i++) {
    const turn = Math.floor((i * turns) / identityless);
    identitylessAt.set(turn, (identitylessAt.get(turn) ?? 0) + 1);
  }

  const sessionId = (s: number) => `${prefix}ses-${pad(s)}`;
  const taskId = (s: number) => `${prefix}task-${pad(Math.floor(s / 2))}`;
  const fillersOf = (t: number) => Math.floor(((t + 1) * ordinary) / turns) - Math.floor((t * ordinary) / turns);
  const span = endAt - startAt;
  // Message `i` is created in [startAt + span·i/total, … + span/total) (nextCreatedAt), so a turn
  // starts at its first message's slot, to the whole second below (a created_at cut to the second
  // or millisecond stays at or after it): turns, sessions and tasks spread over the period (R5-5).
  const slotOf = (i: number) => startAt + (span * BigInt(i)) / BigInt(Math.max(total, 1));
  const turnStart: Micros[] = [];
  for (let t = 0, first = 0; t < turns; t++) {
    const at = slotOf(first);
    turnStart.push(at - (((at % 1_000_000n) + 1_000_000n) % 1_000_000n));
    const fan = fanOutAt.get(t) ?? [];
    first += fillersOf(t) + fan.length + fan.filter((inv) => superseded.has(inv)).length + (identitylessAt.get(t) ?? 0);
  }
  const sessionStart = (s: number) => turnStart[s * TURNS_PER_SESSION] ?? startAt;
  const real = fixture.name === 'host';
  const hostTime = (us: Micros) => db.dialect.encodeTimestamp(us);
  // Tasks with titles, as the host's `tasks` table has them (the page shows them, R4-10); on the
  // minimal schema the generator adds the table's id and title, the two columns the report reads.
  if (!real) await db.query('CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL)');
  const taskRows = real
    ? new BatchInserter(db, 'tasks', HOST_TASK_COLUMNS)
    : new BatchInserter(db, 'tasks', TASK_TITLE_COLUMNS);
  for (let s = 0; s < sessions; s += 2) {
    const title = taskTitle(s / 2);
    const at = hostTime(sessionStart(s));
    await taskRows.add(real ? [taskId(s), title, at, at] : [taskId(s), title]);
  }
  await taskRows.flush();
  const sessionRows = new BatchInserter(db, 'task_sessions', real ? HOST_SESSION_COLUMNS : SESSION_COLUMNS);
  for (let s = 0; s < sessions; s++) {
    const at = hostTime(sessionStart(s));
    await sessionRows.add(real ? [sessionId(s), taskId(s), at, at] : [sessionId(s), taskId(s)]);
  }
  await sessionRows.flush();
  const turnRows = new BatchInserter(db, 'task_session_turns', real ? HOST_TURN_COLUMNS : TURN_COLUMNS);
  for (let t = 0; t < turns; t++) {
    const session = Math.floor(t / TURNS_PER_SESSION);
    const id = generatedTurnId(prefix, t);
    const at = hostTime(turnStart[t]!);
    await turnRows.add(real ? [id, sessionId(session), taskId(session), at, at, at] : [id, sessionId(session)]);
  }
  await turnRows.flush();

  const costs = options.costs
    ? await costLedger(db, seed, prefix, sessionId, taskId, startAt + span / LEGACY_SHARE)
    : undefined;

  // Messages, turn by turn, with strictly increasing created_at (so "newest" is unambiguous)
  // in the host's varying widths: some whole seconds, some whole milliseconds.
  const messageRows = new BatchInserter(db, 'task_session_messages', MESSAGE_COLUMNS);
  let index = 0;
  const seen: { first: Micros | null; last: Micros; newestQualifying: Micros | null } = {
    first: null,
    last: startAt - 1n,
    newestQualifying: null,
  };
  const nextCreatedAt = (): Micros => {
    let at = slotOf(index) + BigInt(Math.floor(random() * Number(span / BigInt(Math.max(total, 1)))));
    const width = random();
    if (width < 0.05) at -= at % 1_000_000n;
    else if (width < 0.15) at -= at % 1_000n;
    if (at <= seen.last) at = seen.last + 1n;
    seen.last = at;
    seen.first ??= at;
    index += 1;
    return at;
  };
  const encode = (us: Micros) => db.dialect.encodeTimestamp(us);
  const byStatus: Record<string, number> = {};
  const fanOut: Record<number, number> = {};
  const topLevelFanOut: Record<number, number> = {};
  let documentLeft = documentMalformed;
  const documentQueue = DOCUMENT_KINDS.flatMap((k) => Array<MalformedKind>(malformed[k]).fill(k));
  let ordinaryIndex = 0;
  let identitylessMade = 0;
  let nested = 0;

  interface Message {
    session: number;
    turn: number;
    author: 'user' | 'agent';
    type: 'message' | 'tool_call';
    content: string;
    metadata: string | null;
    createdAt: Micros;
    updatedAt: Micros;
    /** the row's task_id column; default the session's task */
    task?: string;
  }
  // Called right after nextCreatedAt(), so `index - 1` is this message's position.
  const addMessage = (m: Message) =>
    messageRows.add([
      `${prefix}msg-${pad(index - 1)}`,
      sessionId(m.session),
      m.task ?? taskId(m.session),
      generatedTurnId(prefix, m.turn),
      m.author,
      m.content,
      m.type,
      m.metadata,
      encode(m.createdAt),
      encode(m.updatedAt),
    ]);
  const addSubagent = async (session: number, turn: number, inv: Invocation, status: Status) => {
    const createdAt = nextCreatedAt();
    const updatedAt = createdAt + BigInt(between(random, 0, 120_000_000));
    const metadata = subagentMetadata(random, inv, status);
    await addMessage({
      session,
      turn,
      author: 'agent',
      type: 'tool_call',
      content: 'subagent',
      metadata,
      createdAt,
      updatedAt,
    });
    if (seen.newestQualifying === null || createdAt > seen.newestQualifying) seen.newestQualifying = createdAt;
  };
  const addOrdinary = async (session: number, turn: number) => {
    const createdAt = nextCreatedAt();
    // Spread the unreadable documents evenly over the ordinary messages.
    const remaining = ordinary - ordinaryIndex++;
    const malformedHere = documentLeft > 0 && random() * remaining < documentLeft;
    let metadata: string | null =
      random() < 0.5
        ? '{}'
        : JSON.stringify({
            tool_call_id: `tool_${prefix}${pad(index)}`,
            status: 'completed',
            normalized: { kind: 'shell_exec' },
          });
    if (malformedHere) {
      documentLeft -= 1;
      metadata = documentText(documentQueue.shift()!);
    }
    const author = random() < 0.3 ? 'user' : 'agent';
    await addMessage({
      session,
      turn,
      author,
      type: 'message',
      content: 'ordinary message',
      metadata,
      createdAt,
      updatedAt: createdAt,
    });
  };

  for (let t = 0; t < turns; t++) {
    const session = Math.floor(t / TURNS_PER_SESSION);
    const fillers = fillersOf(t);
    let filled = 0;
    // the turn opens with an ordinary message (the prompt), subagents follow
    if (fillers > 0) {
      await addOrdinary(session, t);
      filled += 1;
    }
    const fan = fanOutAt.get(t) ?? [];
    if (fan.length > 0) fanOut[fan.length] = (fanOut[fan.length] ?? 0) + 1;
    const topLevel = fan.filter((inv) => !inv.parentToolCallId).length;
    if (topLevel > 0) topLevelFanOut[topLevel] = (topLevelFanOut[topLevel] ?? 0) + 1;
    const supersededHere: Invocation[] = [];
    for (const inv of fan) {
      await addSubagent(session, t, inv, inv.status);
      if (superseded.has(inv)) supersededHere.push(inv);
      else count(byStatus, inv.status === 'absent' ? '(absent)' : inv.status);
      if (inv.parentToolCallId) nested += 1;
    }
    // A later message for the same key: it completes, and it is the one the backfill keeps.
    for (const inv of supersededHere) {
      await addSubagent(session, t, inv, 'completed');
      count(byStatus, 'completed');
    }
    for (let i = identitylessAt.get(t) ?? 0; i > 0; i--) {
      const createdAt = nextCreatedAt();
      // alternately no tool_call_id and an empty task_id column (AC-21a)
      const noToolCall = identitylessMade++ % 2 === 0;
      const inv: Invocation = {
        toolCallId: noToolCall ? '' : `toolu_${prefix}anon-${pad(index)}`,
        status: 'async_launched',
        parentToolCallId: '',
      };
      const metadata = subagentMetadata(random, inv, inv.status);
      const task = noToolCall ? undefined : '';
      await addMessage({
        session,
        turn: t,
        author: 'agent',
        type: 'tool_call',
        content: 'subagent',
        metadata,
        createdAt,
        updatedAt: createdAt,
        task,
      });
    }
    for (; filled < fillers; filled++) await addOrdinary(session, t);
    await costs?.add(session, t, topLevel, turnStart[t]!, seen.last);
  }
  await messageRows.flush();
  await costs?.flush();

  return {
    messages: index,
    subagentMessages: keyCount + superseded.size + identityless,
    qualifyingMessages: keyCount + superseded.size,
    qualifyingKeys: keyCount,
    supersededMessages: superseded.size,
    identityless,
    byStatus,
    malformed,
    malformedTotal: documentMalformed + valueMalformed,
    nested,
    fanOut,
    topLevelFanOut,
    sessions,
    turns,
    createdAt: seen.first === null ? null : { first: seen.first, last: seen.last },
    newestQualifyingCreatedAt: seen.newestQualifying,
    costs: costs?.summary ?? null,
  };
}

/**
 * The host's office cost ledger as kandev writes it under its cost contract v3 (R3-7, R5-5;
 * office/service/event_subscribers.go handlePromptUsage), one turn at a time:
 * - turns started before `contractAt` have one legacy event each, written before the contract:
 *   NULL cost_source, turn_id, cost_contract_version and cached-token split, priced at the old rates;
 * - later turns have one usage event (most), two (usage reported again after the turn ended) or
 *   none; each event `provider_reported` (the agent's own figure, no rates), `models_dev_list`
 *   (tokens at the catalog's list price, rates and catalog version recorded) or, about one event in
 *   ten, `unpriced` (no price found: cost_subcents 0, no rates); tokens_out NULL on some
 *   (the agent reported none), estimated = 1 on about one in ten (token counts not authoritative).
 * Every turn's cost grows with its top-level subagents. Its own PRNG, so the messages of a seed stay
 * the same with or without the ledger.
 */
async function costLedger(
  db: Database,
  seed: number,
  prefix: string,
  sessionId: (s: number) => string,
  taskId: (s: number) => string,
  contractAt: Micros,
) {
  await createKandevCostEvents(db);
  const random = prng(seed ^ 0x5eed);
  const rows = new BatchInserter(db, 'office_cost_events', COST_COLUMNS);
  const summary: CostSummary = {
    events: 0,
    subcents: 0,
    estimatedSubcents: 0,
    unpricedEvents: 0,
    estimatedUnpricedEvents: 0,
    measuredSubcents: 0,
    listPricedSubcents: 0,
    legacyEvents: 0,
    legacySubcents: 0,
    nullTokensOut: 0,
    turnLedger: { idPrefix: prefix, topLevel: [], cost: [], unpriced: [] },
  };
  const encode = (us: Micros) => db.dialect.encodeTimestamp(us);
  let eventIndex = 0;
  const event = async (session: number, turn: string | null, subagents: number, model: string, at: Micros) => {
    const tokensIn = between(random, 8_000, 120_000) + subagents * between(random, 5_000, 40_000);
    const tokensOut = between(random, 500, 8_000) + subagents * between(random, 200, 2_000);
    const estimated = random() < 0.1 ? 1 : 0;
    const id = `${prefix}cost-${pad(eventIndex++)}`;
    const provider = model.startsWith('gpt') ? 'openai' : 'anthropic';
    const common = [id, sessionId(session), taskId(session), turn, model, provider, tokensIn];
    const when = [encode(at), encode(at)];
    let cost: number;
    let unpriced = false;
    if (turn === null) {
      cost = Math.round((tokensIn * RATE_IN + tokensOut * RATE_OUT) / 1_000_000);
      summary.legacyEvents += 1;
      summary.legacySubcents += cost;
      // before the contract: no cost_source, turn, cached split or contract version
      await rows.add(
        [...common, 0, null, null, tokensOut, cost, estimated, `${id}-usage`, null].concat(
          [RATE_IN, null, null, RATE_OUT, null, null],
          when,
        ),
      );
    } else {
      const cachedRead = Math.floor(tokensIn * random() * 0.8);
      const cachedWrite = between(random, 0, 20_000);
      const draw = random();
      const source = draw < UNPRICED_SHARE ? 'unpriced' : draw < 0.45 ? 'models_dev_list' : 'provider_reported';
      // the agent reported no output tokens: never on a row the host priced from its tokens
      const out = source !== 'models_dev_list' && random() < 0.05 ? null : tokensOut;
      const listed = Math.round(
        ((tokensIn - cachedRead) * RATE_IN +
          cachedRead * RATE_CACHED_READ +
          cachedWrite * RATE_CACHED_WRITE +
          (out ?? 0) * RATE_OUT) /
          1_000_000,
      );
      // the agent's own figure: near the list price, never the same computation
      cost =
        source === 'unpriced' ? 0 : source === 'models_dev_list' ? listed : Math.round(listed * (0.9 + random() * 0.2));
      unpriced = source === 'unpriced';
      if (unpriced) summary.unpricedEvents += 1;
      if (unpriced && estimated === 1) summary.estimatedUnpricedEvents += 1;
      else if (source === 'models_dev_list') summary.listPricedSubcents += cost;
      else summary.measuredSubcents += cost;
      if (out === null) summary.nullTokensOut += 1;
      const rates =
        source === 'models_dev_list'
          ? [RATE_IN, RATE_CACHED_READ, RATE_CACHED_WRITE, RATE_OUT, PRICING_CATALOG_VERSION]
          : [null, null, null, null, null];
      await rows.add(
        [...common, cachedRead, cachedRead, cachedWrite, out, cost, estimated, `${id}-usage`, source].concat(
          rates,
          [COST_CONTRACT_VERSION],
          when,
        ),
      );
    }
    summary.events += 1;
    summary.subcents += cost;
    if (estimated) summary.estimatedSubcents += cost;
    return { cost, unpriced };
  };
  return {
    summary,
    /** the events of turn `turn` (started at `startedAt`, its last message at `lastAt`) with `subagents` top-level subagents */
    async add(session: number, turn: number, subagents: number, startedAt: Micros, lastAt: Micros) {
      const ledger = summary.turnLedger;
      ledger.topLevel.push(subagents);
      const model = pick(random, MODELS);
      if (startedAt < contractAt) {
        await event(session, null, subagents, model, lastAt);
        ledger.cost.push(null);
        ledger.unpriced.push(0);
        return;
      }
      const draw = random();
      const events = draw < 0.05 ? 0 : draw < 0.8 ? 1 : 2;
      let cost: number | null = null;
      let unpriced = 0;
      for (let k = 0; k < events; k++) {
        // a second report of the turn's usage arrives after it ended (R5-3: still the turn's cost)
        const at = k === 0 ? lastAt : lastAt + BigInt(between(random, 1, 600)) * 1_000_000n;
        const e = await event(session, generatedTurnId(prefix, turn), subagents, model, at);
        cost = (cost ?? 0) + e.cost;
        if (e.unpriced) unpriced = 1;
      }
      ledger.cost.push(cost);
      ledger.unpriced.push(unpriced);
    },
    flush: () => rows.flush(),
  };
}

function count(record: Record<string, number>, key: string): void {
  record[key] = (record[key] ?? 0) + 1;
}

function documentText(kind: MalformedKind): string | null {
  switch (kind) {
    case 'null':
      return null;
    case 'empty':
      return '';
    case 'json_null':
      return 'null';
    default:
      return '{bad';
  }
}

/** A subagent message's metadata as the host writes it (docs/table.md#host-tables-this-project-reads), optionally with one bad value. */
function subagentMetadata(random: () => number, inv: Invocation, status: Status): string {
  const task: Record<string, unknown> = {
    description: pick(random, DESCRIPTIONS),
    subagent_type: pick(random, TYPES),
    prompt: 'never stored',
  };
  if (status !== 'absent') task.status = status;
  if (status === 'async_launched') task.is_async = true;
  if (status === 'started') task.child_session_id = `ses_${Math.floor(random() * 2 ** 48).toString(16)}`;
  if (status === 'completed') {
    task.is_async = false;
    task.agent_id = Math.floor(random() * 2 ** 32).toString(16);
    task.total_tokens = random() < 0.02 ? LARGEST_TOTAL_TOKENS : between(random, 1_000, LARGEST_TOTAL_TOKENS - 1);
    task.duration_ms = between(random, 2_000, 600_000);
    task.tool_use_count = random() < 0.1 ? 0 : between(random, 1, 60);
    task.result_text = 'never stored';
    if (random() < 49 / 57) task.model = pick(random, MODELS);
  }
  if (inv.malformed === 'string_metric') task.total_tokens = String(between(random, 1_000, 99_999));
  if (inv.malformed === 'fraction_metric') task.duration_ms = 1234.5;
  if (inv.malformed === 'string_boolean') task.is_async = 'true';
  return JSON.stringify({
    tool_call_id: inv.toolCallId,
    parent_tool_call_id: inv.parentToolCallId,
    status: TOOL_STATUS[status],
    normalized: { kind: 'subagent_task', subagent_task: task },
  });
}
