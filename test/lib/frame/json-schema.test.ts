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
      expect(schema.properties.subagent_task.properties[metric]).toMatchObject({
        type: ['integer', 'null'],
        minimum: 0,
        maximum: 2_147_483_647,
      });
    }
  });

  it('R2-1, R2-2: identity fields are at most 512 characters, and every optional field may be null', () => {
    const schema = frameJsonSchema() as {
      properties: Record<
        string,
        {
          anyOf?: { type: string; maxLength?: number }[];
          type?: unknown;
          properties?: Record<string, { type: unknown }>;
        }
      >;
    };
    for (const field of [
      'task_session_id',
      'task_id',
      'tool_call_id',
      'execution_id',
      'turn_id',
      'parent_tool_call_id',
    ]) {
      expect(schema.properties[field]?.anyOf).toEqual([
        expect.objectContaining({ type: 'string', maxLength: 512 }),
        { type: 'null' },
      ]);
    }
    expect(schema.properties.tool_status?.anyOf).toEqual([
      expect.objectContaining({ type: 'string' }),
      { type: 'null' },
    ]);
    for (const [field, property] of Object.entries(schema.properties.subagent_task!.properties!)) {
      expect(property.type, field).toContain('null');
    }
  });
});
