/**
 * The command-line helpers the bench probes share: `--name value` flags with a default, and memory counts
 * written as 10k / 1m.
 */

/** A reader of `--name value` flags from `args` (default: this process's arguments). */
export function probeFlags(args: readonly string[] = process.argv.slice(2)) {
  return (name: string, fallback: string): string => {
    const at = args.indexOf(`--${name}`);
    return at < 0 ? fallback : args[at + 1]!;
  };
}

/** "10k" -> 10,000, "1m" -> 1,000,000, "2500" -> 2,500. */
export function parseCount(text: string): number {
  return Math.round(Number.parseFloat(text) * (/k$/i.test(text) ? 1e3 : /m$/i.test(text) ? 1e6 : 1));
}
