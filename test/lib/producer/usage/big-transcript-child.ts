import { readClaudeTranscript } from '../../../../lib/producer/usage/claude-transcript.js';
import { fileLines } from '../../../../lib/producer/usage/file-lines.js';

/*
 * Run as its own process with a small heap (records.test.ts): reads the transcript given as argv[2]
 * and prints the reading with the largest heap it saw, sampled every thousand lines.
 */
const path = process.argv[2]!;
let peak = 0;
let n = 0;
async function* sampled() {
  for await (const line of fileLines(path)) {
    if (++n % 1000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    yield line;
  }
}
const reading = await readClaudeTranscript(sampled());
console.log(JSON.stringify({ reading, peakHeapBytes: peak, lines: n }));
