import { type Command, Help } from 'commander';

/** One CLI command as the top-level help lists it; its module loads only when the command runs. */
export interface CommandEntry {
  name: string;
  /** What follows the name in the command list, exactly as commander renders it from the real command. */
  term: string;
  description: string;
  load: () => Promise<(program: Command) => void>;
}

/**
 * Every CLI command lives in its own file exporting `register<Name>Command(program)`; add one entry here.
 * Commands are thin: parse flags with the shared schema, call the public API, print text or --json.
 * The name, term and description are repeated here so `graphmemix --help` loads no command module (and so
 * none of the library); test/cli/command-manifest.test.ts checks them against the real registrations.
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'ingest',
    term: '[options] <path>',
    description: 'Import a file or directory into an archive through the one ingest path (views, relations).',
    load: async () => (await import('./ingest-command.ts')).registerIngestCommand,
  },
  {
    name: 'serve',
    term: '[options]',
    description:
      'Serve the HTTP API (and the viewer at /view) over an archive. Keys: GRAPHMEMIX_API_KEYS=key=alice|bob,...',
    load: async () => (await import('./serve-command.ts')).registerServeCommand,
  },
  {
    name: 'mcp',
    term: '[options]',
    description:
      'Run the MCP server (tools add_memory, search_memories, retrieve_evidence, answer_question, delete_memory).',
    load: async () => (await import('./mcp-command.ts')).registerMcpCommand,
  },
  {
    name: 'view',
    term: '[options] <questions...>',
    description:
      'Write the evidence-forest viewer page (one self-contained HTML file) for one or more questions.',
    load: async () => (await import('./view-command.ts')).registerViewCommand,
  },
  {
    name: 'eval',
    term: '[options]',
    description:
      'Evaluate evidence selection (and answers, with models) on a dataset: all selectors on one frozen pool.',
    load: async () => (await import('./eval-command.ts')).registerEvalCommand,
  },
  {
    name: 'retrieve',
    term: '[options] <question>',
    description: 'Build the evidence forest for a question (no reader call).',
    load: async () => (await import('./retrieve-command.ts')).registerRetrieveCommand,
  },
  {
    name: 'ask',
    term: '[options] <question>',
    description: 'Answer a question from the archive: evidence forest, then the reader model.',
    load: async () => (await import('./ask-command.ts')).registerAskCommand,
  },
  {
    name: 'calibrate',
    term: '[options]',
    description:
      'Fit the prize calibration p = sigmoid(a*s + b*v + c) on the stored dev questions and save it in the archive.',
    load: async () => (await import('./calibrate-command.ts')).registerCalibrateCommand,
  },
  {
    name: 'train-ranker',
    term: '[options]',
    description:
      'Fit the listwise-logistic-offline-ranker (prizes of the offline configuration) on the dev-fold questions of one or more archives and write its JSON artifact.',
    load: async () => (await import('./train-ranker-command.ts')).registerTrainRankerCommand,
  },
  {
    name: 'forget',
    term: '[options]',
    description:
      'Delete a whole archive context (a user) or one memory: rows, index entries, vectors, edges and the ' +
      "archive's media files; no copy of the text stays in the database files.",
    load: async () => (await import('./forget-command.ts')).registerForgetCommand,
  },
  {
    name: 'users',
    term: '[options]',
    description:
      "List the archive's users (contexts) with their memory counts, one keyset page at a time (like GET /v1/users).",
    load: async () => (await import('./users-command.ts')).registerUsersCommand,
  },
  {
    name: 'compact',
    term: '[options]',
    description:
      'Rebuild the semantic kNN state (IDF snapshot, vectors, top-k lists, semantic_knn edges) exactly, per context.',
    load: async () => (await import('./compact-command.ts')).registerCompactCommand,
  },
  {
    name: 'vacuum',
    term: '[options]',
    description:
      'Rewrite a SQLite archive so no byte of deleted memories stays in unused page space (explicit maintenance: walks the whole file).',
    load: async () => (await import('./vacuum-command.ts')).registerVacuumCommand,
  },
  {
    name: 'copy',
    term: '[options]',
    description:
      'Copy a whole archive or one context between archives (SQLite file <-> postgres:// URL, either way): ' +
      'records, views, keys, vectors, edges, semantic index, questions, calibrations, media. Idempotent.',
    load: async () => (await import('./copy-command.ts')).registerCopyCommand,
  },
  {
    name: 'migrate',
    term: '[options]',
    description:
      'Bring an archive to the current schema: a SQLite file, or a PostgreSQL database (versioned migrations, row-level security, pgvector when available). Idempotent.',
    load: async () => (await import('./migrate-command.ts')).registerMigrateCommand,
  },
  {
    name: 'export',
    term: '[options]',
    description:
      'Back up an archive or one context as a bundle folder (archive.db, media/, manifest.json): records, ' +
      'views, relations, vectors, semantic index, calibrations, questions and every local medium.',
    load: async () => (await import('./export-command.ts')).registerExportCommand,
  },
  {
    name: 'import',
    term: '[options]',
    description:
      'Restore a bundle made by `graphmemix export` into an archive (created when absent); idempotent. ' +
      'Other data formats go through `graphmemix ingest`.',
    load: async () => (await import('./import-command.ts')).registerImportCommand,
  },
];

/** The command argv names (`graphmemix ingest ...`, `graphmemix help ingest`), if any. */
export function commandNamed(argv: readonly string[]): CommandEntry | undefined {
  const operands = argv.slice(2).filter((arg) => !arg.startsWith('-'));
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  return COMMANDS.find((entry) => entry.name === name);
}

/**
 * Registers the command argv names with its real module and every other command as a light stub (name,
 * term, description), in manifest order, so the top-level help is the same whichever command ran.
 */
export async function registerCommands(program: Command, argv: readonly string[]): Promise<void> {
  const chosen = commandNamed(argv);
  const register = chosen ? await chosen.load() : undefined;
  const terms = new Map<string, string>();
  for (const entry of COMMANDS) {
    if (entry === chosen && register) {
      register(program);
      continue;
    }
    terms.set(entry.name, entry.term);
    program
      .command(entry.name)
      .description(entry.description)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments();
  }
  const help = new Help();
  program.configureHelp({
    subcommandTerm: (command) => {
      const term = terms.get(command.name());
      return term === undefined ? help.subcommandTerm(command) : `${command.name()} ${term}`;
    },
  });
}
