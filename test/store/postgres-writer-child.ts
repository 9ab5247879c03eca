/**
 * Child process of test/store/postgres-processes.test.ts: writes `count` memories of its own into one shared
 * context, one writeMemories per memory, updates the shared memory "contested" and deletes its first memory.
 * Prints "done" when every write was acknowledged.
 */
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { write } from './store-conformance.ts';

const [url, name, countText] = process.argv.slice(2) as [string, string, string];
const store = await openPostgresStore({ url, maxConnections: 2 });
const count = Number(countText);
for (let i = 0; i < count; i++) {
  await store.writeMemories('shared', [
    write('shared', `${name}-${i}`, `process ${name} item ${i} common`, i),
  ]);
}
await store.writeMemories('shared', [write('shared', 'contested', `version from ${name}`, 999)]);
await store.deleteMemory('shared', `${name}-0`);
await store.close();
process.stdout.write('done\n');
