import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { MemoryView } from '../types/view.ts';
import type { ArchiveStore, EdgeChange, MemoryWrite } from './archive-store-spec.ts';
import { pairKey } from './edge-merge.ts';
import type { SemanticDoc, SemanticSnapshot } from './semantic-index-spec.ts';
import { TOKENIZER_VERSION_META, vectorRowKey } from './store-rules.ts';

export interface CopyArchiveOptions {
  /** Copy only this context (default: every context of the source). */
  contextId?: string;
  /** Memories read and written per transaction (default 500). */
  pageSize?: number;
  /** Called after each page: memories of the whole copy done so far, of `total`. */
  onProgress?: (progress: { done: number; total: number; contextId: string }) => void;
  /**
   * Rewrites what is written (the CLI moves media files into the target's media folder and points records
   * and views at them). Deterministic, so a re-run compares equal. A record `record` returns unchanged
   * (same object) keeps the source's hash and keys; a changed one is written with `hash` and `keys` of it.
   */
  rewrite?: CopyRewrite;
}

export interface CopyRewrite {
  record(record: MemoryRecord): MemoryRecord;
  hash(record: MemoryRecord): string;
  keys(record: MemoryRecord): string[];
  view(view: MemoryView): MemoryView;
}

export interface CopyContextReport {
  contextId: string;
  /** Memories of the context in the source. */
  memories: number;
  /** Memories written (new or changed in the target); 0 on a re-run. */
  written: number;
  vectors: number;
  /** Edge pairs changed in the target. */
  edges: number;
  /** Whether the semantic kNN state was replaced. */
  semantic: boolean;
  questions: number;
  /** Relation journal entries the source still had: the target keeps its own, applied by its next update. */
  pendingRelationWork: number;
}

export interface CopyArchiveReport {
  contexts: CopyContextReport[];
  /** Meta keys (calibrations) written. */
  meta: number;
  warnings: string[];
  seconds: number;
}

/**
 * Meta never copied: an in-flight relation update belongs to its own archive, and the tokenizer version
 * describes the store's own index (each store records its own, like its schema version).
 */
const SKIPPED_META = /^(?:relations-inflight:|tokenizer_version$)/;
// Per-context marks travel with their context: the keys version says what the copied relation keys hold.
const CONTEXT_META = /^(?:relations-upgrade|relation-keys-version):(.*)$/;

/**
 * Copies a whole archive, or one context, from one store into another through the ArchiveStore port only, so
 * any two backends work in either direction (SQLite, memory, Postgres). Per context: records with their
 * views, content hashes and relation lookup keys, vectors of every space, edges (types, strength,
 * similarity), the semantic kNN state (snapshot, documents, lists), questions; then the meta (calibrations).
 *
 * Idempotent: every part is compared with the target first and only differences are written, so a re-run
 * writes nothing. The target context becomes a mirror of the source for the copied memories (same ids and
 * content, same edges among them, the same semantic state); memories the target holds beyond them stay.
 * The copied edges are the source's applied edges, so the target's relation journal is cleared after the copy,
 * unless the source itself had unapplied entries (then the target's next relation update finishes them).
 */
