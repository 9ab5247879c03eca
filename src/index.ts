// Public API of graphmemix. Shells (CLI, HTTP, MCP, viewer) import only from here.
export * from './core/index.ts';
export * from './errors/index.ts';
export * from './types/index.ts';
