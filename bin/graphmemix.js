#!/usr/bin/env node
// The installed package ships compiled JavaScript (dist/) and no sources: run it directly. In a source
// checkout (src/ present) run the TypeScript through tsx's loader in-process instead, so `npx graphmemix`
// works right after `npm ci` with no build step (and never runs a stale dist/), and stdio (MCP) and signals
// reach the CLI directly.
import { existsSync } from 'node:fs';

if (existsSync(new URL('../src/cli/main.ts', import.meta.url))) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
} else {
  await import('../dist/cli/main.js');
}
