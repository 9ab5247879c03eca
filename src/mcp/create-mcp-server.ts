import { createRequire } from 'node:module';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { MAX_INPUT_VALUES } from '../api-schemas/input-values.ts';
import {
  addMemoriesSchema,
  answerSchema,
  memoryRefSchema,
  retrieveSchema,
  searchSchema,
  userRefSchema,
} from '../api-schemas/route-schemas.ts';
import { toMemoryFilter, toQuestionCall, toRecordInputs, toScope } from '../api-schemas/to-pipeline-input.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import type { RetrievalResult } from '../pipeline/retrieval-result.ts';
import { toApiEvidence, toApiIngestReport, toApiSearch } from '../shell-kit/api-serializers.ts';
import { confineRecordMedia } from '../shell-kit/confine-record-media.ts';
import { ALL_USERS, assertScope, type UserScope } from '../shell-kit/user-scope.ts';
import { evidenceImages } from './evidence-images.ts';
import { registerMemoryVerbTools } from './register-memory-verb-tools.ts';
import { runTool, toolImages } from './run-tool.ts';
import { codeSdkToolErrors } from './sdk-tool-errors.ts';

export interface McpServerOptions {
  /**
   * The users these tools may touch (default: every user, for a local stdio process started by its owner;
   * `graphmemix mcp --users alice|bob` restricts it, and over HTTP the caller's key sets it). Any other
   * user_id answers NOT_FOUND, exactly like a missing memory.
   */
  scope?: UserScope;
  /** The archive's media store: add_memory may reference files only in `<mediaDir>/<user_id>/`. */
  mediaDir?: string;
  /**
   * Takes a slot of the caller's question share for a question tool (search, retrieve, answer), returning its
   * release; throws BUSY when the share is taken (MCP over HTTP: QuestionShare, src/shell-kit/question-share.ts).
   */
  questionSlot?: () => () => void;
  /**
   * The caller's lane (MCP over HTTP: the key) in the read workers' queue and the writer's
   * (RetrieveOptions.lane, WriteOptions.lane).
   */
  lane?: string;
}

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * The MCP face of graphmemix: six tools whose input schemas are the shared route schemas (same fields as the
 * HTTP bodies). Every tool takes `user_id` and touches only that user's archive. Tool failures come back as
 * `isError` results carrying the stable error code, so an agent can correct its call.
 */
