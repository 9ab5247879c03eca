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

/** The arguments that are neither a `--name` flag nor its value, in order. */
export function positionalArgs(args: readonly string[] = process.argv.slice(2)): string[] {
  return args.filter((arg, at, all) => !arg.startsWith('--') && !all[at - 1]?.startsWith('--'));
}

/** "10k" -> 10,000, "1m" -> 1,000,000, "2500" -> 2,500. */
export function parseCount(text: string): number {
  return Math.round(Number.parseFloat(text) * (/k$/i.test(text) ? 1e3 : /m$/i.test(text) ? 1e6 : 1));
}

/** The value at rank floor(p * n) of the sorted values (0 when there are none): the probes' p50 / p99. */
export function rankPercentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * A bench command's flags checked before it does anything: `--help` / `-h` prints `usage` and exits 0, and a
 * `--flag` not in `known` is refused (exit 2, naming it). Why: these commands read only the flags they know, and an
 * ignored flag runs the default, which for bench:scale is a 1M-memory scenario (hours on a loaded machine).
 */
export function checkBenchFlags(
  usage: string,
  known: readonly string[],
  args: readonly string[] = process.argv.slice(2),
): void {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const unknown = args.filter((arg) => arg.startsWith('--') && !known.includes(arg));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown flag${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}\nusage: ${usage}\n`,
    );
    process.exit(2);
  }
}
