import { expect } from 'vitest';
import type { Graphmemix } from '../../src/graphmemix-api.ts';

/** One call a shell made, with the lane (RetrieveOptions.lane / WriteOptions.lane) it passed. */
export type LaneCall = { method: string; lane: string | undefined };

/**
 * `inner` with the given methods recording the lane of each call: `methods` maps a method to the index of
 * the argument that holds its options.
 */
export function laneRecorder(
  inner: Graphmemix,
  methods: Partial<Record<keyof Graphmemix, number>>,
): { gm: Graphmemix; calls: LaneCall[] } {
  const calls: LaneCall[] = [];
  const gm: Graphmemix = { ...inner };
  for (const [method, at] of Object.entries(methods) as Array<[keyof Graphmemix, number]>) {
    const original = inner[method] as (...args: unknown[]) => Promise<unknown>;
    (gm as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[method] = (...args) => {
      calls.push({ method, lane: (args[at] as { lane?: string } | undefined)?.lane });
      return original.apply(inner, args);
    };
  }
  return { gm, calls };
}

/**
 * The first `split` calls were made with one key, the rest with another: each key's calls share one lane, named
 * by the key's digest (hex), never by the key itself (`keyText`: text every key starts with), and the two keys'
 * lanes differ.
 */
export function expectOneLanePerKey(calls: readonly LaneCall[], split: number, keyText: string): void {
  const first = new Set(calls.slice(0, split).map((call) => call.lane));
  const second = new Set(calls.slice(split).map((call) => call.lane));
  expect(first.size).toBe(1);
  expect(second.size).toBe(1);
  expect([...first][0]).toMatch(/^[0-9a-f]{16,}$/);
  expect([...first][0]).not.toBe([...second][0]);
  expect(JSON.stringify(calls)).not.toContain(keyText);
}
