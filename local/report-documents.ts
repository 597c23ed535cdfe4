import {
  DURATION_BUCKET_UPPER_MS,
  FAN_OUT_COST_BUCKETS,
  type FanOutCost,
  type Figures,
  type Group,
  type GroupBy,
  NOTHING_UNREADABLE,
  type ReportDocument,
  reportDocument,
  type TreeNode,
  type TurnTree,
} from '../lib/report/document.js';

/*
 * Report documents made without a database, valid under the committed schema (lib/report/document.ts):
 * small ones for the page's tests, a large one (many days, tasks and turns) for its size bound and
 * `npm run bench`. Deterministic: the same options give the same document. The figures are
 * plausible, not derived from rows; the page only renders them, so that is all it needs.
 */

export interface DocumentOptions {
  /** subagents in the totals (spread over the groups) */
  subagents?: number;
  days?: number;
  tasks?: number;
  types?: number;
  models?: number;
  /** fan-out trees, newest first */
  trees?: number;
  /** put hostile text (script, </style>, quotes, &, an entity, U+2028) in every string that came from the database */
  hostile?: boolean;
  shortfall?: boolean;
  /**
   * R4-2, R4-4: also the worst a store can hold: a turn of 30,000 subagents and a parent chain
   * 100,000 deep first among the trees, a 1 MiB task title, and host text with controls (ESC, BEL,
   * C1), bidi overrides and astral characters where a cut falls
   */
  huge?: boolean;
}

/** Host text that attacks the terminal and the page's direction: ESC, BEL, a C1 control, U+202E. */
export const CONTROLS = '\u001b[2J\u0007\u009b31m\u202Egnp.exe\u202C';

/** A node of the `huge` trees: the fields the page draws, ids `prefix` + i. */
function bareNode(session: string, id: string, parent: string | null, at: string, i: number): TreeNode {
  return {
    task_session_id: session,
    tool_call_id: id,
    agent_execution_id: 'e1',
    parent_tool_call_id: parent,
    subagent_type: i % 2 === 0 ? `${CONTROLS}type` : 'general-purpose',
    description: i === 0 ? `${'😀'.repeat(400)}${CONTROLS}` : null,
    model: 'claude-sonnet-4',
    agent_status: 'completed',
    tool_status: 'complete',
    is_async: false,
    source: 'live',
    total_tokens: 1_000 + i,
    tool_use_count: i % 7,
    duration_ms: 60_000 + i,
    observed_at: at,
    settled_at: null,
    children: [],
  };
}

/** One turn `n` wide (no parents) or a chain `n` deep (each the child of the one before), built without recursion. */
export function hugeTurn(shape: 'wide' | 'deep', n: number, at: string): TurnTree {
  const session = `session-${shape}`;
  const top: TreeNode[] = [];
  let parent: TreeNode | undefined;
  for (let i = 0; i < n; i++) {
    const node = bareNode(session, `c${i}`, shape === 'deep' && parent ? parent.tool_call_id : null, at, i);
    if (shape === 'wide' || parent === undefined) top.push(node);
    else parent.children.push(node);
    parent = node;
  }
  return {
    task_id: 'task-0',
    task_session_id: session,
    turn_id: `turn-${shape}`,
    started_at: at,
    completed_at: null,
    subagents: top,
  };
}

export const HOSTILE = `<script>alert("x")</script></style><img src=x onerror=alert(1)>"' R&D &amp;\u2028end`;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

const DAY_MS = 86_400_000;
const START = Date.parse('2026-10-01T00:00:00Z');