export async function copyArchive(
  source: ArchiveStore,
  target: ArchiveStore,
  options: CopyArchiveOptions = {},
): Promise<CopyArchiveReport> {
  const started = performance.now();
  const contexts = await source.listContexts();
  const named =
    options.contextId === undefined ? contexts : contexts.filter((c) => c.id === options.contextId);
  if (options.contextId !== undefined && named.length === 0) {
    throw new GraphmemixError('NOT_FOUND', `no context "${options.contextId}" in the source archive`, {
      location: { field: 'context' },
    });
  }
  const warnings: string[] = [];
  // A user whose forget began (or was interrupted) is not copied: a copy would bring back what it asked to forget.
  const chosen: typeof named = [];
  for (const context of named) {
    if (source.isForgetting && (await source.isForgetting(context.id))) {
      warnings.push(`context ${context.id} is being forgotten: not copied (finish with graphmemix forget)`);
    } else chosen.push(context);
  }
  const total = chosen.reduce((sum, context) => sum + context.memories, 0);
  // A source whose terms are another tokenizer's (a read-only copy of an archive not yet migrated): its
  // semantic state is not copied, and each copied context is marked for a relation upgrade in the target
  // (relation keys, semantic state and edges rebuilt by `graphmemix migrate` or its next relation update).
  const sourceTerms = await source.getMeta(TOKENIZER_VERSION_META);
  const staleTerms = sourceTerms !== (await target.getMeta(TOKENIZER_VERSION_META));
  if (staleTerms && chosen.length > 0) {
    warnings.push(
      `the source's terms are from tokenizer version ${sourceTerms ?? 1}: its semantic state is not copied; run graphmemix migrate on the target to rebuild its relations`,
    );
  }
  const reports: CopyContextReport[] = [];
  let done = 0;
  for (const context of chosen) {
    reports.push(
      await copyContext(source, target, context.id, { ...options, staleTerms }, warnings, (n) => {
        done += n;
        options.onProgress?.({ done, total, contextId: context.id });
      }),
    );
  }
  const meta = await copyMeta(source, target, new Set(chosen.map((c) => c.id)), warnings);
  return { contexts: reports, meta, warnings, seconds: (performance.now() - started) / 1000 };
}

async function copyContext(
  source: ArchiveStore,
  target: ArchiveStore,
  contextId: string,
  options: CopyArchiveOptions & { staleTerms: boolean },
  warnings: string[],
  advance: (memories: number) => void,
): Promise<CopyContextReport> {
  const pageSize = options.pageSize ?? 500;
  const keys = await allKeys(source, contextId);
  const snapshot = await source.semantic.getSnapshot(contextId);
  const spaces = await vectorSpaces(source, contextId, snapshot, warnings);
  const report: CopyContextReport = {
    contextId,
    memories: await source.countMemories(contextId),
    written: 0,
    vectors: 0,
    edges: 0,
    semantic: false,
    questions: 0,
    pendingRelationWork: (await source.relationWorkStatus(contextId)).pending,
  };
  const copiedIds: string[] = [];
  const earlierPages = new Set<string>();
  let last: MemoryRecord | undefined;
  for (;;) {
    const page = await source.listMemories(
      contextId,
      last === undefined
        ? { limit: pageSize }
        : { afterSequence: last.sequence, afterId: last.id, limit: pageSize },
    );
    if (page.length === 0) break;
    last = page[page.length - 1]!;
    const ids = page.map((record) => record.id);
    report.written += await copyMemories(source, target, contextId, page, keys, options.rewrite);
    for (const space of spaces) report.vectors += await copyVectors(source, target, contextId, space, ids);
    report.edges += await copyEdges(source, target, contextId, ids, earlierPages);
    for (const id of ids) {
      earlierPages.add(id);
      copiedIds.push(id);
    }
    advance(page.length);
    if (page.length < pageSize) break;
  }
  if (options.staleTerms) await target.setMeta(`relations-upgrade:${contextId}`, true);
  else if (snapshot) {
    report.semantic = await copySemantic(source, target, contextId, snapshot, copiedIds, pageSize);
  }
  report.questions = await copyQuestions(source, target, contextId);
  if (report.pendingRelationWork === 0) {
    const status = await target.relationWorkStatus(contextId);
    if (status.pending > 0 && status.lastSeq !== undefined) {
      await target.clearRelationWork(contextId, { through: status.lastSeq });
    }
  }
  return report;
}

/** Every (record, keys) of the context: findKeyRange over all keys, paged by (key, record id). */
async function allKeys(store: ArchiveStore, contextId: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  let from = '';
  let afterId: string | undefined;
  let limit = 5000;
  for (;;) {
    const rows = await store.findKeyRange(contextId, from, '\uffff', { limit });
    // Rows of the key we resume at that an earlier page already returned: (key, id) <= the last one seen.
    const fresh =
      afterId === undefined ? rows : rows.filter((row) => row.key !== from || row.record.id > afterId!);
    for (const row of fresh) {
      const list = out.get(row.record.id);
      if (list) list.push(row.key);
      else out.set(row.record.id, [row.key]);
    }
    if (rows.length < limit) return out;
    if (fresh.length === 0) {
      // One key holds more records than a page: widen the page until the key's group fits.
      limit *= 2;
      continue;
    }
    const tail = rows[rows.length - 1]!;
    from = tail.key;
    afterId = tail.record.id;
  }
}

