/** Tolerant readers for loosely typed dataset JSON: they coerce what is unambiguous and drop the rest. */

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty string (numbers are stringified: datasets store "42" and 42 alike). */
export function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** One string or a list of strings (or numbers) as a list; anything else is an empty list. */
export function asTextList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map(asText).filter((entry): entry is string => entry !== undefined);
  const single = asText(value);
  return single === undefined ? [] : [single];
}

/** `T` with every key that may hold undefined turned into an optional key without undefined. */
export type Compacted<T> = {
  [K in keyof T as undefined extends T[K] ? never : K]: T[K];
} & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** Drops keys whose value is undefined (exactOptionalPropertyTypes: optional means absent). */
export function compact<T extends object>(value: T): Compacted<T> {
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) if (entry !== undefined) out[key] = entry;
  return out as Compacted<T>;
}
