import { type ArchiveStore, inUnitOfWork, type RelationWork } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { type BuildRelationsOptions, type BuildRelationsResult, buildRelations } from './build-relations.ts';
import { describeApproximateMark, readApproximateMark } from './incremental/approximate-knn-mark.ts';
import { backfillRelationKeys } from './incremental/backfill-relation-keys.ts';
import { atOnce, compactSemantic } from './incremental/compact-semantic.ts';
import { type SchemaDelta, updateSchemaRelations } from './incremental/update-schema-relations.ts';
import { updateSemanticRelations } from './incremental/update-semantic-relations.ts';

/**
 * When the relation journal holds at least `minPending` entries AND at least `fraction` of the context, one
 * full rebuild is cheaper than that many incremental updates (a bulk import into a new or small context).
 * Below it, updates are incremental: cost follows what changed, never the context size. A new context of
 * 500-1,000 memories already costs ~40% less CPU rebuilt (its semantic side is compacted either way; the
 * rebuild's schema pass reads each record once); `minPending` stays above one ingest batch (500), so a
 * write that fits one unit of work (an add) keeps its incremental path.
 */
export const FULL_REBUILD_RULE = { minPending: 1000, fraction: 0.5 } as const;

/** Journal entries applied per incremental step (one schema changeEdges write per step). */
export const RELATION_WORK_PAGE = 1000;

/** Meta key marking a context written before relation keys existed (set by migration 4): backfill first. */
export const UPGRADE_META_PREFIX = 'relations-upgrade:';

/**
 * Meta key set while an incremental update is being applied. The semantic lists and their edges are written
 * in separate transactions, so a process killed between them can leave edges that re-running the same
 * entries would not notice; finding the marker, the next update compacts the semantic side (exact) before
 * going on. Schema updates need no such care: they diff against the stored edges.
 */
export const INFLIGHT_META_PREFIX = 'relations-inflight:';

/**
 * Version of the relation lookup keys (relationKeys) a context's stored records carry, kept in meta
 * `relation-keys-version:<context>`. Version 2 added the supersedes keys (`sup:`, `sre:`). A context whose
 * stored records predate the current version gets its keys backfilled and its relations rebuilt once (the
 * same one-time walk as UPGRADE_META_PREFIX); a context whose every record arrives in the pending batch (a
 * new one) is keyed by its writes and only gets the mark.
 */
export const RELATION_KEYS_VERSION = 2;
export const KEYS_VERSION_META_PREFIX = 'relation-keys-version:';

export interface RelationUpdateReport {
  /** 'none' (nothing pending), 'incremental', or 'rebuild' (full, exact). */
  mode: 'none' | 'incremental' | 'rebuild';
  /** Journal entries consumed. */
  entries: number;
  seconds: Record<string, number>;
  warnings: string[];
}

/**
 * Brings one context's relations up to date with its relation journal (ArchiveStore.pendingRelationWork):
 * the one place where writes become graph edges. Every memory write and delete leaves journal entries in
 * its own transaction; this consumes them and clears them only after their edges are written, so a process
 * killed at any point leaves entries that the next call (or a repeat of the write) finishes. Re-applying an
 * entry is harmless: both updaters recompute the affected pairs from the store's current state.
 *
 * Incremental (the normal case): schema relations from the changed records' keys
 * (incremental/update-schema-relations.ts) and mutual kNN around them (incremental/update-semantic-relations.ts).
 * A full rebuild (buildRelations: every relation type, exact) when FULL_REBUILD_RULE says it is cheaper, and
 * once for a context written before relation keys existed; from APPROXIMATE_KNN_FROM memories its kNN side
 * is the bounded pass (approximate; the context is marked and the report says so).
 */
