// The MCP server: tools over stdio and streamable HTTP.
export * from './create-mcp-server.ts';
export * from './serve-mcp.ts';
