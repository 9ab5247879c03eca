import { createRequire } from 'node:module';
import { Command } from 'commander';
import { registerCommands } from './commands/index.ts';
import { runCli } from './run-cli.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const program = new Command();
program
  .name('graphmemix')
  .description(
    'Memory engine for long-lived multimodal agents: query-time evidence forests over your archive.',
  )
  .version(version, '-V, --version');
await registerCommands(program, process.argv);
await runCli(program, process.argv);
