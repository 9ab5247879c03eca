import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorCode } from '../errors/error-codes.ts';
import { redactText } from '../shell-kit/redact.ts';
import { INTERNAL_ERROR, toolErrorResult } from './run-tool.ts';

/**
 * Failures the SDK answers before a tool body runs (argument schema, the argument value bound, an unknown
 * tool) in the shape runTool gives every other failure: `{"error": {"code", "message"}}` with a stable code.
 * Why: the SDK's text ("MCP error -32602: Input validation error: ...") carries no code, so an agent that
 * reads ours could not tell a bad argument from an internal failure. Its formatter is private in the SDK's
 * types, so it is replaced on the instance (the SDK is pinned; test/mcp/mcp-tools.test.ts fails if it moves).
 */
export function codeSdkToolErrors(server: McpServer): void {
  const toolError = (message: string): CallToolResult => {
    const code = sdkErrorCode(message);
    if (code !== 'INTERNAL') return toolErrorResult({ code, message: redactText(message) });
    // As runTool: an internal failure's text stays in the (stderr) log.
    console.error(redactText(message));
    return toolErrorResult(INTERNAL_ERROR);
  };
  Object.defineProperty(server, 'createToolError', { value: toolError });
}

/** The stable code of an SDK tool-call failure, from its message (the SDK throws them all as McpError -32602). */
export function sdkErrorCode(message: string): ErrorCode {
  if (/more than the maximum of \d+ elements/.test(message)) return 'TOO_LARGE';
  if (/Tool \S+ (not found|disabled)/.test(message)) return 'NOT_FOUND';
  if (/Input validation error|Invalid arguments/.test(message)) return 'INVALID_INPUT';
  return 'INTERNAL';
}
