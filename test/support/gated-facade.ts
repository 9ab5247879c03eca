import type { Graphmemix } from '../../src/graphmemix-api.ts';

type Method = 'addMemories' | 'retrieve' | 'searchMemories' | 'listMemories';

/**
 * `inner` with the named methods held until `release()`: their calls stay in progress meanwhile (a request in
 * flight, a question taking its slot). `entered` counts the calls that reached a held method.
 */
export function gatedFacade(
  inner: Graphmemix,
  methods: readonly Method[],
): { gm: Graphmemix; release: () => void; entered: () => number } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let count = 0;
  const gm: Graphmemix = { ...inner };
  for (const method of methods) {
    const original = inner[method] as (...args: unknown[]) => Promise<unknown>;
    (gm as unknown as Record<Method, (...args: unknown[]) => Promise<unknown>>)[method] = async (...args) => {
      count++;
      await gate;
      return original.apply(inner, args);
    };
  }
  return { gm, release, entered: () => count };
}
