import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

const ajv = new Ajv2020({ strict: false, allErrors: true });

/** The errors of `document` against the committed schema/<name> (issue 51), [] when it is valid. */
export function schemaErrors(name: string, document: unknown): string[] {
  const schema = JSON.parse(readFileSync(new URL(`../../schema/${name}`, import.meta.url), 'utf8'));
  const validate = ajv.compile(schema);
  return validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
