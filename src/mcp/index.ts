/// <reference types="node" preserve="true" />
// The declarations use Node globals (AbortSignal, fetch, URL, NodeJS.ProcessEnv); @types/node is a dependency
// so a consumer type-checks with no @types of its own.
// The MCP server: tools over stdio and streamable HTTP.
export * from './create-mcp-server.ts';
export * from './serve-mcp.ts';