export async function updateRelations(
  store: ArchiveStore,
  contextId: string,
  options: BuildRelationsOptions = {},
): Promise<RelationUpdateReport> {
  const started = performance.now();
  const report: RelationUpdateReport = { mode: 'none', entries: 0, seconds: {}, warnings: [] };
  // The decision and an incremental update form one unit (PostgreSQL: one transaction under the context's
  // lock instead of ~40: an add-1's update is many small store calls, and their round trips were most of
  // its time). A rebuild runs outside it: it may be long, and other writers of the context keep going.
  const keysMeta = `${KEYS_VERSION_META_PREFIX}${contextId}`;
  // With an embedding model the unit would wait on model calls: SQLite then keeps its per-call transactions.
  const unit = { remote: options.embedding !== undefined };
  // A facade's import gives its write queue: the decision (and an incremental update) is one turn of it, a
  // rebuild several (buildRelations). Otherwise everything runs at once, as one piece of the caller's.
  const turn = options.turn ?? atOnce;
  const rebuild = await turn(() =>
    inUnitOfWork(
      store,
      contextId,
      async () => {
        const status = await store.relationWorkStatus(contextId);
        const upgrade = (await store.getMeta(`${UPGRADE_META_PREFIX}${contextId}`)) !== undefined;
        if (status.pending === 0 && !upgrade) return undefined;
        const size = await store.countMemories(contextId);
        const keysCurrent = ((await store.getMeta<number>(keysMeta)) ?? 0) >= RELATION_KEYS_VERSION;
        // Stored records older than this batch may lack current keys: the incremental path would miss them.
        const keysStale = !keysCurrent && size > status.pending;
        const bulk =
          status.pending >= FULL_REBUILD_RULE.minPending &&
          status.pending >= FULL_REBUILD_RULE.fraction * size;
        if (bulk || upgrade || keysStale) return { status, upgrade, keysCurrent, keysStale };
        report.mode = 'incremental';
        if (!keysCurrent) await store.setMeta(keysMeta, RELATION_KEYS_VERSION);
        await applyIncremental(store, contextId, options, report);
        report.seconds.total = (performance.now() - started) / 1000;
        return undefined;
      },
      unit,
    ),
  );
  if (rebuild) {
    const { status, upgrade, keysCurrent, keysStale } = rebuild;
    if (upgrade || keysStale) await turn(() => backfillRelationKeys(store, contextId));
    // Automatic: a large context gets the bounded kNN pass (marked approximate), never hours of exact search.
    const built = await buildRelations(store, contextId, { ...options, knn: 'auto' });
    await turn(async () => {
      if (status.lastSeq !== undefined) await store.clearRelationWork(contextId, { through: status.lastSeq });
      const mark = await readApproximateMark(store, contextId);
      if (mark) report.warnings.push(describeApproximateMark(mark));
      if (upgrade) await store.setMeta(`${UPGRADE_META_PREFIX}${contextId}`, undefined);
      if (!keysCurrent) await store.setMeta(keysMeta, RELATION_KEYS_VERSION);
      // The exact rebuild also repairs whatever an interrupted update left.
      await store.setMeta(`${INFLIGHT_META_PREFIX}${contextId}`, undefined);
    });
    // A bulk import's postings: one segment for the questions that follow (no result changes).
    await turn(async () => store.optimizeLexicalIndex?.(contextId));
    report.mode = 'rebuild';
    report.entries = status.pending;
    report.warnings.push(...built.warnings);
    for (const [step, seconds] of Object.entries(built.seconds)) report.seconds[step] = seconds;
    report.seconds.total = (performance.now() - started) / 1000;
  }
  return report;
}

/** The incremental update: the journal, page by page, through the schema and semantic updaters. */
async function applyIncremental(
  store: ArchiveStore,
  contextId: string,
  options: BuildRelationsOptions,
  report: RelationUpdateReport,
): Promise<void> {
  const inflightKey = `${INFLIGHT_META_PREFIX}${contextId}`;
  if (interrupted(await store.getMeta<InflightMark>(inflightKey))) {
    // A previous update died half-way: rebuild the semantic side exactly, then continue incrementally.
    const compacted = await compactSemantic(store, contextId, {
      ...(options.k === undefined ? {} : { k: options.k }),
      method: 'auto',
      ...(options.approximateFrom === undefined ? {} : { approximateFrom: options.approximateFrom }),
      ...(options.exactWorkRatio === undefined ? {} : { exactWorkRatio: options.exactWorkRatio }),
    });
    report.warnings.push(
      `recovered an interrupted relation update (semantic compaction of ${compacted.documents})`,
    );
  }
  await store.setMeta(inflightKey, { pid: process.pid, at: new Date().toISOString() } satisfies InflightMark);
  let schemaSeconds = 0;
  let semanticSeconds = 0;
  for (;;) {
    const work = await store.pendingRelationWork(contextId, RELATION_WORK_PAGE);
    if (work.length === 0) break;
    const delta = await deltaOf(store, contextId, work);
    // The two updaters run together: they read and write disjoint state (the schema types of edges; the
    // semantic index and the semantic_knn type), and an edge change adds or removes its own types only, so
    // the edges do not depend on their order. A networked store then answers their reads in shared round
    // trips and runs one's statements while the other computes (issue #11). Both finish before either's
    // failure is thrown. Their seconds overlap.
    const started = performance.now();
    const [schema, semantic] = await Promise.allSettled([
      updateSchemaRelations(store, contextId, delta).then(() => performance.now()),
      updateSemanticRelations(store, contextId, delta, options).then((result) => ({
        result,
        at: performance.now(),
      })),
    ]);
    if (schema.status === 'rejected') throw schema.reason;
    if (semantic.status === 'rejected') throw semantic.reason;
    report.warnings.push(...semantic.value.result.warnings);
    schemaSeconds += (schema.value - started) / 1000;
    semanticSeconds += (semantic.value.at - started) / 1000;
    await store.clearRelationWork(
      contextId,
      work.map((entry) => entry.seq),
    );
    report.entries += work.length;
    // Entries written meanwhile by another writer are picked up by the next page (or the next call).
    if (work.length < RELATION_WORK_PAGE) break;
  }
  await store.setMeta(inflightKey, undefined);
  report.seconds = { schema: schemaSeconds, semantic_knn: semanticSeconds };
}

/**
 * Journal entries -> the write they describe. Per memory the EARLIEST entry's `before` is the state the
 * stored edges still reflect (later entries of the same memory were never applied); the current record is
 * read from the store. Inserted-then-deleted memories vanish from the delta.
 */
