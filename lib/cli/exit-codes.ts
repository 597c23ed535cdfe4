/**
 * What a script can rely on. 3 means the command ran but found something a person must look at
 * (an unhealthy status, frames that ended on the dead-letter queue), distinct from 1 (it could
 * not do its job) and 2 (it was called wrongly).
 */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  attention: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
