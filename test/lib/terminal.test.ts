import { describe, expect, it } from 'vitest';
import { isTerminalToolStatus, TERMINAL_TOOL_STATUSES } from '../../lib/terminal.js';

describe('terminal tool statuses (AC-11)', () => {
  it('are exactly the six of docs/merge.md#recording-one-frame', () => {
    expect([...TERMINAL_TOOL_STATUSES].sort()).toEqual([
      'cancelled',
      'complete',
      'completed',
      'error',
      'failed',
      'success',
    ]);
  });

  it.each(['complete', 'completed', 'success', 'error', 'failed', 'cancelled'])('%s settles', (status) => {
    expect(isTerminalToolStatus(status)).toBe(true);
  });

  it.each([
    'pending',
    'in_progress',
    'started',
    'async_launched',
    'running',
    'Completed',
    'COMPLETE',
    ' completed',
    'canceled',
    '',
  ])('%j does not settle (compared verbatim)', (status) => {
    expect(isTerminalToolStatus(status)).toBe(false);
  });

  it.each([null, undefined])('%s does not settle', (status) => {
    expect(isTerminalToolStatus(status)).toBe(false);
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(TERMINAL_TOOL_STATUSES)).toBe(true);
  });
});
