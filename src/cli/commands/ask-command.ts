import type { Command } from 'commander';
import { toApiAnswer } from '../../shell-kit/api-serializers.ts';
import { addQuestionFlags, formatResultText, type QuestionFlags, runQuestion } from './retrieve-command.ts';

export function registerAskCommand(program: Command): void {
  addQuestionFlags(
    program
      .command('ask')
      .description('Answer a question from the archive: evidence forest, then the reader model.'),
  )
    .addHelpText(
      'after',
      `
Needs a reader model (config file or GRAPHMEMIX_* environment); without one it prints the evidence and
exits 0 with "answered": false.
Example:
  $ graphmemix ask "When is the revised deadline?" --db archive.db --context alice`,
    )
    .action(async (question: string, flags: QuestionFlags) => {
      const result = await runQuestion(question, flags, (gm, call, contextId) =>
        gm.answer(contextId, call.question, call.options),
      );
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(toApiAnswer(flags.context, result), null, 2)}\n`);
        return;
      }
      const answer = result.answered
        ? `answer: ${result.answer}`
        : 'answer: (none: no reader model configured or the reader failed)';
      process.stdout.write(`${answer}\n\n${await formatResultText(result)}\n`);
    });
}
