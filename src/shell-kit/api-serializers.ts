import type { IngestReport } from '../digest/ingest-report.ts';
import type {
  MemoryHistoryPage,
  MemoryPage,
  SearchHit,
  SearchResult,
  UpdateReport,
  UserPage,
  UserStats,
} from '../graphmemix-api.ts';
import type { AnswerResult, EvidenceItem, RetrievalResult } from '../pipeline/retrieval-result.ts';
import { redact } from './redact.ts';

/**
 * Wire shapes of the API and MCP tools. Top-level fields are snake_case like the request bodies; the
 * nested solver structures (forest, pool, trace) keep the library's field names so they can be read with
 * the library's types.
 */
export function toApiEvidence(item: EvidenceItem): Record<string, unknown> {
  return {
    rank: item.rank,
    memory_id: item.memoryId,
    ...(item.sourceId === undefined ? {} : { source_id: item.sourceId }),
    kind: item.kind,
    ...(item.date === undefined ? {} : { date: item.date }),
    ...(item.location === undefined ? {} : { location: item.location }),
    ...(item.speaker === undefined ? {} : { speaker: item.speaker }),
    text: item.text,
    media: item.media,
    tree: item.tree,
    ...(item.parent === undefined
      ? {}
      : {
          parent: {
            memory_id: item.parent.memoryId,
            relation_types: item.parent.relationTypes,
            role: item.parent.role,
            weight: item.parent.weight,
          },
        }),
    prize: item.prize,
    retrieval_score: item.retrievalScore,
    verifier_score: item.verifierScore,
    ...(item.recordedAt === undefined ? {} : { recorded_at: item.recordedAt }),
    ...(item.version === undefined
      ? {}
      : {
          version: {
            status: item.version.status,
            supersedes: item.version.supersedes,
            superseded_by: item.version.supersededBy,
          },
        }),
  };
}

export function toApiRetrieval(userId: string, result: RetrievalResult): Record<string, unknown> {
  return {
    user_id: userId,
    question: result.question.prompt,
    evidence: result.evidence.map(toApiEvidence),
    packet_text: result.packetText,
    forest: result.forest,
    pool: result.pool,
    verified_edges: result.verifiedEdges,
    // Model-call failures carry endpoint URLs and upstream messages: redacted before they leave.
    trace: redact(result.trace),
  };
}

export function toApiAnswer(userId: string, result: AnswerResult): Record<string, unknown> {
  return { answer: result.answer, answered: result.answered, ...toApiRetrieval(userId, result) };
}

export function toApiSearchHit(hit: SearchHit): Record<string, unknown> {
  return { memory_id: hit.memoryId, score: hit.score, best_view: hit.bestView, memory: hit.record };
}

/** POST /v1/search and MCP search_memories: the hits and what degraded them (`flags`, usually empty). */
export function toApiSearch(userId: string, result: SearchResult): Record<string, unknown> {
  return { user_id: userId, results: result.hits.map(toApiSearchHit), flags: result.flags };
}

export function toApiIngestReport(userId: string, report: IngestReport): Record<string, unknown> {
  return {
    user_id: userId,
    imported: report.imported,
    updated: report.updated,
    unchanged: report.unchanged,
    skipped: report.skipped,
    rejected: redact(report.rejected),
    warnings: redact(report.warnings),
    assets: report.assets,
    questions: report.questions,
    seconds: report.seconds,
  };
}

/** True when a write request changed nothing and rejected something: the caller sent only bad records. */
export function allRejected(report: IngestReport): boolean {
  return report.rejected.length > 0 && report.imported + report.updated + report.unchanged === 0;
}

export function toApiMemoryPage(userId: string, page: MemoryPage): Record<string, unknown> {
  return { user_id: userId, memories: page.memories, next_cursor: page.nextCursor ?? null };
}

/** GET /v1/users, MCP list_users: `next_cursor` null on the last page. */
export function toApiUserPage(page: UserPage): Record<string, unknown> {
  return {
    users: page.users.map((user) => ({ user_id: user.userId, memories: user.memories })),
    next_cursor: page.nextCursor ?? null,
  };
}

export function toApiUpdate(userId: string, report: UpdateReport): Record<string, unknown> {
  return { user_id: userId, memory: report.memory, version: report.version, changed: report.changed };
}

/**
 * A page of versions oldest first, each with the time it was recorded (`recorded_at`) and its event time; the
 * current version ends the last page (`next_cursor` null).
 */
export function toApiHistory(
  userId: string,
  memoryId: string,
  page: MemoryHistoryPage,
): Record<string, unknown> {
  return {
    user_id: userId,
    memory_id: memoryId,
    versions: page.versions.map((version) => ({
      version: version.version,
      recorded_at: version.record.recordedAt ?? null,
      event_time: version.record.timestamp ?? null,
      memory: version.record,
    })),
    next_cursor: page.nextCursor ?? null,
  };
}

export function toApiUserStats(stats: UserStats): Record<string, unknown> {
  return {
    user_id: stats.userId,
    memories: stats.memories,
    by_kind: stats.byKind,
    edges: stats.edges,
    last_write: stats.lastWrite ?? null,
    // Why the user's graph is not the exact rebuild's, and whose kNN update is still waiting (and why); the
    // errors in them are a store's or an endpoint's messages, redacted like every error that leaves.
    knn_approximate: redact(stats.knnApproximate ?? null),
    semantic_pending:
      stats.semanticPending === undefined
        ? null
        : { drain_failure: redact(apiDrainFailure(stats.semanticPending.drainFailure)) },
  };
}

/** A failed after-write drain as the public API gives it (UserStats.semanticPending.drainFailure). */
type DrainFailure = NonNullable<UserStats['semanticPending']>['drainFailure'];

function apiDrainFailure(failure: DrainFailure): Record<string, unknown> | null {
  if (failure === undefined) return null;
  return {
    error: failure.error,
    since: failure.since,
    at: failure.at,
    attempts: failure.attempts,
    next_retry_at: failure.nextRetryAt ?? null,
  };
}
