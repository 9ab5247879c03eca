/**
 * The catalog of stable error codes. Tests and API clients branch on these, never on message text.
 * Adding a code is fine; renaming or removing one is a breaking change.
 */
export const ERROR_CODES = {
  /** Input failed validation (a record, a field, a CLI flag, an HTTP body). Exit code 2, HTTP 400. */
  INVALID_INPUT: 'INVALID_INPUT',
  /** A file or directory named by the user does not exist or cannot be read. Exit 2, HTTP 400. */
  NOT_FOUND_PATH: 'NOT_FOUND_PATH',
  /** A memory, context or question id that does not exist. Exit 2, HTTP 404. */
  NOT_FOUND: 'NOT_FOUND',
  /** The same id arrives twice in one import with different content. Reported per record. */
  DUPLICATE_ID: 'DUPLICATE_ID',
  /** A record or request is larger than the configured limit. HTTP 413. */
  TOO_LARGE: 'TOO_LARGE',
  /** Unknown import format, view kind, selector name, ... Exit 2, HTTP 400. */
  UNSUPPORTED: 'UNSUPPORTED',
  /** Configuration is missing or inconsistent (model without base URL, bad config file). Exit 2. */
  CONFIG: 'CONFIG',
  /** Authentication failed (missing or wrong API key). HTTP 401. */
  UNAUTHORIZED: 'UNAUTHORIZED',
  /** The caller is authenticated but the request is refused (bad Host/Origin in open mode, media outside the
   * allowed roots). HTTP 403. Another user's data is NOT_FOUND instead, so its existence does not leak. */
  FORBIDDEN: 'FORBIDDEN',
  /** A write request with a body type the route does not take (open mode accepts JSON/multipart only). HTTP 415. */
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  /** The store file is not a graphmemix store, is newer than this code, or failed an integrity check. */
  STORE: 'STORE',
  /** A model endpoint failed after all retries (network, 5xx, 429, timeout). Caught and flagged in pipelines. */
  MODEL_UNAVAILABLE: 'MODEL_UNAVAILABLE',
  /** A model replied but the reply could not be used (malformed JSON, schema mismatch) after all attempts. */
  MODEL_OUTPUT: 'MODEL_OUTPUT',
  /** The request conflicts with the state of what it names (a write or read of a context being forgotten). HTTP 409. */
  CONFLICT: 'CONFLICT',
  /** The server is at capacity (the question queue is full); retry after a moment. HTTP 503 + Retry-After. */
  BUSY: 'BUSY',
  /** A bug: an invariant did not hold. Exit 70, HTTP 500. */
  INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** Exit codes for the CLI: bad input is distinguishable from an internal failure (sysexits-style). */
export const EXIT_CODES: Record<ErrorCode, number> = {
  INVALID_INPUT: 2,
  NOT_FOUND_PATH: 2,
  NOT_FOUND: 2,
  DUPLICATE_ID: 2,
  TOO_LARGE: 2,
  UNSUPPORTED: 2,
  CONFIG: 2,
  UNAUTHORIZED: 2,
  FORBIDDEN: 2,
  UNSUPPORTED_MEDIA_TYPE: 2,
  STORE: 74,
  CONFLICT: 2,
  MODEL_UNAVAILABLE: 69,
  MODEL_OUTPUT: 69,
  BUSY: 75,
  INTERNAL: 70,
};

/** HTTP status for each code, used by the server shell. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  INVALID_INPUT: 400,
  NOT_FOUND_PATH: 400,
  NOT_FOUND: 404,
  DUPLICATE_ID: 409,
  TOO_LARGE: 413,
  UNSUPPORTED: 400,
  CONFIG: 500,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  UNSUPPORTED_MEDIA_TYPE: 415,
  STORE: 500,
  CONFLICT: 409,
  MODEL_UNAVAILABLE: 502,
  MODEL_OUTPUT: 502,
  BUSY: 503,
  INTERNAL: 500,
};
