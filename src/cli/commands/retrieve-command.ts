import type { Command } from 'commander';
import { parseInput } from '../../api-schemas/parse-input.ts';
import { retrieveSchema } from '../../api-schemas/route-schemas.ts';
import { toQuestionCall } from '../../api-schemas/to-pipeline-input.ts';
import type { RetrievalResult } from '../../pipeline/retrieval-result.ts';
import { toApiRetrieval } from '../../shell-kit/api-serializers.ts';
import { requireArchive, requireContext } from '../archive-checks.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

export interface QuestionFlags {
  db: string;
  context: string;
  k?: string;
  instruction?: string;
  verifiers?: string;
  config?: string;
  json?: boolean;
}

/** Shared flags of `retrieve` and `ask`. */
export function addQuestionFlags(command: Command): Command {
  return command
    .argument('<question>', 'the question')
    .option(DB_FLAG, DB_FLAG_HELP)
    .requiredOption('--context <id>', 'archive context (user id) to ask')
    .option('--k <n>', 'evidence budget K (default 10)')
    .option('--instruction <text>', 'instruction for the reader ("Answer in one word.")')
    .option('--verifiers <mode>', 'auto | model | offline | none (default auto)')
    .option('--config <file>', 'model config file (else $GRAPHMEMIX_CONFIG, ./graphmemix.config.json, env)')
    .option('--json', 'print the full result as JSON');
}

/** Validates the flags with the same schema as HTTP and MCP, then runs the question. */
export async function runQuestion<T>(
  question: string,
  flags: QuestionFlags,
  run: (
    gm: import('../../graphmemix-api.ts').Graphmemix,
    call: ReturnType<typeof toQuestionCall>,
    contextId: string,
  ) => Promise<T>,
): Promise<T> {
  const input = parseInput(retrieveSchema, {
    user_id: flags.context,
    question,
    ...(flags.k === undefined ? {} : { k: Number(flags.k) }),
    ...(flags.instruction === undefined ? {} : { instruction: flags.instruction }),
    ...(flags.verifiers === undefined ? {} : { verifiers: flags.verifiers }),
  });
  requireArchive(flags.db);
  const { openShellGraphmemix } = await import('../../shell-kit/open-shell-graphmemix.ts');
  // One question: starting reader threads would only add their start-up time.
  const gm = await openShellGraphmemix({
    db: flags.db,
    readWorkers: 0,
    ...(flags.config ? { config: flags.config } : {}),
  });
  try {
    await requireContext(gm, input.user_id, flags.db);
    return await run(gm, toQuestionCall(input), input.user_id);
  } finally {
    await gm.close();
  }
}

/** Readable summary: the forest as indented trees, then flags, components and stage timings. */
export async function formatResultText(result: RetrievalResult): Promise<string> {
  const { formatForestText } = await import('../../viewer/format-forest-text.ts');
  const timings = Object.entries(result.trace.timings)
    .map(([stage, ms]) => `${stage} ${ms.toFixed(1)} ms`)
    .join(', ');
  return [
    `${result.evidence.length} memories in ${result.forest.trees.length} tree(s), from a pool of ${result.pool.length}`,
    formatForestText(result),
    `components: ${Object.entries(result.trace.components)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
    `calibration: ${result.trace.calibration.key}`,
    ...(result.trace.calibration.fitted === false
      ? [
          "  unfitted for this configuration (the paper's values, another score scale): see graphmemix calibrate --help",
        ]
      : []),
    `timings: ${timings} (total ${result.trace.totalMs.toFixed(1)} ms); tokens ${result.trace.usage.totalTokens}`,
  ].join('\n');
}

export function registerRetrieveCommand(program: Command): void {
  addQuestionFlags(
    program.command('retrieve').description('Build the evidence forest for a question (no reader call).'),
  )
    .addHelpText(
      'after',
      `
Example:
  $ graphmemix retrieve "When is the revised deadline?" --db archive.db --context alice --k 10`,
    )
    .action(async (question: string, flags: QuestionFlags) => {
      const result = await runQuestion(question, flags, (gm, call, contextId) =>
        gm.retrieve(contextId, call.question, call.options),
      );
      // --json: the HTTP API's shape (snake_case), so scripts read the CLI and the server alike.
      process.stdout.write(
        `${flags.json ? JSON.stringify(toApiRetrieval(flags.context, result), null, 2) : await formatResultText(result)}\n`,
      );
    });
}
