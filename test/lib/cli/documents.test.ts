import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commandJsonSchemas } from '../../../lib/cli/documents.js';

/*
 * Issue 51, item 6: every command's --json document has its JSON Schema in schema/, generated
 * from lib/cli/documents.ts (npm run schema) as report's is, and keys follow one rule (camelCase
 * everywhere but report).
 */

describe('issue 51: the --json documents of ingest and export', () => {
  it.each(Object.entries(commandJsonSchemas()))(
    'issue 51: the committed schema/%s is the one lib/cli/documents.ts generates (npm run schema)',
    (name, schema) => {
      const committed = JSON.parse(readFileSync(new URL(`../../../schema/${name}`, import.meta.url), 'utf8'));
      expect(committed).toEqual(schema);
    },
  );

  it.each(Object.entries(commandJsonSchemas()))('issue 51: every key %s names is camelCase', (_, schema) => {
    const keys: string[] = [];
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      const properties = (node as { properties?: Record<string, unknown> }).properties;
      if (properties) keys.push(...Object.keys(properties));
      for (const child of Object.values(node)) walk(child);
    };
    walk(schema);
    expect(keys.length).toBeGreaterThan(5);
    expect(keys.filter((k) => !/^[a-z][a-zA-Z0-9]*$/.test(k))).toEqual([]);
  });
});
