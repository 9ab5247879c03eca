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
// --version names the store backend too (it may connect to a server), so it runs before commander's parsing.
const args = process.argv.slice(2);
if (args[0] === '-V' || args[0] === '--version') {
  const { printVersion } = await import('./print-version.ts');
  await runCli(
    new Command().exitOverride().action(() => printVersion(version, args)),
    process.argv.slice(0, 2),
  );
} else {
  await registerCommands(program, process.argv);
  // A command's missing --db comes from $GRAPHMEMIX_DB or the config file (loaded only when a command runs).
  program.hook('preAction', async (self, command) =>
    (await import('./resolve-db.ts')).resolveDbOption(self, command),
  );
  await runCli(program, process.argv);
}
