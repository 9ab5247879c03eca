import type { ErrorCode } from '../errors/error-codes.ts';
import { GraphmemixError, isGraphmemixError } from '../errors/graphmemix-error.ts';
import type { WireError } from './read-worker-protocol.ts';

/** An error as structured-clone-safe data (a GraphmemixError keeps code, location and details). */
export function toWireError(error: unknown): WireError {
  if (isGraphmemixError(error)) {
    return {
      name: error.name,
      message: error.message,
      code: error.code,
      location: error.location,
      ...(error.details === undefined ? {} : { details: error.details }),
    };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  return { name: e.name, message: e.message };
}

/** Back to an Error on the receiving side; the message already carries the location prefix. */
export function fromWireError(error: WireError): Error {
  if (error.code === undefined) {
    const plain = new Error(error.message);
    plain.name = error.name;
    return plain;
  }
  const rebuilt = new GraphmemixError(error.code as ErrorCode, error.message, {
    ...(error.details === undefined ? {} : { details: error.details as Record<string, unknown> }),
  });
  Object.assign(rebuilt, { location: error.location ?? {}, message: error.message });
  return rebuilt;
}
