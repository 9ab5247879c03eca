/**
 * `npx tsx bench/solver-replay-probe.ts --db F --graphs G.json [--queries 300] [--size 10k] <checkoutA> <checkoutB>`
 *
 * The forest solver alone on the graphs real questions give it, for two checkouts in one process. The
 * first run retrieves `--queries` questions (chatQuestions seed 5, as bench/retrieve-probe.ts) on the archive
 * F (built by retrieve-probe) and saves each question's solver input (the prized pool and kept edges, as
 * evidenceGraph makes them) and resolved parameters to G; later runs reuse G. Each checkout's solveForest
 * must reproduce the retrieve's order and objective, and both must return the same solutions with the same
 * traces (swaps, proposal, dropped: JSON-equal). Then 30 rounds alternate the two, each timing every graph
 * once (process CPU per graph; the first 5 rounds are warm-up), and the median and best round are printed
 * with the 1-minute load.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseCount, probeFlags } from './support/probe-args.ts';

interface Replay {
  graph: unknown;
  params: unknown;
  order: string[];
  objective: number;
}
type Solve = (graph: unknown, params: unknown) => { order: string[]; objective: number };

const args = process.argv.slice(2);
const flag = probeFlags(args);
const db = flag('db', '/tmp/graphmemix-probe-10k.db');
const graphsFile = flag('graphs', '/tmp/graphmemix-solver-graphs.json');
const queries = Number(flag('queries', '300'));
const size = parseCount(flag('size', '10k'));
const checkouts = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (checkouts.length !== 2) throw new Error('usage: --db F --graphs G.json <checkoutA> <checkoutB>');

if (!existsSync(graphsFile)) {
  const { openGraphmemix } = await import('../src/graphmemix.ts');
  const { evidenceGraph } = await import('../src/pipeline/evidence-stages.ts');
  const { chatQuestions } = await import('./support/realistic-chat.ts');
  const gm = await openGraphmemix({ db });
  const replays: Replay[] = [];
  for (const question of chatQuestions(queries, 5, { contextId: 'big', count: size, seed: 11 })) {
    const result = await gm.retrieve('big', question);
    replays.push({
      graph: evidenceGraph(result.pool, result.verifiedEdges),
      params: result.forest.trace.params,
      order: result.forest.order,
      objective: result.forest.objective,
    });
  }
  await gm.close();
  writeFileSync(graphsFile, JSON.stringify(replays));
}
const replays = JSON.parse(readFileSync(graphsFile, 'utf8')) as Replay[];
const solvers: Solve[] = [];
for (const checkout of checkouts) {
  const module = (await import(`${checkout}/src/core/solve-forest.ts`)) as { solveForest: Solve };
  solvers.push(module.solveForest);
}
for (const [i, solve] of solvers.entries()) {
  for (const replay of replays) {
    const solution = solve(replay.graph, replay.params);
    if (solution.order.join('\n') !== replay.order.join('\n') || solution.objective !== replay.objective)
      throw new Error(`${checkouts[i]} does not reproduce the retrieve's forest`);
  }
}
const solutions = solvers.map((solve) => JSON.stringify(replays.map((r) => solve(r.graph, r.params))));
if (solutions[0] !== solutions[1]) throw new Error('the checkouts return different solutions or traces');

const rounds = solvers.map(() => [] as number[]);
for (let round = 0; round < 30; round++) {
  const order = round % 2 === 0 ? [0, 1] : [1, 0];
  for (const i of order) {
    const started = process.cpuUsage();
    for (const replay of replays) solvers[i]!(replay.graph, replay.params);
    const spent = process.cpuUsage(started);
    if (round >= 5) rounds[i]!.push((spent.user + spent.system) / replays.length);
  }
}
for (const [i, values] of rounds.entries()) {
  const sorted = [...values].sort((x, y) => x - y);
  process.stdout.write(
    `${checkouts[i]}: ${sorted[sorted.length >> 1]!.toFixed(1)} us per solve (median round), ` +
      `best round ${sorted[0]!.toFixed(1)} us\n`,
  );
}
process.stdout.write(
  `${replays.length} graphs, identical solutions and traces, load ${loadavg()[0]!.toFixed(2)}\n`,
);
