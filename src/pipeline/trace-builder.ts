import type { TokenUsage } from '../providers/model-spec.ts';
import type { ModelCallRecord, PipelineFlag, PipelineTrace, StageName } from './retrieval-result.ts';

/** Milliseconds since an arbitrary origin; injected so tests can drive time (default `performance.now`). */
export type Clock = () => number;

export const systemClock: Clock = () => performance.now();

/**
 * The ONE place a question's trace is assembled: stage timings (each `lap` charges the time since the previous
 * lap to a stage), flags, model calls and their summed usage. Stages report into it; nothing else keeps
 * timing state, so an injected clock makes every timing deterministic.
 */
export class TraceBuilder {
  readonly timings: PipelineTrace['timings'] = {};
  readonly flags = new Set<PipelineFlag>();
  readonly modelCalls: ModelCallRecord[] = [];
  private readonly started: number;
  private last: number;

  constructor(private readonly clock: Clock = systemClock) {
    this.started = clock();
    this.last = this.started;
  }

  /** Charges the time since the previous lap (or the start) to `stage`. */
  lap(stage: StageName): void {
    const now = this.clock();
    this.timings[stage] = (this.timings[stage] ?? 0) + (now - this.last);
    this.last = now;
  }

  flag(flag: PipelineFlag, when = true): void {
    if (when) this.flags.add(flag);
  }

  call(record: ModelCallRecord): void {
    this.modelCalls.push(record);
  }

  /** The finished trace; `components` and `calibration` come from the stages that chose them. */
  build(parts: Pick<PipelineTrace, 'components' | 'calibration'>): PipelineTrace {
    return {
      timings: this.timings,
      totalMs: this.clock() - this.started,
      modelCalls: this.modelCalls,
      usage: sumUsage(this.modelCalls),
      flags: [...this.flags],
      components: parts.components,
      calibration: parts.calibration,
    };
  }
}

export function sumUsage(calls: readonly { usage: TokenUsage }[]): TokenUsage {
  const total: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for (const call of calls) {
    total.promptTokens += call.usage.promptTokens;
    total.completionTokens += call.usage.completionTokens;
    total.totalTokens += call.usage.totalTokens;
  }
  return total;
}
