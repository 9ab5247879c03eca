import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isGraphmemixError } from '../errors/graphmemix-error.ts';
import { redact } from '../shell-kit/redact.ts';
import type { McpImage } from './evidence-images.ts';

/** Replies that also carry image content blocks (the evidence's images; see evidence-images.ts). */
export const toolImages = new WeakMap<object, McpImage[]>();

/**
 * Runs a tool body: its value as JSON text plus structured content (and the image blocks registered for it in
 * `toolImages`), a failure as an isError result with the code.
 */
export async function runTool(work: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    const value = await work();
    const images = toolImages.get(value) ?? [];
    return {
      content: [{ type: 'text', text: JSON.stringify(value, null, 2) }, ...images],
      structuredContent: value,
    };
  } catch (error) {
    // Errors leave redacted; an internal failure's text stays in the (stderr) log only.
    if (!isGraphmemixError(error)) console.error(redact(error));
    return toolErrorResult(isGraphmemixError(error) ? redact(error.toJSON()) : INTERNAL_ERROR);
  }
}

/** What a client sees of a failure whose text must not leave (logged instead). */
export const INTERNAL_ERROR = { code: 'INTERNAL', message: 'internal error' } as const;

/** The one shape of a failed tool call: isError with `{"error": payload}` as its text. */
export function toolErrorResult(payload: object): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: payload }) }] };
}
