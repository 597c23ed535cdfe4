import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// Issue 25: a stage without its required parameters fails naming each of them and how to pass
// it, before anything is packaged (scripts/deploy-params.cjs, serverless.yml custom.requiredParams).
const run = promisify(execFile);
const outDir = mkdtempSync(join(tmpdir(), 'subagent-context-params-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('deploy-time parameters', () => {
  it('osls package --stage prod without producerRoleArn names producerRoleArn and the --param to pass', async () => {
    const failed = await run(
      process.execPath,
      ['node_modules/osls/bin/serverless.js', 'package', '--stage', 'prod', '--package', outDir],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          SLS_TELEMETRY_DISABLED: '1',
          SLS_NOTIFICATIONS_MODE: 'off',
        },
      },
    ).catch((err: { code: number; stdout: string; stderr: string }) => err);
    expect(failed).toMatchObject({ code: 1 });
    const output = `${(failed as { stdout: string }).stdout}${(failed as { stderr: string }).stderr}`;
    expect(output).toMatch(
      /missing required deployment parameter for stage "prod": producerRoleArn \(.*--param="producerRoleArn=arn:aws:iam::<account>:role\/<host-role>"\)/,
    );
    expect(output).not.toMatch(/params\.default\.redriveRoleArn/);
  }, 120_000);

  it('R5-6 / issue 57 #12: a publishPrefix with a slash at an end is refused at package time, naming it, before a grant that never matches is deployed', async () => {
    const failed = await run(
      process.execPath,
      [
        'node_modules/osls/bin/serverless.js',
        'package',
        '--stage',
        'ci',
        '--param=publishPrefix=/reports/',
        '--package',
        outDir,
      ],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          SLS_TELEMETRY_DISABLED: '1',
          SLS_NOTIFICATIONS_MODE: 'off',
        },
      },
    ).catch((err: { code: number; stdout: string; stderr: string }) => err);
    expect(failed).toMatchObject({ code: 1 });
    const output = `${(failed as { stdout: string }).stdout}${(failed as { stderr: string }).stderr}`;
    expect(output).toContain(
      'publishPrefix "/reports/" for stage "ci" cannot be used: it starts or ends with a slash.',
    );
  }, 120_000);
});
