import type { Hono } from 'hono';

/** A seeded LCG: `next()` in [0, 1) and `pick()` of a list, the same sequence for the same seed. */
export function seededPicker(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  return { next, pick: <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]! };
}

/** The fuzzed archives' two users and their keys (each key bound to its own user only). */
export const ALICE = { authorization: 'Bearer ka' };
export const BOB = { authorization: 'Bearer kb' };
export const FUZZ_KEYS = [
  { key: 'ka', users: ['alice'] },
  { key: 'kb', users: ['bob'] },
];

/** Adds `count` memories m0.. to alice and to bob through the API (they differ by their user's name). */
export async function seedBothUsers(
  app: Hono,
  count: number,
  extra: (i: number) => Record<string, unknown> = () => ({}),
): Promise<void> {
  for (const [headers, user] of [
    [ALICE, 'alice'],
    [BOB, 'bob'],
  ] as const) {
    const memories = Array.from({ length: count }, (_, i) => ({
      id: `m${i}`,
      text: `${user} memory ${i} about the harbour walk on monday`,
      timestamp: `2024-06-${10 + (i % 9)}T10:00:00Z`,
      ...extra(i),
    }));
    const response = await app.request('/v1/memories', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: user, memories }),
    });
    if (response.status !== 200)
      throw new Error(`seeding ${user}: ${response.status} ${await response.text()}`);
  }
}

/**
 * True when a refusal's body carries a stable code: `error.code`, or (an add answers per record) a non-empty
 * `rejected` list whose every entry has one.
 */
export function isCodedRefusal(text: string): boolean {
  try {
    const json = JSON.parse(text) as { error?: { code?: string }; rejected?: { code?: string }[] };
    const rejected = json.rejected ?? [];
    return (
      typeof json.error?.code === 'string' ||
      (rejected.length > 0 && rejected.every((entry) => typeof entry.code === 'string'))
    );
  } catch {
    return false;
  }
}
