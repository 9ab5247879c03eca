import type { Context } from 'hono';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/** The users a caller may touch: every user (`*`), or a fixed set. */
export type UserScope = { all: true } | { all: false; users: ReadonlySet<string> };

export const ALL_USERS: UserScope = { all: true };

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by the auth (or open-mode) middleware; routes read it through requireUser. */
    userScope: UserScope;
  }
}

export function userScope(users: '*' | readonly string[]): UserScope {
  return users === '*' || users.includes('*') ? ALL_USERS : { all: false, users: new Set(users) };
}

export function scopeAllows(scope: UserScope | undefined, userId: string): boolean {
  if (scope === undefined) return false;
  return scope.all || scope.users.has(userId);
}

/**
 * Throws NOT_FOUND unless the caller's key may touch `userId`. The message is the one a missing record or
 * user gets, so a caller cannot tell another user's archive from one that does not exist. A request that
 * reached a route without a scope (no auth middleware ran) is refused: fail closed.
 */
export function requireUser(c: Context, userId: string, notFoundMessage?: string): void {
  assertScope(c.get('userScope'), userId, notFoundMessage);
}

export function assertScope(scope: UserScope | undefined, userId: string, notFoundMessage?: string): void {
  if (scopeAllows(scope, userId)) return;
  throw new GraphmemixError('NOT_FOUND', notFoundMessage ?? `user ${userId} not found`);
}

/**
 * The request's caller as a lane (RetrieveOptions.lane, WriteOptions.lane): the questions of different keys
 * waiting for a read worker take turns, and so do their writes waiting for the writer.
 */
export function laneOf(c: Context): { lane?: string } {
  const caller = c.get('caller');
  return caller === undefined ? {} : { lane: caller };
}
