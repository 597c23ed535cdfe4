import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The user the read-only tests run the CLI as: the kernel refuses it what root is never refused. */
export const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'] as const;

/** True when user nobody can read `path` (and pass every folder above it). */
function nobodyReads(path: string): boolean {
  try {
    execFileSync(
      'setpriv',
      [...NOBODY, process.execPath, '-e', `require('node:fs').accessSync(${JSON.stringify(path)}, 4)`],
      {
        stdio: 'ignore',
      },
    );
    return true;
  } catch {
    return false;
  }
}

/** Where user nobody can run this checkout's CLI from, or why it cannot be arranged (the tests then skip, saying so). */
export type NobodyCheckout = { root: string; skip?: undefined } | { root?: undefined; skip: string };

/**
 * Issue 51, item 11: the tests run the CLI as nobody, who cannot reach a checkout under a private
 * folder (root's home is mode 700 on Debian, a `mktemp -d` folder too). Then the parts the CLI runs
 * from (bin, lib, local, examples, package.json, tsconfig.json, and node_modules) are copied into a
 * folder nobody may read; without root or setpriv nothing can be arranged, and the reason is given.
 */
export function nobodyCheckout(root: string): NobodyCheckout {
  if (process.getuid?.() !== 0) return { skip: 'not run as root: a user other than this one cannot be started' };
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
  } catch {
    return { skip: 'setpriv (util-linux) is not installed: the CLI cannot be run as user nobody' };
  }
  const modules = realpathSync(join(root, 'node_modules'));
  if (nobodyReads(join(root, 'bin/subagent-context.mjs')) && nobodyReads(join(modules, 'tsx/package.json')))
    return { root };
  const copy = mkdtempSync(join(tmpdir(), 'subagent-context-nobody-'));
  chmodSync(copy, 0o755);
  for (const part of ['bin', 'lib', 'local', 'examples', 'package.json', 'tsconfig.json'])
    cpSync(join(root, part), join(copy, part), { recursive: true });
  if (nobodyReads(join(modules, 'tsx/package.json'))) symlinkSync(modules, join(copy, 'node_modules'));
  else cpSync(modules, join(copy, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  execFileSync('chmod', ['-R', 'a+rX', copy]);
  return { root: copy };
}
