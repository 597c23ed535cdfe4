import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { NOBODY, nobodyCheckout } from '../../support/as-nobody.js';

/*
 * Issue 51, item 11: a checkout under a private folder (mode 700, as root's home on Debian or a
 * `mktemp -d` folder) still runs the read-only tests: the CLI is run as nobody from a copy that
 * user can read.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('issue 51: the CLI as nobody from a checkout in a private folder', () => {
  it.skipIf(process.getuid?.() !== 0)(
    'issue 51: a checkout under a mode-700 folder is copied where nobody can run it, and runs there',
    async () => {
      const home = mkdtempSync(join(tmpdir(), 'private-home-')); // mode 700, as mkdtemp makes it
      expect(statSync(home).mode & 0o777).toBe(0o700);
      const checkout = join(home, 'subagent-context');
      for (const part of ['bin', 'lib', 'local', 'examples', 'package.json', 'tsconfig.json'])
        cpSync(join(ROOT, part), join(checkout, part), { recursive: true });
      symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(checkout, 'node_modules'));
      const where = nobodyCheckout(checkout);
      try {
        expect(where.skip).toBeUndefined();
        expect(where.root).not.toBe(checkout);
        const { stdout } = await promisify(execFile)(
          'setpriv',
          [...NOBODY, process.execPath, join(where.root!, 'bin/subagent-context.mjs'), '--version'],
          { cwd: where.root, env: { PATH: process.env.PATH, HOME: '/tmp' } },
        );
        expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
      } finally {
        rmSync(home, { recursive: true, force: true });
        if (where.root !== undefined && where.root !== checkout) rmSync(where.root, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
