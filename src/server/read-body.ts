import type { Context } from 'hono';
import { parseRequestJson } from '../api-schemas/json-depth.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

export type MultipartBody = Record<string, string | File | (string | File)[]>;

/** Parses a JSON body; a malformed one is INVALID_INPUT (400), one nested past MAX_JSON_DEPTH TOO_LARGE (413), never a 500. */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') throw new GraphmemixError('INVALID_INPUT', 'request body is empty; send JSON');
  return parseRequestJson(text, 'request body');
}

export function isMultipart(c: Context): boolean {
  return (c.req.header('content-type') ?? '').toLowerCase().startsWith('multipart/form-data');
}

export async function readMultipart(c: Context): Promise<MultipartBody> {
  try {
    return (await c.req.parseBody({ all: true })) as MultipartBody;
  } catch (error) {
    throw new GraphmemixError('INVALID_INPUT', 'malformed multipart body', { cause: error });
  }
}

/** A single text field of a multipart body (the last one when repeated). */
export function textField(body: MultipartBody, name: string): string | undefined {
  const value = body[name];
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return typeof last === 'string' ? last : undefined;
}

/** Every file of a multipart body with its field name. */
export function filesOf(body: MultipartBody): { field: string; file: File }[] {
  const out: { field: string; file: File }[] = [];
  for (const [field, value] of Object.entries(body)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item !== 'string') out.push({ field, file: item });
    }
  }
  return out;
}
