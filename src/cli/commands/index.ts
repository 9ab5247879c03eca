import type { Command } from 'commander';
import { registerAskCommand } from './ask-command.ts';
import { registerCalibrateCommand } from './calibrate-command.ts';
import { registerCompactCommand } from './compact-command.ts';
import { registerEvalCommand } from './eval-command.ts';
import { registerForgetCommand } from './forget-command.ts';
import { registerIngestCommand } from './ingest-command.ts';
import { registerMcpCommand } from './mcp-command.ts';
import { registerRetrieveCommand } from './retrieve-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerTrainRankerCommand } from './train-ranker-command.ts';
import { registerViewCommand } from './view-command.ts';

/**
 * Every CLI command lives in its own file exporting `register<Name>Command(program)`; add one line here.
 * Commands are thin: parse flags with the shared schema, call the public API, print text or --json.
 */
export function registerCommands(program: Command): void {
  registerIngestCommand(program);
  registerServeCommand(program);
  registerMcpCommand(program);
  registerViewCommand(program);
  registerEvalCommand(program);
  registerRetrieveCommand(program);
  registerAskCommand(program);
  registerCalibrateCommand(program);
  registerTrainRankerCommand(program);
  registerForgetCommand(program);
  registerCompactCommand(program);
}
