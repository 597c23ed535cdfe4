#!/usr/bin/env node
// The `subagent-context` command (package.json "bin"). In a checkout, where the TypeScript sources
// sit beside this file, tsx's loader runs them directly: an edit needs no build step, and no stale
// dist/ can answer. The installed package (npm pack ships dist/, not the sources) runs the built
// JavaScript, so it needs no dev dependency at run time.
import { existsSync } from 'node:fs';

if (existsSync(new URL('./cli.ts', import.meta.url))) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./cli.ts');
} else {
  await import('../dist/bin/cli.js');
}