async function deltaOf(
  store: ArchiveStore,
  contextId: string,
  work: readonly RelationWork[],
): Promise<SchemaDelta> {
  const before = new Map<string, MemoryRecord | undefined>();
  for (const entry of work) if (!before.has(entry.memoryId)) before.set(entry.memoryId, entry.before);
  const current = new Map(
    (await store.getMemories(contextId, [...before.keys()])).map((record) => [record.id, record]),
  );
  const upserted: Array<{ before?: MemoryRecord; after: MemoryRecord }> = [];
  const removed: MemoryRecord[] = [];
  for (const [id, old] of before) {
    const now = current.get(id);
    if (now) upserted.push(old === undefined ? { after: now } : { before: old, after: now });
    else if (old !== undefined) removed.push(old);
  }
  return { upserted, removed };
}

/**
 * Explicit maintenance: every relation of the context rebuilt exactly (buildRelations), its journal settled
 * and any interrupted-update marker cleared. Walks the whole context.
 */
export async function compactRelations(
  store: ArchiveStore,
  contextId: string,
  options: BuildRelationsOptions = {},
): Promise<BuildRelationsResult> {
  const status = await store.relationWorkStatus(contextId);
  const keysMeta = `${KEYS_VERSION_META_PREFIX}${contextId}`;
  const keysCurrent = ((await store.getMeta<number>(keysMeta)) ?? 0) >= RELATION_KEYS_VERSION;
  if (!keysCurrent) await backfillRelationKeys(store, contextId);
  const built = await buildRelations(store, contextId, options);
  if (status.lastSeq !== undefined) await store.clearRelationWork(contextId, { through: status.lastSeq });
  if (!keysCurrent) await store.setMeta(keysMeta, RELATION_KEYS_VERSION);
  await store.setMeta(`${INFLIGHT_META_PREFIX}${contextId}`, undefined);
  await store.setMeta(`${UPGRADE_META_PREFIX}${contextId}`, undefined);
  await store.optimizeLexicalIndex?.(contextId);
  return built;
}

export interface RelationUpgradeReport {
  /** Contexts whose relations were rebuilt (their upgrade mark is gone). */
  rebuilt: string[];
  /**
   * Contexts left marked: their semantic side is an embedding space and no `embedding` model was given, so a
   * rebuild here would replace their semantic_knn edges with tfidf ones. Their next relation update through
   * a configured archive (openGraphmemix with the model) rebuilds them.
   */
  deferred: string[];
}

/**
 * Explicit maintenance after a store migration (`graphmemix migrate`): every context a migration marked
 * for a relation upgrade (UPGRADE_META_PREFIX; e.g. SQLite 7 / Postgres 4 after a tokenizer change) gets
 * its relation keys and relations rebuilt now (updateRelations' upgrade path: exact) instead of at its next
 * write. Walks those contexts; a store with no marks costs one meta read.
 */
export async function finishRelationUpgrades(
  store: ArchiveStore,
  options: BuildRelationsOptions = {},
): Promise<RelationUpgradeReport> {
  const report: RelationUpgradeReport = { rebuilt: [], deferred: [] };
  const marked = store.listMetaKeys
    ? (await store.listMetaKeys(UPGRADE_META_PREFIX)).map((key) => key.slice(UPGRADE_META_PREFIX.length))
    : await markedContexts(store);
  if (marked.length === 0) return report;
  const existing = new Set((await store.listContexts()).map((context) => context.id));
  for (const contextId of marked) {
    if (!existing.has(contextId)) {
      // The context was deleted after it was marked: nothing left to rebuild.
      await store.setMeta(`${UPGRADE_META_PREFIX}${contextId}`, undefined);
      continue;
    }
    const snapshot = await store.semantic.getSnapshot(contextId);
    if (snapshot !== undefined && snapshot.space !== 'tfidf' && options.embedding === undefined) {
      report.deferred.push(contextId);
      continue;
    }
    // The context keeps its own k (the rebuild's default is 8).
    const k = options.k ?? snapshot?.k;
    await updateRelations(store, contextId, k === undefined ? options : { ...options, k });
    report.rebuilt.push(contextId);
  }
  return report;
}

/** Marked contexts of a store without listMetaKeys (one meta read per context). */
async function markedContexts(store: ArchiveStore): Promise<string[]> {
  const marked: string[] = [];
  for (const { id } of await store.listContexts()) {
    if ((await store.getMeta(`${UPGRADE_META_PREFIX}${id}`)) !== undefined) marked.push(id);
  }
  return marked;
}

/** Who is applying an incremental update (the in-flight mark). */
interface InflightMark {
  pid: number;
  at: string;
}

/**
 * A mark left by an update that did not finish: its process is gone, or it is this process (a call that
 * threw half-way). Another live process's mark is its update in progress (two writers on one file), not a
 * crash: compacting then would only cost time. Archives are local files, so the pid is on this machine.
 */
function interrupted(mark: InflightMark | true | undefined): boolean {
  if (mark === undefined) return false;
  if (mark === true || typeof mark.pid !== 'number' || mark.pid === process.pid) return true;
  try {
    process.kill(mark.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
