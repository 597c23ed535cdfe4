import type { ProgressStream } from './progress.js';

/** Where a command writes: results to stdout (tables or --json), progress and errors to stderr. */
export interface CliIo {
  /** `isTTY`: a terminal (colour may be used; lib/report/render/table.ts); `columns`: its width (tables fit it) */
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr: ProgressStream;
  env: NodeJS.ProcessEnv;
}

/** A command's outcome: its exit code and the machine-readable result --json prints. */
export interface CommandResult<T> {
  exitCode: number;
  result: T;
  /** the human rendering (tables) */
  text: string;
  /**
   * the result is the host's data (the report, R4-1): printed exactly, escaped only for its medium
   * and never redacted; without it the result is a diagnostic and passes the redaction (R2-6)
   */
  data?: boolean;
  /** what a person should know beside the result (a value used instead of the one asked for): stderr */
  notes?: readonly string[];
}
