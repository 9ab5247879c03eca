// Public API of graphmemix. Shells (CLI, HTTP, MCP, viewer) import only from here.
export * from './core/index.ts';
export * from './errors/index.ts';
export { type OpenGraphmemixOptions, openGraphmemix } from './graphmemix.ts';
export type { Graphmemix, MemoryRecordInput, SearchHit } from './graphmemix-api.ts';
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
export * from './types/index.ts';
