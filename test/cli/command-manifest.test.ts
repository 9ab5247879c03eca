import { Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandNamed, registerCommands } from '../../src/cli/commands/index.ts';

/** The program with every command registered from its real module (what the manifest must describe). */
async function fullProgram(): Promise<Command> {
  const program = new Command().name('graphmemix');
  for (const entry of COMMANDS) (await entry.load())(program);
  return program;
}

describe('CLI command manifest (lazy loading)', () => {
  it.each(COMMANDS.map((entry) => [entry.name, entry] as const))(
    '%s: name, term and description match the real command',
    async (_name, entry) => {
      const program = new Command();
      (await entry.load())(program);
      const command = program.commands[0]!;
      expect(command.name()).toBe(entry.name);
      expect(command.description()).toBe(entry.description);
      expect(new Help().subcommandTerm(command)).toBe(`${entry.name} ${entry.term}`);
    },
  );

  it('the top-level help from the light stubs equals the help from the real commands', async () => {
    const light = new Command().name('graphmemix');
    await registerCommands(light, ['node', 'graphmemix', '--help']);
    expect(light.helpInformation()).toBe((await fullProgram()).helpInformation());
    // Same help when one real command is loaded among the stubs.
    const mixed = new Command().name('graphmemix');
    await registerCommands(mixed, ['node', 'graphmemix', 'ingest', 'x', '--format', 'unified']);
    expect(mixed.helpInformation()).toBe(light.helpInformation());
  });

  it('finds the command argv names, also after `help`', () => {
    expect(commandNamed(['node', 'gmx', '--json', 'retrieve', 'q'])?.name).toBe('retrieve');
    expect(commandNamed(['node', 'gmx', 'help', 'serve'])?.name).toBe('serve');
    expect(commandNamed(['node', 'gmx', '--help'])).toBeUndefined();
    expect(commandNamed(['node', 'gmx', 'bogus'])).toBeUndefined();
  });
});
