#!/usr/bin/env node
// The `subagent-context` command (package.json "bin"). The sources are TypeScript; tsx's loader
// runs them directly, so there is no build step between `npm install` and using the CLI.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
