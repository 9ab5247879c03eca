#!/usr/bin/env node
// Loads the TypeScript CLI through tsx's loader in-process, so `npx graphmemix` works right after
// `npm ci` with no build step, and stdio (MCP) and signals reach the CLI directly.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
