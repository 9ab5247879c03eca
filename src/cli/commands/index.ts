import type { Command } from 'commander';

/**
 * Every CLI command lives in its own file exporting `register<Name>Command(program)`; add one line here.
 * Commands are thin: parse flags with the shared schema, call the public API, print text or --json.
 */
export function registerCommands(_program: Command): void {}