/** R5-3: a plausible fan_out_cost section: turns fall off with the fan-out, cost rises with it. */
function fanOutCost(subagents: number, r: () => number): FanOutCost {
  const turns = Math.max(7, Math.floor(subagents / 2));
  return {
    buckets: FAN_OUT_COST_BUCKETS.map((label, i) => {
      const n = Math.floor(turns / 2 ** (i + 1));
      const unpriced = Math.floor(n / 10);
      const none = Math.floor(n / 20);
      const costed = n - unpriced - none;
      const median = Math.floor(2_000 * (i + 1) * (0.8 + r() * 0.4));
      return {
        fan_out: label,
        turns: n,
        costed_turns: costed,
        unpriced_turns: unpriced,
        turns_without_cost: none,
        unreadable_cost_turns: 0,
        cost_subcents: costed === 0 ? null : costed * median,
        mean_subcents: costed === 0 ? null : median,
        median_subcents: costed === 0 ? null : median,
        p95_subcents: costed === 0 ? null : median * 3,
        // R6-5: a share of the turns with every subagent's spend known, subagents spending a
        // growing part of the turn as it fans out (none for a turn without them)
        spend_known_turns: Math.floor(n / 3),
        subagent_cost_subcents: Math.floor(n / 3) === 0 ? null : Math.floor(n / 3) * Math.floor(median * i * 0.12),
        subagent_share:
          Math.floor(n / 3) === 0 || costed === 0 ? null : Math.round(Math.min(0.9, i * 0.12) * 10_000) / 10_000,
        uncosted_turns_priced_cost_subcents: unpriced === 0 ? null : unpriced * median,
      };
    }),
    unattributed_events: Math.floor(turns / 25),
    unattributed_cost_subcents: Math.floor(turns / 25) * 1_700,
    unattributed_unpriced_events: Math.floor(turns / 250),
    unreadable_started_at: null,
  };
}

export function figures(subagents: number, r: () => number, scoped: boolean): Figures {
  const reportedTokens = Math.floor(subagents * 0.23);
  const nested = Math.floor(subagents * 0.01);
  const live = Math.floor(subagents * (0.4 + r() * 0.5));
  const sessions = scoped ? Math.max(1, Math.floor(subagents / 7)) : null;
  const contexts = sessions === null ? null : sessions + subagents;
  const cost = scoped ? Math.floor(subagents * 1_300 * (0.5 + r())) : null;
  const durationN = reportedTokens;
  return {
    subagents,
    top_level: subagents - nested,
    nested,
    async: Math.floor(subagents * 0.75),
    live,
    backfill: subagents - live,
    settled: Math.floor(subagents * 0.9),
    failed: Math.floor(subagents * 0.02),
    orphan_rows: 0,
    tokens: {
      sum: reportedTokens === 0 ? null : reportedTokens * 41_237,
      reported: reportedTokens,
      p50: reportedTokens === 0 ? null : 38_411,
      p95: reportedTokens === 0 ? null : 171_902,
      max: reportedTokens === 0 ? null : 203_377,
    },
    tool_uses: { sum: reportedTokens === 0 ? null : reportedTokens * 17, reported: reportedTokens },
    duration_ms: {
      reported: durationN,
      p50: durationN === 0 ? null : 48_211,
      p95: durationN === 0 ? null : 301_776,
      max: durationN === 0 ? null : 1_204_113,
    },
    models: {
      counts: reportedTokens === 0 ? [] : [{ model: 'claude-sonnet-4', subagents: reportedTokens }],
      unreported: subagents - reportedTokens,
    },
    fan_out:
      subagents === 0
        ? []
        : [
            { top_level: 1, turns: Math.ceil(subagents * 0.26) },
            { top_level: 2, turns: Math.floor(subagents * 0.05) },
            { top_level: 3, turns: Math.floor(subagents * 0.17) },
          ].filter((b) => b.turns > 0),
    executions: Math.max(1, Math.floor(subagents / 9)),
    unknown_execution: Math.floor(subagents * 0.01),
    turns: Math.ceil(subagents / 2),
    sessions,
    contexts,
    cost_subcents: cost,
    estimated_cost_subcents: cost === null ? null : Math.floor(cost / 10),
    cost_per_context_subcents:
      cost === null || contexts === null || contexts === 0 ? null : Math.round(cost / contexts),
    unpriced_events: cost === null ? null : Math.floor(subagents / 40),
    cost_lower_bound: cost !== null && Math.floor(subagents / 40) > 0,
    estimated_unpriced_events: cost === null ? null : Math.floor(subagents / 200),
    estimated_cost_lower_bound: cost !== null && Math.floor(subagents / 200) > 0,
    measured_cost_subcents: cost === null ? null : Math.floor(cost * 0.6),
    list_priced_cost_subcents: cost === null ? null : Math.floor(cost * 0.3),
    first_observed_at: subagents === 0 ? null : iso(START),
    last_observed_at: subagents === 0 ? null : iso(START + 29 * DAY_MS),
    spend: spend(subagents),
  };
}

