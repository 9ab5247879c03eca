// Public API of graphmemix. Shells (CLI, HTTP, MCP, viewer) import only from here.
export * from './core/index.ts';
export type { IngestReport } from './digest/ingest-report.ts';
export * from './errors/index.ts';
export { type EvalOptions, type EvalReport, runEval } from './eval/run-eval.ts';
export { type OpenGraphmemixOptions, openGraphmemix } from './graphmemix.ts';
export type { Graphmemix, MemoryRecordInput, SearchHit } from './graphmemix-api.ts';
export type { ImportFormat } from './importers/importer-spec.ts';
export { createMcpServer } from './mcp/index.ts';
export { type CalibrateOptions, type CalibrateReport, calibratePrizes } from './pipeline/calibrate-prizes.ts';
export { renderPacketText } from './pipeline/evidence-packet.ts';
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
export {
  createModels,
  createOpenAICompatibleChat,
  createOpenAICompatibleEmbedding,
  loadModelConfig,
} from './providers/index.ts';
export type * from './providers/model-spec.ts';
export { type ReadWorkersOption, readPoolOf } from './read-workers/with-read-workers.ts';
export { createServer, type ServerOptions } from './server/create-server.ts';
export { startServer } from './server/start-server.ts';
export * from './types/index.ts';
export { formatForestText, renderViewerHtml, type ViewerQuestion } from './viewer/index.ts';
