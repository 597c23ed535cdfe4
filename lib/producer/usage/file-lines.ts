import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/*
 * A file's lines, one at a time (node:readline), for the readers: a 100 MB transcript is read in
 * memory bounded by its longest line, never by its size. A line longer than `maxLineChars` is not
 * parsed: it comes out as OVERLONG_LINE, which no reader can parse, so it is counted as unreadable.
 */

/** What stands for a line too long to keep: not JSON, so every reader counts it as unreadable. */
export const OVERLONG_LINE = '<a line longer than the limit, not read>';

/** 64 Mi characters: more than any record an agent writes (a tool result of several MB fits). */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;

/**
 * The lines of the file at `path` (UTF-8; `\n` or `\r\n`). Fails as the file system does (a missing
 * file: ENOENT) when the file cannot be opened; its content never makes it fail.
 */
export async function* fileLines(path: string, options: { maxLineChars?: number } = {}): AsyncGenerator<string> {
  const max = options.maxLineChars ?? MAX_LINE_CHARS;
  const stream = createReadStream(path, { encoding: 'utf8' });
  // open first, so a missing file fails here with the file system's error, before any line
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) yield line.length > max ? OVERLONG_LINE : line;
  } finally {
    lines.close();
    stream.destroy();
  }
}
