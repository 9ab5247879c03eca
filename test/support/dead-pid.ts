import { spawn } from 'node:child_process';

/** The pid of a process of this machine that has exited (a killed writer's, for compaction marks). */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}
