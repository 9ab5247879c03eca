import { createRequire } from 'node:module';
import { Command } from 'commander';
import { registerCommands } from './commands/index.ts';
import { printVersion, wantsVersion } from './print-version.ts';
import { resolveDbOption } from './resolve-db.ts';
import { runCli } from './run-cli.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const program = new Command();
program
  .name('graphmemix')
  .description(
    'Memory engine for long-lived multimodal agents: query-time evidence forests over your archive.',
  )
  .version(version, '-V, --version');
registerCommands(program);
program.hook('preAction', resolveDbOption);
// --version names the store backend too (it may connect to a server), so it runs before commander's parsing.
if (wantsVersion(process.argv.slice(2))) {
  await runCli(
    new Command().exitOverride().action(() => printVersion(version, process.argv.slice(2))),
    [process.argv[0]!, process.argv[1]!],
  );
} else {
  await runCli(program, process.argv);
}
