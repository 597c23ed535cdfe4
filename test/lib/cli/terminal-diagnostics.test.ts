import { describe, expect, it } from 'vitest';
import { runCliCaptured } from '../../support/cli-run.js';

/*
 * R4-2 (docs/report.md#terminal-safety): a diagnostic on stderr quotes what it was given (a flag
 * value, a path, a command name, a server's words). Quoted text never reaches the terminal raw:
 * ESC, BEL, CR and the bidi controls are shown as visible escapes; the message's own line breaks stay.
 */

const CSI = '\u001b[2J';
const OSC52 = '\u001b]52;c;aGk=\u0007';

const CASES: [string, string[], string][] = [
  ['a flag value', ['report', '--by', `x${CSI}`], '(got "x\\x1B[2J")'],
  ['a command name', [`nosuch${CSI}\r`], 'unknown command "nosuch\\x1B[2J\\x0D"'],
  [
    'a path in --database-url',
    ['report', '--database-url', `sqlite:/nonexistent/${OSC52}/db.sqlite`],
    '/nonexistent/\\x1B]52;c;aGk=\\x07/db.sqlite',
  ],
  ['a right-to-left override', ['report', '--by', 'abc\u202edef'], '(got "abc\\u202Edef")'],
];

describe('R4-2: diagnostics on stderr are terminal-safe', () => {
  it.each(CASES)('R4-2: %s is quoted with its controls escaped', async (_what, argv, shown) => {
    const run = await runCliCaptured(argv);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(shown);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    expect(run.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });
});
