import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import {
  compactSemantic,
  isPostgresUrl,
  openStore,
  redactDbUrl,
  semanticNeedsCompaction,
} from '../../index.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface CompactFlags {
  db: string;
  context?: string;
  k?: string;
  ifNeeded?: boolean;
  json?: boolean;
}

interface CompactLine {
  context: string;
  /** Why it was (or was not) compacted: the rule's reason before the run ('forced' with no --if-needed). */
  reason: string;
  compacted: boolean;
  documents?: number;
  terms?: number;
  semanticEdges?: number;
  seconds?: number;
  /** Threads of the kNN pass (1 below PARALLEL_KNN_FROM memories; GRAPHMEMIX_KNN_THREADS caps it). */
  knnThreads?: number;
  /** A kNN helper thread failed (the pass ran again on one thread: same result, slower). */
  knnHelperFailure?: string;
}

export function registerCompactCommand(program: Command): void {
  program
    .command('compact')
    .description(
      'Rebuild the semantic kNN state (IDF snapshot, vectors, top-k lists, semantic_knn edges) exactly, per context.',
    )
    .option(DB_FLAG, DB_FLAG_HELP)
    .option('--context <id>', 'only this context (default: every context)')
    .option('--k <n>', 'neighbours per memory (default: the snapshot k, else 8)')
    .option('--if-needed', 'only contexts the automatic compaction rule selects (docs/semantic-knn.md)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Example:
  $ graphmemix compact --db archive.db --context alice`,
    )
    .action(async (flags: CompactFlags) => {
      const lines = await runCompact(flags);
      if (flags.json) process.stdout.write(`${JSON.stringify({ contexts: lines })}\n`);
      else process.stdout.write(lines.map(formatLine).join(''));
    });
}

async function runCompact(flags: CompactFlags): Promise<CompactLine[]> {
  if (!isPostgresUrl(flags.db) && !existsSync(flags.db)) {
    throw new GraphmemixError('NOT_FOUND_PATH', `no store at ${flags.db}`, { location: { file: flags.db } });
  }
  const k = flags.k === undefined ? undefined : Number(flags.k);
  if (k !== undefined && !(Number.isInteger(k) && k >= 1 && k <= 1000)) {
    throw new GraphmemixError('INVALID_INPUT', `--k must be an integer in 1..1000, got ${flags.k}`, {
      location: { field: 'k' },
    });
  }
  const store = await openStore(flags.db);
  try {
    const known = (await store.listContexts()).map((context) => context.id);
    if (flags.context !== undefined && !known.includes(flags.context)) {
      throw new GraphmemixError('NOT_FOUND', `no context "${flags.context}" in ${redactDbUrl(flags.db)}`);
    }
    const lines: CompactLine[] = [];
    for (const context of flags.context === undefined ? known : [flags.context]) {
      const advice = await semanticNeedsCompaction(store, context);
      if (flags.ifNeeded && !advice.needed) {
        lines.push({ context, reason: advice.reason, compacted: false });
        continue;
      }
      const result = await compactSemantic(store, context, k === undefined ? {} : { k });
      lines.push({
        context,
        reason: flags.ifNeeded ? advice.reason : 'forced',
        compacted: true,
        documents: result.documents,
        terms: result.terms,
        semanticEdges: result.edges,
        seconds: Math.round(result.seconds * 1000) / 1000,
        knnThreads: result.knnThreads,
        ...(result.knnHelperFailure === undefined ? {} : { knnHelperFailure: result.knnHelperFailure }),
      });
    }
    return lines;
  } finally {
    await store.close();
  }
}

function formatLine(line: CompactLine): string {
  if (!line.compacted) return `${line.context}: skipped (${line.reason})\n`;
  return (
    `${line.context}: compacted ${line.documents} memories, ${line.terms} terms, ` +
    `${line.semanticEdges} semantic_knn pairs in ${line.seconds} s (${line.reason}` +
    `${line.knnThreads !== undefined && line.knnThreads > 1 ? `, kNN on ${line.knnThreads} threads` : ''})\n` +
    (line.knnHelperFailure === undefined
      ? ''
      : `  warning: ${line.knnHelperFailure}; the pass ran on one thread\n`)
  );
}
