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

/** `{ a: { a: ... 1 } }`, `depth` levels deep. */
export function deepObject(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/**
 * Values no field should trust, for any request shape: wrong types, extremes, a 70k string, NUL and a lone
 * surrogate, prototype keys and objects, deep nesting, an operator object, other users' names.
 */
export const HOSTILE_VALUES: readonly unknown[] = [
  null,
  true,
  -1,
  0,
  1e308,
  'NaN',
  '',
  'x'.repeat(70_000),
  '\u0000',
  '\ud800',
  '__proto__',
  JSON.parse('{"__proto__": {"polluted": 1}}'),
  { constructor: { prototype: { polluted: 1 } } },
  [],
  deepObject(60),
  { $gt: '' },
  'alice',
  '*',
  'bob/../alice',
];

/** Keys a mutated object may gain (prototype keys and the names of fields that carry paths or users). */
export const HOSTILE_KEYS = ['__proto__', 'constructor', 'extra', 'uri', 'path', 'url', 'user_id', 'assets'];

/**
 * A seeded mutator of JSON values: a value becomes one of `hostile` with probability 0.15, an array is emptied
 * with 0.1, an object loses each field with 0.05 and gains one of `keys` (set as an own property, so
 * `__proto__` is a real key) holding a hostile value with 0.1.
 */
export function jsonMutator(
  picker: ReturnType<typeof seededPicker>,
  hostile: readonly unknown[],
  keys: readonly string[] = HOSTILE_KEYS,
): (value: unknown) => unknown {
  const { next, pick } = picker;
  const mutate = (value: unknown): unknown => {
    if (next() < 0.15) return pick(hostile);
    if (Array.isArray(value)) return next() < 0.1 ? [] : value.map(mutate);
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(value)) if (next() > 0.05) out[key] = mutate(field);
      if (next() < 0.1) Object.defineProperty(out, pick(keys), { value: pick(hostile), enumerable: true });
      return out;
    }
    return value;
  };
  return mutate;
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
