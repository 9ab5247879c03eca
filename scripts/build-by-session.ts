/**
 * `npx tsx scripts/build-by-session.ts --format mem-gallery --data <path> --db <file> [--steps] [--facade] [--shape turns]`
 *
 * Builds an archive the way a living memory grows: the dataset's records are ingested ONE SESSION AT A TIME
 * (one ingest call per session, in source order; relations updated incrementally after each), questions at
 * the end. `graphmemix eval --db <file>` then evaluates that archive (its own ingest finds every record
 * unchanged), to compare with an archive built in one import (issue #10: same Recall@10 within 0.3).
 * `--steps`: the facade's way, each session one turn of a write queue and the automatic compactions in steps
 * between them (BackgroundCompactions, docs/living-archive.md "Round 22"); default: each compaction inside
 * the session import that reaches the rule. `--facade`: each session one `addMemories` call of a facade opened
 * with its defaults (after-write semantic updates and compactions in steps since round 38), awaited in turn as a
 * client adding a session per call would; the facade's close waits for its drains and runs.
 * `--shape turns`: the dialogue datasets without their round ids (the importers' option, as `graphmemix eval
 * --shape turns`), the two-person chat shape whose turns are related by `consecutive_turn` alone; evaluate with
 * the same `--shape`.
 */
import { parseArgs } from 'node:util';
import { compactSemantic } from '../src/digest/incremental/compact-semantic.ts';
import { ingestItems } from '../src/digest/ingest.ts';
import { DEFAULT_CONTEXT_ID } from '../src/digest/ingest-stages.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { MemoryRecordInput } from '../src/graphmemix-api.ts';
import { BackgroundCompactions } from '../src/graphmemix-compactions.ts';
import { WriteQueue } from '../src/graphmemix-write-queue.ts';
import { getImporter } from '../src/importers/importer-registry.ts';
import type { ImportFormat, ImportItem } from '../src/importers/importer-spec.ts';
import { openStore } from '../src/store/open-store.ts';

const { values } = parseArgs({
  options: {
    format: { type: 'string' },
    data: { type: 'string' },
    db: { type: 'string' },
    steps: { type: 'boolean' },
    facade: { type: 'boolean' },
    shape: { type: 'string' },
  },
});
if (values.shape !== undefined && values.shape !== 'rounds' && values.shape !== 'turns') {
  process.stderr.write(`--shape: rounds or turns, not ${values.shape}\n`);
  process.exit(2);
}
if (!values.format || !values.data || !values.db) {
  process.stderr.write('usage: build-by-session.ts --format <format> --data <path> --db <file>\n');
  process.exit(2);
}
const importer = await getImporter(values.format as ImportFormat);
const gm = values.facade ? await openGraphmemix({ db: values.db }) : undefined;
const store = gm?.store ?? (await openStore(values.db));
const sessions = new Map<string, ImportItem[]>();
const tail: ImportItem[] = [];
for await (const item of importer.read(
  values.data,
  values.shape === undefined ? {} : { shape: values.shape },
)) {
  if (item.type !== 'record') {
    tail.push(item);
    continue;
  }
  const record = item.record as { contextId?: string; sessionId?: string };
  const key = `${record.contextId ?? ''}\u0000${record.sessionId ?? ''}`;
  const list = sessions.get(key);
  if (list) list.push(item);
  else sessions.set(key, [item]);
}
const started = performance.now();
let calls = 0;
const writes = new WriteQueue({ perContext: true, parallel: 1 });
const compactions = values.steps
  ? new BackgroundCompactions(store, writes, (contextId) => compactSemantic(store, contextId))
  : undefined;
const options = compactions === undefined ? {} : { compactInBackground: compactions.schedule };
for (const [key, items] of sessions) {
  // As the facade queues an add of that user (its compaction may hold the user's writes, "Round 32").
  const contextId = key.slice(0, key.indexOf('\u0000')) || DEFAULT_CONTEXT_ID;
  if (gm) {
    const records = items.map((item) => (item as { record: MemoryRecordInput }).record);
    await gm.addMemories(contextId, records);
  } else await writes.forContext(contextId, () => ingestItems(store, items, options));
  calls++;
}
if (gm) {
  await gm.waitForCompactions();
  await ingestItems(store, tail, {});
  await gm.close();
} else {
  await writes.exclusive(() => ingestItems(store, tail, options));
  await compactions?.close();
  await store.close();
}
process.stdout.write(
  `${calls} session imports + questions into ${values.db} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
);
