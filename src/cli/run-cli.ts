import type { Command } from 'commander';
import { EXIT_CODES } from '../errors/error-codes.ts';
import { isGraphmemixError } from '../errors/graphmemix-error.ts';
import { redact, redactText } from '../shell-kit/redact.ts';

/**
 * Runs the program and maps failures to exit codes: 2 for bad input or config, 69 for unavailable models,
 * 74 for store failures, 70 for internal errors. With --json the error is printed as JSON on stderr.
 */
export async function runCli(program: Command, argv: string[]): Promise<void> {
  program.exitOverride();
  program.configureOutput({ writeErr: (text) => process.stderr.write(text) });
  try {
    // GRAPHMEMIX_MEDIA_ROOTS / GRAPHMEMIX_REMOTE_MEDIA: extra media a model may receive, for every command;
    // set before any action (not for --help, which loads none of the library).
    program.hook('preAction', async () => (await import('../index.ts')).allowMediaFromEnv());
    await program.parseAsync(argv);
  } catch (error) {
    process.exitCode = reportError(error, argv.includes('--json'));
  }
}

export function reportError(error: unknown, json: boolean): number {
  const commanderCode = (error as { code?: string }).code;
  if (typeof commanderCode === 'string' && commanderCode.startsWith('commander.')) {
    // help and version are not failures; usage mistakes are bad input.
    if (commanderCode === 'commander.helpDisplayed' || commanderCode === 'commander.version') return 0;
    if (commanderCode === 'commander.help') return 0;
    return 2;
  }
  if (isGraphmemixError(error)) {
    // Redacted like every client-facing error: no credentials, userinfo URLs or upstream bodies.
    if (json) process.stderr.write(`${JSON.stringify({ error: redact(error.toJSON()) })}\n`);
    else process.stderr.write(`error [${error.code}]: ${redactText(error.message)}\n`);
    return EXIT_CODES[error.code];
  }
  const message = redactText(error instanceof Error ? (error.stack ?? error.message) : String(error));
  if (json) process.stderr.write(`${JSON.stringify({ error: { code: 'INTERNAL', message } })}\n`);
  else process.stderr.write(`internal error: ${message}\n`);
  return 70;
}