async function copyMemories(
  source: ArchiveStore,
  target: ArchiveStore,
  contextId: string,
  page: readonly MemoryRecord[],
  keys: ReadonlyMap<string, string[]>,
  rewrite: CopyRewrite | undefined,
): Promise<number> {
  const ids = page.map((record) => record.id);
  const sourceHashes = await source.getContentHashes(contextId, ids);
  const targetHashes = await target.getContentHashes(contextId, ids);
  const changed: Array<{ record: MemoryRecord; hash: string; keys: string[] }> = [];
  for (const original of page) {
    const record = rewrite ? rewrite.record(original) : original;
    const moved = record !== original;
    const hash = moved ? rewrite!.hash(record) : sourceHashes.get(original.id);
    if (hash === undefined || targetHashes.get(record.id) === hash) continue;
    changed.push({ record, hash, keys: moved ? rewrite!.keys(record) : (keys.get(record.id) ?? []) });
  }
  if (changed.length === 0) return 0;
  const viewsOf = new Map<string, MemoryView[]>();
  for (const stored of await source.getViews(
    contextId,
    changed.map((entry) => entry.record.id),
  )) {
    const view = rewrite ? rewrite.view(stored) : stored;
    const list = viewsOf.get(view.memoryId);
    if (list) list.push(view);
    else viewsOf.set(view.memoryId, [view]);
  }
  const writes: MemoryWrite[] = changed.map(({ record, hash, keys: recordKeys }) => ({
    record,
    views: viewsOf.get(record.id) ?? [],
    contentHash: hash,
    keys: recordKeys,
  }));
  await target.writeMemories(contextId, writes);
  return writes.length;
}

/** The spaces to copy: the backend's list, else the dense space of the semantic snapshot (with its records). */
async function vectorSpaces(
  store: ArchiveStore,
  contextId: string,
  snapshot: SemanticSnapshot | undefined,
  warnings: string[],
): Promise<string[]> {
  if (store.listVectorSpaces) return store.listVectorSpaces(contextId);
  warnings.push(
    `the ${store.backend} source cannot list its vector spaces; copied the semantic snapshot's space only`,
  );
  if (!snapshot || snapshot.space === 'tfidf') return [];
  return [snapshot.space, `${snapshot.space}#record`];
}