export function createMcpServer(graphmemix: Graphmemix, options: McpServerOptions = {}): McpServer {
  // The SDK counts a call's argument values before its schema parse, as parseInput does for HTTP bodies.
  const server = new McpServer({ name: 'graphmemix', version }, { maxToolInputElements: MAX_INPUT_VALUES });
  codeSdkToolErrors(server);
  const scope = options.scope ?? ALL_USERS;
  const allow = (userId: string, notFound?: string) => assertScope(scope, userId, notFound);
  const asker = options.lane === undefined ? {} : { lane: options.lane };
  const { mediaDir } = options;
  // A question tool holds a slot of its caller's share while it runs (none over stdio: one client).
  const runQuestion: typeof runTool = (work) =>
    runTool(async () => {
      const release = options.questionSlot?.();
      try {
        return await work();
      } finally {
        release?.();
      }
    });

  server.registerTool(
    'add_memory',
    {
      title: 'Add memories',
      description:
        "Store one or more memories in the user's long-term archive (upsert by id). Use it for facts, events, " +
        'messages or notes worth recalling later. Each memory needs an `id` unique for the user and usually ' +
        '`text`; add `timestamp` (ISO 8601) when the time is known, it powers time questions. Or send a ' +
        'conversation as `messages` ({role, content, name?, timestamp?}): ids and rounds are assigned. ' +
        'Top-level `agent_id`, `run_id`, `metadata` apply to every memory. The reply lists how many were ' +
        'imported or updated and any rejected with the reason.',
      inputSchema: addMemoriesSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    (input) =>
      runTool(async () => {
        allow(input.user_id);
        if (input.messages !== undefined) {
          const report = await graphmemix.addMessages(input.user_id, input.messages, toScope(input), asker);
          return { ...toApiIngestReport(input.user_id, report), memory_ids: report.memoryIds };
        }
        const records = toRecordInputs(input);
        await confineRecordMedia(records, { userId: input.user_id, mediaDir: options.mediaDir });
        const report = await graphmemix.addMemories(input.user_id, records, asker);
        return toApiIngestReport(input.user_id, report);
      }),
  );

  server.registerTool(
    'search_memories',
    {
      title: 'Search memories',
      description:
        "Fast keyword/semantic search over the user's memories, no reasoning over links between them. Use it " +
        'to look up a specific memory or check whether something was stored. For answering a question from ' +
        'the history use retrieve_evidence instead. `flags` names what degraded the hits (lexical_search_bounded: ' +
        'a question of words nearly every memory holds hit the search work bound; add a rarer word).',
      inputSchema: searchSchema,
      annotations: { readOnlyHint: true },
    },
    // extra.signal aborts when the client cancels the call or the transport closes: model calls stop with it.
    (input, extra) =>
      runQuestion(async () => {
        allow(input.user_id);
        const found = await graphmemix.searchMemories(input.user_id, input.query, {
          ...(input.k === undefined ? {} : { k: input.k }),
          ...(input.filters === undefined ? {} : { filter: toMemoryFilter(input.filters) }),
          ...asker,
          signal: extra.signal,
        });
        return toApiSearch(input.user_id, found);
      }),
  );

  server.registerTool(
    'retrieve_evidence',
    {
      title: 'Retrieve evidence for a question',
      description:
        'Find the small set of memories that together answer a question about the user history, including ' +
        'memories linked to the obvious hits (the same conversation, a later email revising a plan, a photo ' +
        'taken at that event). Returns the evidence in reading order, each with date, text and how it links ' +
        'to its parent, plus `packet_text` ready to paste into your prompt. Use this before answering.',
      inputSchema: retrieveSchema,
      annotations: { readOnlyHint: true },
    },
    (input, extra) =>
      runQuestion(async () => {
        allow(input.user_id);
        const { question, options } = toQuestionCall(input);
        const result = await graphmemix.retrieve(input.user_id, question, {
          ...options,
          ...asker,
          signal: extra.signal,
        });
        return withImages(evidenceReply(input.user_id, result), result, input.user_id, mediaDir);
      }),
  );

  server.registerTool(
    'answer_question',
    {
      title: 'Answer a question from memory',
      description:
        "Answer a question from the user's history with the configured reader model, returning the answer " +
        'and the evidence it used. If no reader model is configured `answered` is false: then read the ' +
        'evidence yourself (or call retrieve_evidence).',
      inputSchema: answerSchema,
      annotations: { readOnlyHint: true },
    },
    (input, extra) =>
      runQuestion(async () => {
        allow(input.user_id);
        const { question, options } = toQuestionCall(input);
        const result = await graphmemix.answer(input.user_id, question, {
          ...options,
          ...asker,
          signal: extra.signal,
        });
        return withImages(
          { answer: result.answer, answered: result.answered, ...evidenceReply(input.user_id, result) },
          result,
          input.user_id,
          mediaDir,
        );
      }),
  );

  server.registerTool(
    'delete_memory',
    {
      title: 'Delete a memory',
      description:
        "Permanently delete one memory (by id) from the user's archive, with its links. Use when the user " +
        'asks to forget something or a stored memory is wrong. Fails with NOT_FOUND if the id does not exist.',
      inputSchema: memoryRefSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    },
    (input) =>
      runTool(async () => {
        allow(input.user_id, `memory ${input.memory_id} not found for this user`);
        const deleted = await graphmemix.deleteMemory(input.user_id, input.memory_id, asker);
        if (!deleted)
          throw new GraphmemixError('NOT_FOUND', `memory ${input.memory_id} not found for this user`);
        return { user_id: input.user_id, memory_id: input.memory_id, deleted: true };
      }),
  );

  // One verb under two names: delete_user, and forget_user as the issue tracker and mem0 users look for it.
  const forgetTools = [
    {
      name: 'delete_user',
      title: "Delete a user's whole archive",
      description:
        'Permanently delete EVERY memory of the user, with links, questions and uploaded media; nothing of the ' +
        'text stays in the database files. Use only when the user asks to be forgotten entirely. Fails with ' +
        'NOT_FOUND if the user has no archive.',
    },
    {
      name: 'forget_user',
      title: 'Forget a user entirely',
      description:
        'Same as delete_user: permanently delete every memory of the user with links, history, questions and ' +
        'uploaded media, and report the counts removed.',
    },
  ];
  for (const tool of forgetTools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: userRefSchema,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      },
      (input) =>
        runTool(async () => {
          allow(input.user_id);
          return forgetUser(input.user_id);
        }),
    );
  }

  registerMemoryVerbTools(server, graphmemix, allow, scope, runQuestion, asker, options.mediaDir);

  async function forgetUser(userId: string): Promise<Record<string, unknown>> {
    const report = await graphmemix.deleteUser(userId, asker);
    if (!report.deleted) throw new GraphmemixError('NOT_FOUND', `user ${userId} has no archive`);
    return { user_id: userId, deleted: true, memories: report.memories, media_files: report.mediaFiles };
  }

  return server;
}

/** The compact evidence view an agent needs; the full pool and trace stay with the HTTP API and viewer. */
function evidenceReply(userId: string, result: RetrievalResult): Record<string, unknown> {
  return {
    user_id: userId,
    question: result.question.prompt,
    evidence: result.evidence.map(toApiEvidence),
    packet_text: result.packetText,
    trees: result.forest.trees.length,
    flags: result.trace.flags,
  };
}

/** Replies that also carry image content (the evidence's images and frames; see evidence-images.ts). */

async function withImages(
  value: Record<string, unknown>,
  result: RetrievalResult,
  userId: string,
  mediaDir: string | undefined,
): Promise<Record<string, unknown>> {
  const { images, of } = await evidenceImages(result, userId, mediaDir);
  // Which memory each image content block shows, in the order they follow the text block.
  const reply = { ...value, images: of.map((memoryId) => ({ memory_id: memoryId })) };
  toolImages.set(reply, images);
  return reply;
}
