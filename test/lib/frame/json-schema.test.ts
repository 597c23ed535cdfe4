import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { frameJsonSchema } from '../../../lib/frame/json-schema.js';

const COMMITTED = new URL('../../../schema/frame.v1.schema.json', import.meta.url);

describe('published JSON Schema of the frame', () => {
  it('is the committed schema/frame.v1.schema.json (regenerate with `npm run schema` after changing lib/frame/schema.ts)', () => {
    const committed: unknown = JSON.parse(readFileSync(COMMITTED, 'utf8'));
    expect(
      committed,
      'schema/frame.v1.schema.json has drifted from lib/frame/schema.ts: run `npm run schema` and commit the result',
    ).toEqual(frameJsonSchema());
  });

  it('tells producers which fields are required and how metrics look', () => {
    const schema = frameJsonSchema() as {
      required: string[];
      properties: { subagent_task: { properties: Record<string, { type: string; minimum?: number }> } };
    };
    expect(schema.required.sort()).toEqual(['observed_at', 'subagent_task', 'version']);
    for (const metric of ['total_tokens', 'duration_ms', 'tool_use_count']) {
      expect(schema.properties.subagent_task.properties[metric]).toMatchObject({ type: 'integer', minimum: 0, maximum: 2_147_483_647 });
    }
  });
});
