import { writeFileSync } from 'node:fs';
import { frameJsonSchema } from '../lib/frame/json-schema.js';

export const JSON_SCHEMA_PATH = new URL('../schema/frame.v1.schema.json', import.meta.url);

writeFileSync(JSON_SCHEMA_PATH, `${JSON.stringify(frameJsonSchema(), null, 2)}\n`);
console.log(`wrote ${JSON_SCHEMA_PATH.pathname}`);
