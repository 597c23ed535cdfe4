import * as z from 'zod/mini';
import { reportDocument } from './document.js';

/** The JSON Schema of `report --json` (schema/report.v1.schema.json), generated from lib/report/document.ts. */
export function reportJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(reportDocument, { io: 'output', target: 'draft-2020-12' }) as Record<string, unknown>;
}
