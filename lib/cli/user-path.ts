import { isAbsolute, resolve } from 'node:path';

/**
 * This package's scripts that take paths from the person: `npm run cli` (the CLI) and `npm start`
 * (the demo, bin/local-stack.ts: --sqlite, --page). npm runs both from the package root.
 */
const TYPED_SCRIPTS: ReadonlySet<string> = new Set(['cli', 'start']);

/**
 * Issue 58 #16: where the person typed the command, when that is not the process's folder. `npm
 * run cli -- …` and `npm start -- …` run from the package root and say where they were typed in
 * INIT_CWD; only this package's own scripts count (another package's script that runs
 * subagent-context means its paths from its own root, as npm runs it). Undefined: the process's
 * folder is it.
 */
export function typedFrom(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): string | undefined {
  const from = env.INIT_CWD;
  if (from === undefined || from === '' || !TYPED_SCRIPTS.has(env.npm_lifecycle_event ?? '')) return undefined;
  if (env.npm_package_name !== 'subagent-context') return undefined;
  return resolve(from) === resolve(cwd) ? undefined : resolve(from);
}

/**
 * A path the person gave (a flag's value, an argument), as the CLI opens it: a relative one from
 * where they typed the command (`typedFrom`), so `npm run cli` from docs/ reads docs/'s files.
 * The one rule for every path the CLI takes (lib/cli/main.ts PATH_FLAGS, sqlite: URLs) and
 * `npm start` takes (bin/local-stack.ts).
 */
export function userPath(path: string, env: NodeJS.ProcessEnv): string {
  if (isAbsolute(path)) return path;
  const from = typedFrom(env);
  return from === undefined ? path : resolve(from, path);
}

/** The folder a relative path is resolved from: where the command was typed. */
export function relativeBase(env: NodeJS.ProcessEnv): string {
  return typedFrom(env) ?? process.cwd();
}
