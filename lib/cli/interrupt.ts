import { SubagentContextError } from '../errors.js';

/** The exit code of a command ended by SIGINT (128 + 2), as a shell reports it. */
export const EXIT_INTERRUPTED = 130;

/**
 * The one Ctrl-C handler of every long command (issue 51). The first SIGINT only asks: a command
 * that writes finishes the batch or transaction it is in, then stops at its next boundary (it
 * checks `signal`), and says where it stands and what to run next. A second SIGINT stops at once.
 */
export interface Interrupt {
  /** aborted at the first SIGINT */
  readonly signal: AbortSignal;
  /** called at the second SIGINT, before the process exits (a demo store marks itself partial) */
  onForce(fn: () => void): void;
}

export interface InterruptTarget {
  on(event: 'SIGINT', listener: () => void): unknown;
  off(event: 'SIGINT', listener: () => void): unknown;
}

/**
 * Installs the handler on `target` (the process); `forced`: what a second SIGINT does after the
 * `onForce` callbacks (the process exits 130). `dispose` removes it.
 */
export function installInterrupt(
  target: InterruptTarget,
  report: (text: string) => void,
  forced: () => void,
  /** `true`: the first SIGINT only aborts `signal` (its listener stops the program and says why) */
  quiet = false,
): Interrupt & { dispose(): void } {
  const controller = new AbortController();
  const force: Array<() => void> = [];
  const listener = () => {
    if (!controller.signal.aborted) {
      if (!quiet) report('interrupted: finishing the batch or transaction in progress (Ctrl-C again stops at once)\n');
      controller.abort();
      return;
    }
    report('interrupted again: stopping now\n');
    for (const fn of force) fn();
    forced();
  };
  target.on('SIGINT', listener);
  return {
    signal: controller.signal,
    onForce: (fn) => force.push(fn),
    dispose: () => target.off('SIGINT', listener),
  };
}

/** A command that stopped at a boundary after SIGINT: where it stands, and what to run next (exit 130). */
export class Interrupted extends SubagentContextError {
  override readonly name = 'Interrupted';
  constructor(
    /** what was done and kept, in words */
    readonly where: string,
    /** the command to run next */
    readonly next: string,
    /** the counters so far, for --json */
    readonly progress?: unknown,
  ) {
    super(`interrupted: ${where}; ${next}`);
  }
}

/** An interrupt that never comes (tests, the function handlers). */
export const NO_INTERRUPT: Interrupt = { signal: new AbortController().signal, onForce: () => undefined };
