import * as z from 'zod/mini';
import { frameSchema } from './schema.js';

/** The JSON Schema published for producers in other languages, generated from the zod schema. */
export function frameJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(frameSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
}
