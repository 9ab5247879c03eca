import type { ErrorCode } from './error-codes.ts';

/** Where an error points: the file, line, record id or field that a user has to fix. */
export interface ErrorLocation {
  file?: string;
  line?: number;
  recordId?: string;
  field?: string;
}

/**
 * The one error class of the project. `code` is stable (see error-codes.ts); `location` names what to fix.
 * Expected failures such as parsing a model reply return results instead of throwing.
 */
export class GraphmemixError extends Error {
  readonly code: ErrorCode;
  readonly location: ErrorLocation;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { location?: ErrorLocation; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(
      withLocation(message, options.location),
      options.cause === undefined ? {} : { cause: options.cause },
    );
    this.name = 'GraphmemixError';
    this.code = code;
    this.location = options.location ?? {};
    this.details = options.details;
  }

  toJSON(): { code: ErrorCode; message: string; location: ErrorLocation; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      location: this.location,
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }
}

export function isGraphmemixError(value: unknown): value is GraphmemixError {
  return value instanceof GraphmemixError;
}

function withLocation(message: string, location: ErrorLocation | undefined): string {
  if (!location) return message;
  const parts: string[] = [];
  if (location.file)
    parts.push(location.line === undefined ? location.file : `${location.file}:${location.line}`);
  if (location.recordId) parts.push(`record ${location.recordId}`);
  if (location.field) parts.push(`field ${location.field}`);
  return parts.length === 0 ? message : `${parts.join(', ')}: ${message}`;
}
