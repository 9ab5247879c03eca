/**
 * `npx tsx bench/store-call-probe.ts --db F [--queries 300] [--warmup 10] [--warmup-seed s]`: CPU per warm retrieve spent inside each
 * ArchiveStore method (calls and ms per question), the rest being the pipeline's own work, and per SQL
 * statement (calls and CPU per question). Same archive and questions as bench/retrieve-probe.ts (build the
 * archive with it first). process.cpuUsage counts every thread of the process (V8's GC helpers too), so a
 * short call that overlaps a concurrent collection is overstated: read the call counts, and compare CPU only
 * between runs at the same load (a one-row read measured ~0.4 ms here, ~3-5 us in a loop of its own).
 */
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import { openGraphmemix } from '../src/graphmemix.ts';
import { probeFlags } from './support/probe-args.ts';
import { chatQuestions } from './support/realistic-chat.ts';

const args = process.argv.slice(2);
const flag = probeFlags(args);
const file = flag('db', '/tmp/graphmemix-probe-10k.db');
const queries = Number(flag('queries', '300'));
const size = Number(flag('size-count', '10000'));
// As bench/retrieve-probe.ts: warm-up questions seed 5's leading ones, or seed --warmup-seed's.
const warmup = Number(flag('warmup', '10'));
const warmupSeed = args.includes('--warmup-seed') ? Number(flag('warmup-seed', '')) : undefined;
const gm = await openGraphmemix({ db: file });
const store = gm.store as unknown as Record<string, unknown>;
const spent = new Map<string, { calls: number; us: number }>();
let depth = 0;
let timing = false;
let proto = Object.getPrototypeOf(store) as object | null;
const names = new Set<string>();
while (proto && proto !== Object.prototype) {
  for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor') names.add(name);
  proto = Object.getPrototypeOf(proto) as object | null;
}
for (const name of names) {
  const original = store[name];
  if (typeof original !== 'function') continue;
  store[name] = function (this: unknown, ...rest: unknown[]) {
    if (depth > 0 || !timing) return (original as (...a: unknown[]) => unknown).apply(store, rest);
    depth++;
    const started = process.cpuUsage();
    try {
      return (original as (...a: unknown[]) => unknown).apply(store, rest);
    } finally {
      const used = process.cpuUsage(started);
      depth--;
      const entry = spent.get(name) ?? { calls: 0, us: 0 };
      entry.calls++;
      entry.us += used.user + used.system;
      spent.set(name, entry);
    }
  };
}
// Every statement execution, by SQL text: calls and CPU ms per question.
const statementSpent = new Map<string, { calls: number; ns: bigint }>();
const Statement = new Database(':memory:').prepare('SELECT 1').constructor.prototype as Record<
  string,
  unknown
>;
for (const method of ['get', 'all', 'run', 'iterate']) {
  const original = Statement[method] as (...a: unknown[]) => unknown;
  Statement[method] = function (this: { source: string }, ...rest: unknown[]) {
    if (!timing) return original.apply(this, rest);
    const started = process.cpuUsage();
    try {
      return original.apply(this, rest);
    } finally {
      const key = `${method} ${this.source.replace(/\s+/g, ' ').slice(0, 90)}`;
      const entry = statementSpent.get(key) ?? { calls: 0, ns: 0n };
      entry.calls++;
      const used = process.cpuUsage(started);
      entry.ns += BigInt((used.user + used.system) * 1000);
      statementSpent.set(key, entry);
    }
  };
}
const archive = { contextId: 'big', count: size, seed: 11 };
const questions =
  warmupSeed === undefined
    ? chatQuestions(queries + warmup, 5, archive)
    : [...chatQuestions(warmup, warmupSeed, archive), ...chatQuestions(queries, 5, archive)];
let total = 0;
for (const [i, question] of questions.entries()) {
  timing = i >= warmup;
  const started = process.cpuUsage();
  await gm.retrieve('big', question);
  const used = process.cpuUsage(started);
  if (timing) total += used.user + used.system;
}
await gm.close();
const n = queries;
process.stdout.write(
  `CPU per retrieve ${(total / n / 1000).toFixed(2)} ms, load ${loadavg()[0]!.toFixed(2)}\n`,
);
for (const [name, e] of [...spent].sort((x, y) => y[1].us - x[1].us))
  process.stdout.write(
    `  ${name.padEnd(28)} ${(e.calls / n).toFixed(2).padStart(6)} calls ${(e.us / n / 1000).toFixed(3)} ms\n`,
  );
for (const [name, e] of [...statementSpent].sort((x, y) => Number(y[1].ns - x[1].ns)).slice(0, 25))
  process.stdout.write(
    `  ${(e.calls / n).toFixed(2).padStart(6)} x ${(Number(e.ns) / n / 1e6).toFixed(3)} ms  ${name}\n`,
  );
