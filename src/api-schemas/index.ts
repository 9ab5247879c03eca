// Shared boundary schemas: one per route, used by the HTTP API, the MCP tools and the CLI.
export * from './common-schemas.ts';
export * from './parse-input.ts';
export * from './route-schemas.ts';
export * from './to-pipeline-input.ts';