/** R6-5: usage known for about 60% of the subagents, nine in ten of them final, one in twenty unpriced. */
function spend(subagents: number): Figures['spend'] {
  const withUsage = Math.floor(subagents * 0.6);
  const unpriced = Math.floor(withUsage / 20);
  const priced = withUsage - unpriced;
  const complete = withUsage - Math.floor(withUsage / 10);
  const tokens = (per: number) => (withUsage === 0 ? null : withUsage * per);
  const cost = priced === 0 ? null : priced * 1_840;
  return {
    subagents_with_usage: withUsage,
    complete,
    tokens_in: tokens(21_400),
    tokens_out: tokens(3_120),
    tokens_cached_read: tokens(188_000),
    tokens_cached_write: tokens(14_900),
    tokens_reasoning: tokens(610),
    cost_subcents: cost,
    measured_cost_subcents: cost === null ? null : Math.floor(cost * 0.7),
    list_priced_cost_subcents: cost === null ? null : cost - Math.floor(cost * 0.7),
    unpriced,
    cost_lower_bound: unpriced > 0 || complete < withUsage,
    cost_p50_subcents: priced === 0 ? null : 1_310,
    cost_p95_subcents: priced === 0 ? null : 6_020,
    cost_max_subcents: priced === 0 ? null : 11_780,
  };
}

function groups(
  by: GroupBy,
  keys: readonly (string | null)[],
  total: number,
  r: () => number,
  hostile: boolean,
): Group[] {
  const scoped = by === 'task' || by === 'session' || by === 'turn';
  return keys.map((key, i) => {
    const n = Math.max(1, Math.floor((total / keys.length) * (0.5 + r())));
    return {
      ...figures(n, r, scoped),
      by,
      key,
      title:
        by === 'task'
          ? hostile
            ? `${HOSTILE} task ${i}`
            : `Task ${i}: make the thing ${i % 3 === 0 ? 'faster' : 'work'}`
          : null,
      lower_bound: by === 'task' && i % 5 === 4,
      started_at: scoped ? iso(START + i * 3_600_000) : null,
    };
  });
}

function node(r: () => number, i: number, session: string, at: number, hostile: boolean, depth: number): TreeNode {
  const completed = r() < 0.3;
  const id = `toolu_${(i * 7919).toString(36).padStart(6, '0')}`;
  return {
    task_session_id: session,
    tool_call_id: id,
    agent_execution_id: `exec-${session}`,
    parent_tool_call_id: null,
    subagent_type: hostile ? HOSTILE : ['Explore', 'general-purpose', 'Plan'][i % 3]!,
    description: hostile ? HOSTILE : `Look into part ${i} of the change`,
    model: completed ? 'claude-sonnet-4' : null,
    agent_status: completed ? 'completed' : 'async_launched',
    tool_status: completed ? 'complete' : null,
    is_async: !completed,
    source: i % 4 === 0 ? 'backfill' : 'live',
    total_tokens: completed ? Math.floor(10_000 + r() * 200_000) : null,
    tool_use_count: completed ? Math.floor(r() * 40) : null,
    duration_ms: completed ? Math.floor(5_000 + r() * 500_000) : null,
    observed_at: iso(at),
    settled_at: completed ? iso(at + 60_000) : null,
    children:
      depth === 0 && i % 5 === 0
        ? [{ ...node(r, i + 1_000, session, at + 1_000, hostile, 1), parent_tool_call_id: id }]
        : [],
  };
}

function turnTrees(count: number, r: () => number, hostile: boolean): TurnTree[] {
  const out: TurnTree[] = [];
  for (let t = 0; t < count; t++) {
    const at = START + 29 * DAY_MS - t * 3_600_000;
    const session = `session-${t % 40}`;
    const width = 1 + (t % 3);
    out.push({
      task_id: `task-${t % 25}`,
      task_session_id: session,
      turn_id: `turn-${t}`,
      started_at: iso(at),
      completed_at: iso(at + 600_000),
      subagents: Array.from({ length: width }, (_, k) => node(r, t * 10 + k, session, at + k * 1000, hostile, 0)),
    });
  }
  return out;
}

