/// <reference types="node" preserve="true" />
// The declarations use Node globals (AbortSignal, fetch, URL, NodeJS.ProcessEnv); @types/node is a dependency
// so a consumer type-checks with no @types of its own.
// Public API of graphmemix (the package's main entry): the library only. The HTTP server, MCP server, eval
// harness and viewer are shells with their own entries (graphmemix/server, /mcp, /eval, /viewer), so importing
// the library loads no hono, MCP SDK, image or OCR module (test/api/library-import-graph.test.ts).
export * from './core/index.ts';
export { compactSemantic } from './digest/incremental/compact-semantic.ts';
export type { DrainFailure } from './digest/incremental/drain-failure-mark.ts';
export { semanticNeedsCompaction } from './digest/incremental/semantic-needs-compaction.ts';
export type { IngestReport } from './digest/ingest-report.ts';
// Media digest bounds and the bounded thumbnail maker shells use to show media (HTTP, MCP); sharp loads on use.
export { thumbnailJpeg } from './digest/media/image-tools.ts';
export { DEFAULT_MEDIA_LIMITS, type MediaLimits } from './digest/media/media-limits.ts';
export { mediaRewrite } from './digest/media-rewrite.ts';
export { finishRelationUpgrades, type RelationUpgradeReport } from './digest/update-relations.ts';
export * from './errors/index.ts';
export { type OpenGraphmemixOptions, openGraphmemix } from './graphmemix.ts';
export type {
  AddMessagesReport,
  CloseOptions,
  Graphmemix,
  ListMemoriesOptions,
  ListUsersOptions,
  MemoryPage,
  MemoryRecordInput,
  SearchHit,
  UpdateReport,
  UserPage,
  UserStats,
  UserSummary,
  WriteOptions,
} from './graphmemix-api.ts';
export { DEFAULT_MAX_PENDING_WRITES } from './graphmemix-write-admission.ts';
export { isImportFormat } from './importers/importer-registry.ts';
export {
  DIALOGUE_SHAPES,
  type DialogueShape,
  IMPORT_FORMATS,
  type ImportFormat,
} from './importers/importer-spec.ts';
export { type CalibrateOptions, type CalibrateReport, calibratePrizes } from './pipeline/calibrate-prizes.ts';
export { renderPacketText } from './pipeline/evidence-packet.ts';
export { OFFLINE_RANKER_NAME, type OfflineRanker } from './pipeline/offline-ranker.ts';
export {
  type CalibrationFit,
  type CalibrationSample,
  calibrationKey,
  fitCalibration,
  nodePrize,
  type PrizeCalibration,
} from './pipeline/prize-calibration.ts';
export { readerMessage } from './pipeline/reader-message.ts';
export type * from './pipeline/retrieval-result.ts';
export { type TrainRankerOptions, trainOfflineRanker } from './pipeline/train-offline-ranker.ts';
export {
  createModels,
  createOpenAICompatibleChat,
  createOpenAICompatibleEmbedding,
  loadModelConfig,
  type ServerLimitsConfig,
} from './providers/index.ts';
export type * from './providers/model-spec.ts';
export { allowMediaFromEnv, allowMediaRoot, allowRemoteMedia } from './providers/to-image-url.ts';
export { type ReadWorkersOption, readPoolOf } from './read-workers/with-read-workers.ts';
export {
  type ConversationMessage,
  type ConversationScope,
  messagesToRecords,
} from './schemas/conversation-schema.ts';
export { questionInputSchema } from './schemas/question-schema.ts';
export { RECORD_LIMITS, type RecordLimits } from './schemas/record-limits.ts';
export {
  MAX_MEMORY_ID_CHARS,
  MAX_SEQUENCE,
  type MemoryPatch,
  memoryPatchSchema,
  memoryRecordInputSchema,
} from './schemas/record-schema.ts';
export type { ContextStats, MemoryFilter, MemoryVersion } from './store/archive-store-spec.ts';
export {
  type CopyArchiveOptions,
  type CopyArchiveReport,
  type CopyContextReport,
  type CopyRewrite,
  copyArchive,
} from './store/copy-archive.ts';
export { describeStore, type StoreDescription, sqliteVectorSupport } from './store/describe-store.ts';
export { type MigrateArchiveResult, migrateArchive } from './store/migrate-archive.ts';
export { openStore } from './store/open-store.ts';
export {
  dbFolderName,
  isInMemoryDb,
  isPostgresUrl,
  parseStoreLocation,
  redactDbUrl,
  type StoreLocation,
} from './store/store-location.ts';
export * from './types/index.ts';
