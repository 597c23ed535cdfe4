import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/* Issue 51, item 4: the producer's tarball carries the README its `files` names. */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

describe('issue 51: the producer package', () => {
  it('issue 51: npm pack ./packages/producer includes a README that names credentials, the FIFO queue and the Frame type', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', './packages/producer'], {
      cwd: ROOT,
    });
    const [{ files }] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    expect(files.map((f) => f.path)).toContain('README.md');
    const { readFileSync } = await import('node:fs');
    const readme = readFileSync(join(ROOT, 'packages/producer/README.md'), 'utf8');
    expect(readme).toMatch(/Credentials/);
    expect(readme).toMatch(/FifoQueue: true/);
    expect(readme).toMatch(/type Frame/);
  }, 60_000);
});