function sameVector(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

async function copyVectors(
  source: ArchiveStore,
  target: ArchiveStore,
  contextId: string,
  space: string,
  ids: readonly string[],
): Promise<number> {
  const rows = await source.getVectors(contextId, space, ids);
  if (rows.length === 0) return 0;
  const have = new Map(
    (await target.getVectors(contextId, space, ids)).map((row) => [vectorRowKey(row), row]),
  );
  const missing = rows.filter((row) => {
    const there = have.get(vectorRowKey(row));
    return !there || !sameVector(there.vector, row.vector);
  });
  if (missing.length > 0) await target.putVectors(contextId, space, missing);
  return missing.length;
}

const sortedTypes = (types: readonly RelationType[]): string => [...types].sort().join(',');

/**
 * Edges touching the page's memories whose both ends are copied by now, so each pair is handled once. Pairs whose types or similarity differ in the target are set to the source's; pairs the target has
 * among copied memories that the source lacks are removed.
 */
async function copyEdges(
  source: ArchiveStore,
  target: ArchiveStore,
  contextId: string,
  ids: readonly string[],
  earlierPages: ReadonlySet<string>,
): Promise<number> {
  const page = new Set(ids);
  const copied = (id: string) => page.has(id) || earlierPages.has(id);
  // Every pair touches this page; one whose other end lies in a later page waits for that page (its memory
  // is not in the target yet), and one reaching back into an earlier page is new here (it waited for this one).
  const wanted = new Map<string, MemoryEdge>();
  for (const edge of await source.neighbors(contextId, ids)) {
    if (copied(edge.a) && copied(edge.b)) wanted.set(pairKey(edge.a, edge.b), edge);
  }
  const present = new Map<string, MemoryEdge>();
  for (const edge of await target.neighbors(contextId, ids)) {
    if (copied(edge.a) && copied(edge.b)) present.set(pairKey(edge.a, edge.b), edge);
  }
  const changes: EdgeChange[] = [];
  for (const [key, edge] of wanted) {
    const there = present.get(key);
    if (
      there &&
      sortedTypes(there.types) === sortedTypes(edge.types) &&
      there.similarity === edge.similarity
    ) {
      continue;
    }
    const remove = (there?.types ?? []).filter((type) => !edge.types.includes(type));
    changes.push({
      a: edge.a,
      b: edge.b,
      add: edge.types,
      ...(remove.length > 0 ? { remove } : {}),
      ...(edge.similarity === undefined ? {} : { similarity: edge.similarity }),
    });
  }
  for (const [key, edge] of present) {
    if (!wanted.has(key)) changes.push({ a: edge.a, b: edge.b, remove: edge.types });
  }
  if (changes.length > 0) await target.changeEdges(contextId, changes);
  return changes.length;
}

const sameSnapshot = (a: SemanticSnapshot, b: SemanticSnapshot): boolean =>
  a.space === b.space && a.documents === b.documents && a.k === b.k && a.createdAt === b.createdAt;

const docText = (doc: SemanticDoc): string =>
  JSON.stringify([doc.memoryId, doc.terms, doc.weights, doc.neighbours]);

/**
 * The semantic kNN state, replaced in one transaction when it differs. Document frequencies are read for the
 * terms the documents hold (terms of the snapshot no current document holds are not reachable through the
 * port; they only matter to a future document using one of them). The target's `changes` counter restarts at 0.
 */
async function copySemantic(
  source: ArchiveStore,
  target: ArchiveStore,
  contextId: string,
  snapshot: SemanticSnapshot,
  ids: readonly string[],
  pageSize: number,
): Promise<boolean> {
  const docs: SemanticDoc[] = [];
  let same = true;
  const there = await target.semantic.getSnapshot(contextId);
  if (!there || !sameSnapshot(there, snapshot)) same = false;
  for (let at = 0; at < ids.length; at += pageSize) {
    const slice = ids.slice(at, at + pageSize);
    const page = await source.semantic.getDocs(contextId, slice);
    if (same) {
      const theirs = await target.semantic.getDocs(contextId, slice);
      if (theirs.length !== page.length || theirs.some((doc, i) => docText(doc) !== docText(page[i]!))) {
        same = false;
      }
    }
    docs.push(...page);
  }
  if (same) return false;
  const terms = new Set<string>();
  for (const doc of docs) for (const term of doc.terms) terms.add(term);
  const df = await source.semantic.documentFrequencies(contextId, [...terms]);
  await target.semantic.replaceAll(
    contextId,
    {
      space: snapshot.space,
      documents: snapshot.documents,
      k: snapshot.k,
      createdAt: snapshot.createdAt,
      df,
    },
    docs,
  );
  return true;
}

async function copyQuestions(source: ArchiveStore, target: ArchiveStore, contextId: string): Promise<number> {
  const questions = await source.listQuestions(contextId);
  if (questions.length === 0) return 0;
  const have = new Map((await target.listQuestions(contextId)).map((q) => [q.id, JSON.stringify(q)]));
  const changed = questions.filter((q) => have.get(q.id) !== JSON.stringify(q));
  if (changed.length > 0) await target.putQuestions(changed);
  return changed.length;
}

/** Global meta (calibrations) and the per-context marks of the copied contexts; values compared first. */
async function copyMeta(
  source: ArchiveStore,
  target: ArchiveStore,
  contexts: ReadonlySet<string>,
  warnings: string[],
): Promise<number> {
  if (!source.listMetaKeys) {
    warnings.push(`the ${source.backend} source cannot list its meta keys; calibrations were not copied`);
    return 0;
  }
  let written = 0;
  for (const key of await source.listMetaKeys()) {
    if (SKIPPED_META.test(key)) continue;
    const owner = CONTEXT_META.exec(key)?.[1];
    if (owner !== undefined && !contexts.has(owner)) continue;
    const value = await source.getMeta(key);
    if (JSON.stringify(await target.getMeta(key)) === JSON.stringify(value)) continue;
    await target.setMeta(key, value);
    written += 1;
  }
  return written;
}
