/**
 * `npx tsx bench/ingest-digest-probe.ts <db> <out.json>`
 *
 * Whether an ingest-path change keeps the archive: ingests generated chat (bench/support/realistic-chat.ts)
 * into new contexts of 1,000, 1,000, 1,000, 1,500, 600 and 2,200 memories (either side of the relation
 * rebuild rule), then 600 more into the first (an existing context), and writes each import's counts and
 * edge counts per type and, for 15 questions per context, the retrieve's pool (ids, scores, prizes), its
 * verified edges and its packet's hash. Two codes (a checkout run with this file copied in) on fresh
 * databases must write the same file; on PostgreSQL also compare the tables (docs/postgres.md, fifth round).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { ingestItems } from '../src/digest/ingest.ts';
import { openGraphmemix } from '../src/graphmemix.ts';
import type { ImportItem } from '../src/importers/importer-spec.ts';
import { chatArchive, chatQuestions } from './support/realistic-chat.ts';

const [db, out] = process.argv.slice(2);
if (!db || !out) throw new Error('usage: ingest-digest-probe.ts <db> <out.json>');
const plan: Array<{ contextId: string; count: number; seed: number }> = [
  { contextId: 'c0', count: 1000, seed: 11 },
  { contextId: 'c1', count: 1000, seed: 12 },
  { contextId: 'c2', count: 1000, seed: 13 },
  { contextId: 'c3', count: 1500, seed: 14 },
  { contextId: 'c4', count: 600, seed: 15 },
  { contextId: 'c5', count: 2200, seed: 16 },
];
const gm = await openGraphmemix({ db });
const imports: unknown[] = [];
try {
  for (const archive of plan) {
    const report = await ingestItems(gm.store, chatArchive(archive) as Iterable<ImportItem>);
    imports.push([archive.contextId, report.imported, report.edges]);
  }
  const more = [...chatArchive({ ...plan[0]!, count: 1600 })].slice(1000);
  const report = await ingestItems(gm.store, more as Iterable<ImportItem>);
  imports.push(['c0 + 600', report.imported, report.edges]);
  const retrieves: unknown[] = [];
  for (const archive of plan) {
    for (const question of chatQuestions(15, 5, archive)) {
      const result = await gm.retrieve(archive.contextId, question);
      retrieves.push({
        pool: result.pool.map((c) => [c.memoryId, c.retrievalScore, c.verifierScore, c.prize]),
        edges: result.verifiedEdges.map((e) => [e.a, e.b, e.weight, e.kept]),
        packet: createHash('sha256').update(result.packetText).digest('hex').slice(0, 16),
      });
    }
  }
  writeFileSync(out, `${JSON.stringify({ imports, retrieves }, null, 1)}\n`);
  process.stdout.write(`${JSON.stringify(imports)}\n`);
} finally {
  await gm.close();
}
