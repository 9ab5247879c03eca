import { Transform, type TransformCallback } from 'node:stream';
import { assertJsonDepth, assertNoProtoKeys } from '../api-schemas/json-depth.ts';

/** JSON-RPC's codes for a line that is not JSON and for a request refused as such. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/**
 * Sits between stdin and the MCP SDK's stdio transport and passes on only complete lines that parse as
 * JSON, each at most `maxLineBytes` long. Why: the SDK buffers a line of any length up to its own limit
 * and then closes the session without a word (a client's one oversized message ended the process with
 * exit code 0), and it drops a line that is not JSON without replying. Here an oversized line is skipped
 * as it streams in (never held beyond the limit) and answered with a TOO_LARGE error, a line that is not
 * JSON is answered with a parse error, and the session goes on. Both answers carry `id: null`: the id of a
 * message that could not be read is unknown (JSON-RPC 2.0, section 5).
 */
export class StdioMessageFilter extends Transform {
  private parts: Buffer[] = [];
  private length = 0;
  private skipping = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly reply: (line: string) => void,
    private readonly warn: (message: string) => void = () => {},
  ) {
    super();
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, done: TransformCallback): void {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    while (start < data.length) {
      const newline = data.indexOf(10, start);
      const end = newline === -1 ? data.length : newline;
      if (!this.skipping) {
        if (this.length + (end - start) > this.maxLineBytes) this.startSkipping();
        else if (end > start) {
          this.parts.push(data.subarray(start, end));
          this.length += end - start;
        }
      }
      if (newline === -1) break;
      if (!this.skipping) this.passLine();
      this.parts = [];
      this.length = 0;
      this.skipping = false;
      start = newline + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    // A last line the client ended without a newline still counts as a message (the SDK alone would drop it).
    if (this.length > 0 && !this.skipping) this.passLine();
    done();
  }

  private startSkipping(): void {
    this.skipping = true;
    this.parts = [];
    this.length = 0;
    const message = `message over ${this.maxLineBytes} bytes; ignored`;
    this.warn(`graphmemix mcp: ${message}`);
    this.reply(errorLine(INVALID_REQUEST, message, 'TOO_LARGE'));
  }

  private passLine(): void {
    const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.length);
    const text = line.toString('utf8');
    if (text.trim() === '') return;
    try {
      assertJsonDepth(text);
    } catch (error) {
      this.reply(errorLine(INVALID_REQUEST, (error as Error).message, 'TOO_LARGE'));
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.reply(errorLine(PARSE_ERROR, `message is not JSON: ${reason.slice(0, 200)}`, 'INVALID_INPUT'));
      return;
    }
    try {
      assertNoProtoKeys(message);
    } catch (error) {
      this.reply(errorLine(INVALID_REQUEST, (error as Error).message, 'INVALID_INPUT'));
      return;
    }
    const refused = notOneMessage(message);
    if (refused !== undefined) {
      this.reply(errorLine(INVALID_REQUEST, refused.why, 'INVALID_INPUT', refused.id));
      return;
    }
    this.push(line);
    this.push('\n');
  }
}

function errorLine(
  code: number,
  message: string,
  graphmemixCode: string,
  id: string | number | null = null,
): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, data: { code: graphmemixCode } } })}\n`;
}

/**
 * Why a parsed line is not one JSON-RPC 2.0 message the SDK would take (it drops those without a reply, so a
 * client waiting on the id hung): a batch array, a bare value, no `jsonrpc: "2.0"`, an id that is neither a
 * string nor a number, neither a method nor a result or error. Undefined for a message to pass on.
 */
function notOneMessage(message: unknown): { why: string; id: string | number | null } | undefined {
  if (Array.isArray(message))
    return { why: 'batches are not supported: send one message per line', id: null };
  if (message === null || typeof message !== 'object') return { why: 'a message is a JSON object', id: null };
  const { jsonrpc, id, method, result, error } = message as Record<string, unknown>;
  const readableId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  if (jsonrpc !== '2.0') return { why: 'jsonrpc must be "2.0"', id: readableId };
  if (id !== undefined && id !== null && readableId === null) {
    return { why: 'id must be a string or a number', id: null };
  }
  if (typeof method === 'string') return undefined;
  if (id !== undefined && (result !== undefined || error !== undefined)) return undefined;
  return { why: 'a message needs a method (or a result or error with its id)', id: readableId };
}
