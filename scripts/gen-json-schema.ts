import { writeFileSync } from 'node:fs';
import { commandJsonSchemas } from '../lib/cli/documents.js';
import { frameJsonSchema } from '../lib/frame/json-schema.js';
import { reportJsonSchema } from '../lib/report/json-schema.js';

export const JSON_SCHEMA_PATH = new URL('../schema/frame.v1.schema.json', import.meta.url);
export const REPORT_SCHEMA_PATH = new URL('../schema/report.v1.schema.json', import.meta.url);

for (const [path, schema] of [
  [JSON_SCHEMA_PATH, frameJsonSchema()],
  [REPORT_SCHEMA_PATH, reportJsonSchema()],
] as const) {
  writeFileSync(path, `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote ${path.pathname}`);
}
// issue 51: every command's --json document has its schema
for (const [name, schema] of Object.entries(commandJsonSchemas())) {
  const path = new URL(`../schema/${name}`, import.meta.url);
  writeFileSync(path, `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote ${path.pathname}`);
}