/** A report document for the page's tests and bench (see DocumentOptions). */
export function makeReportDocument(options: DocumentOptions = {}): ReportDocument {
  const r = rng(42);
  const hostile = options.hostile ?? false;
  const subagents = options.subagents ?? 253;
  const dayCount = options.days ?? 14;
  const taskCount = options.tasks ?? 8;
  const typeCount = options.types ?? 4;
  const modelCount = options.models ?? 3;
  const days = Array.from({ length: dayCount }, (_, i) => new Date(START + i * DAY_MS).toISOString().slice(0, 10));
  const types: (string | null)[] = [
    ...Array.from({ length: typeCount }, (_, i) => (hostile ? `${HOSTILE}${i}` : `type-${i}`)),
    null,
  ];
  const models = Array.from({ length: modelCount }, (_, i) => (hostile ? `${HOSTILE}m${i}` : `model-${i}`));
  const tasks = Array.from({ length: taskCount }, (_, i) => `task-${i}`);
  const totals = figures(subagents, r, true);
  totals.models = {
    counts: models.map((model, i) => ({ model, subagents: Math.max(1, Math.floor(totals.tokens.reported / (i + 2))) })),
    unreported: totals.models.unreported,
  };
  const dayGroups = groups('day', days, subagents, r, hostile);
  // A day nobody reported tokens on: the chart's gap (R3-6), not a 0.
  if (dayGroups.length > 2) dayGroups[2]!.tokens = { sum: null, reported: 0, p50: null, p95: null, max: null };
  const durationBuckets = [0, ...DURATION_BUCKET_UPPER_MS].map((from, i) => ({
    from_ms: from,
    to_ms: DURATION_BUCKET_UPPER_MS[i] ?? null,
    subagents: Math.floor(
      totals.duration_ms.reported * [0.02, 0.08, 0.12, 0.15, 0.2, 0.18, 0.12, 0.07, 0.04, 0.02][i]!,
    ),
  }));
  const doc: ReportDocument = {
    version: 1,
    generated_at: iso(START + 30 * DAY_MS),
    filters: { since: null, until: null, task: null, session: null, by: 'task', sort: 'key', limit: null },
    completeness: {
      capture_since: iso(START + 3 * DAY_MS),
      backfill_through: iso(START + 3 * DAY_MS - 1),
      verified_through: iso(START + 29 * DAY_MS + 3_600_000),
      shortfall: options.shortfall ? { open: true, count: 3, checked: true } : { open: false, count: 0, checked: true },
      missing: options.shortfall
        ? [1, 2, 3].map((i) => ({
            task_session_id: hostile ? HOSTILE : `session-${i}`,
            tool_call_id: hostile ? `${HOSTILE}${i}` : `toolu_missing_${i}`,
          }))
        : [],
      unreadable: { ...NOTHING_UNREADABLE },
      lower_bound_sessions: 2,
      unpriced_events: totals.unpriced_events,
      notes: [hostile ? HOSTILE : 'Sessions with activity before capture_since have a fan-out that is a lower bound.'],
    },
    totals,
    groups: groups('task', tasks, subagents, r, hostile),
    trees: turnTrees(options.trees ?? 6, r, hostile),
    series: {
      day: dayGroups,
      type: groups('type', types, subagents, r, hostile),
      model: groups('model', models, subagents, r, hostile),
    },
    distributions: {
      duration_ms: {
        reported: durationBuckets.reduce((a, b) => a + b.subagents, 0),
        buckets: durationBuckets,
      },
    },
    fan_out_cost: fanOutCost(subagents, r),
  };
  if (!options.huge) return reportDocument.parse(doc);
  // The schema's recursive node type cannot check a 100,000-deep chain (zod recurses): the huge
  // trees are added after the rest of the document is checked.
  const checked = reportDocument.parse(doc);
  checked.groups[0]!.title = `${CONTROLS}${'t'.repeat(1024 * 1024)}`;
  checked.completeness.notes.push(`a note with ${CONTROLS}`);
  // chart labels: controls and bidi in a type, an astral character where a model's label is cut
  const typeGroups = checked.series!.type!;
  typeGroups[0]!.key = `${CONTROLS}type`;
  typeGroups[0]!.subagents = Math.max(...typeGroups.map((g) => g.subagents)) + 1; // the largest: drawn
  checked.totals.models.counts[0]!.model = `${'m'.repeat(12)}😀😀${'m'.repeat(12)}😀😀tail`;
  const at = checked.trees[0]?.started_at ?? iso(START);
  checked.trees.unshift(hugeTurn('wide', 30_000, at), hugeTurn('deep', 100_000, at));
  return checked;
}
