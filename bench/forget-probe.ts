/**
 * `npx tsx bench/forget-probe.ts <file.db> [context]` (context default 'big', as bench/retrieve-probe.ts): copies
 * the archive to a temporary file, forgets one user there (`deleteUser`: one transaction holding the file's
 * write lock, so every other writer of the file waits that long) and prints the wall and CPU time with the
 * 1-minute load. The source file is not changed.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGraphmemix } from '../src/graphmemix.ts';

const [source, contextId = 'big'] = process.argv.slice(2);
if (!source || !existsSync(source)) throw new Error('usage: <file.db> [context]');
const dir = mkdtempSync(join(tmpdir(), 'gm-forget-'));
const file = join(dir, 'copy.db');
copyFileSync(source, file);
try {
  const gm = await openGraphmemix({ db: file, readWorkers: false });
  const memories = (await gm.userStats(contextId))?.memories ?? 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const report = await gm.deleteUser(contextId);
  const used = process.cpuUsage(cpu);
  console.log(
    `forget ${contextId} (${memories} memories): ${(performance.now() - started).toFixed(0)} ms wall, ` +
      `${((used.user + used.system) / 1000).toFixed(0)} ms CPU, deleted ${report.deleted}, load ${loadavg()[0]!.toFixed(2)}`,
  );
  await gm.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
