/**
 * The Node flags of the library's module worker threads (write worker, read workers, kNN and record-preparation
 * helpers): none inherited, since under tsx the parent's execArgv carries tsx's loader and registering it twice
 * in a worker breaks it (the checkpointer, an eval worker, inherits the parent's flags). `GRAPHMEMIX_WORKER_CPU_PROF=<dir>` (a diagnostic, for an
 * operator or a probe: bench/soak-probe.ts `--server-cpu-prof`) gives each of them `--cpu-prof` into that folder,
 * one profile per thread written when it exits; `node --cpu-prof` alone profiles only the main thread then.
 */
export function workerExecArgv(): string[] {
  const dir = process.env.GRAPHMEMIX_WORKER_CPU_PROF;
  return dir === undefined || dir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}
