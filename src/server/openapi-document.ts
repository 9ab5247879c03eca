import { z } from 'zod';
import {
  addMemoriesSchema,
  answerSchema,
  filtersSchema,
  importSchema,
  listMemoriesSchema,
  listUsersSchema,
  memoryHistorySchema,
  memoryRefSchema,
  retrieveSchema,
  searchSchema,
  updateMemorySchema,
  viewSchema,
} from '../api-schemas/route-schemas.ts';

type JsonObject = Record<string, unknown>;

/** The responses with an example body on the 200 answer. */
function withExample(responses: JsonObject, example: unknown): JsonObject {
  const ok = responses[200] as { content: { 'application/json': JsonObject } };
  return {
    ...responses,
    200: { ...ok, content: { 'application/json': { ...ok.content['application/json'], example } } },
  };
}

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the routes validate with (z.toJSONSchema),
 * so the document cannot drift from what the server accepts.
 */
export function buildOpenApiDocument(version: string): JsonObject {
  const body = (schema: z.ZodType): JsonObject => ({
    required: true,
    content: { 'application/json': { schema: jsonSchema(schema) } },
  });
  const query = (schema: z.ZodObject, inPath: string[] = []): JsonObject[] =>
    Object.entries((jsonSchema(schema).properties ?? {}) as Record<string, JsonObject>).map(([name, s]) => ({
      name: inPath.includes(name) ? 'id' : name,
      in: inPath.includes(name) ? 'path' : 'query',
      required: ((jsonSchema(schema).required ?? []) as string[]).includes(name),
      schema: s,
    }));
  const json = (description: string): JsonObject => ({
    200: { description, content: { 'application/json': { schema: { type: 'object' } } } },
    400: errorRef,
    401: errorRef,
    403: errorRef,
    404: { ...errorRef, description: 'Not found: also any user the key is not bound to' },
    413: errorRef,
    415: errorRef,
  });
  const addMultipart = jsonSchema(addMemoriesSchema);
  return {
    openapi: '3.1.0',
    info: {
      title: 'graphmemix API',
      version,
      description:
        'Memory engine for agents: add memories per user, then retrieve query-time evidence forests. ' +
        'Every call is scoped by user_id; send `Authorization: Bearer <key>` unless the server runs in open mode. ' +
        'A key touches only the users it is bound to; any other user answers 404.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                details: { type: 'object' },
              },
            },
          },
        },
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/v1/memories': {
        get: {
          summary:
            'List memories in keyset pages ({"memories","next_cursor"}); filters as query parameters (metadata as a JSON object). A filtered page does bounded work and may hold fewer memories than the limit, or none, and still have a next_cursor: the list ends where next_cursor is null',
          parameters: [
            ...query(listMemoriesSchema.omit({ filters: true })),
            ...query(filtersSchema).map((parameter) =>
              parameter.name === 'metadata'
                ? { ...parameter, schema: { type: 'string', description: 'JSON object of scalar values' } }
                : parameter,
            ),
          ],
          responses: json('{"memories":[...],"next_cursor"}'),
        },
        post: {
          summary:
            'Add or update memories (JSON `memories`, or a conversation as `messages`, or multipart with files named asset:<memory id>)',
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: addMultipart },
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['user_id', 'memories'],
                  properties: {
                    user_id: { type: 'string' },
                    memories: { type: 'string', description: 'JSON array of memories' },
                  },
                  additionalProperties: { type: 'string', format: 'binary' },
                },
              },
            },
          },
          responses: json('Ingest report'),
        },
      },
      '/v1/memories/import': {
        post: {
          summary: 'Import a file in a supported format into the user archive',
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  ...jsonSchema(importSchema),
                  properties: {
                    ...((jsonSchema(importSchema).properties ?? {}) as JsonObject),
                    file: { type: 'string', format: 'binary' },
                  },
                },
              },
            },
          },
          responses: json('Ingest report'),
        },
      },
      '/v1/memories/{id}': {
        patch: {
          summary:
            'Update a memory: the given record fields replace the stored ones; the old version stays in its history',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: body(updateMemorySchema.omit({ memory_id: true })),
          responses: { ...json('{"memory","version","changed"}'), 404: errorRef },
        },
        get: {
          summary: 'Get one memory',
          parameters: query(memoryRefSchema, ['memory_id']),
          responses: { ...json('The memory'), 404: errorRef },
        },
        delete: {
          summary: 'Delete one memory (with its views and edges)',
          parameters: query(memoryRefSchema, ['memory_id']),
          responses: { ...json('Deleted'), 404: errorRef },
        },
      },
      '/v1/memories/{id}/history': {
        get: {
          summary:
            'The versions of a memory, oldest first, each with recorded_at and event_time, in keyset pages (pass next_cursor back as cursor; the current version ends the last page, whose next_cursor is null)',
          parameters: query(memoryHistorySchema, ['memory_id']),
          responses: {
            ...json('{"versions":[{"version","recorded_at","event_time","memory"}],"next_cursor"}'),
            404: errorRef,
          },
        },
      },
      '/v1/users': {
        get: {
          summary:
            'The users this key may read, with their memory counts, in keyset pages by user id (pass next_cursor back as cursor; null on the last page)',
          parameters: query(listUsersSchema),
          responses: withExample(json('{"users":[{"user_id","memories"}],"next_cursor"}'), {
            users: [
              { user_id: 'ann', memories: 120 },
              { user_id: 'bob', memories: 7 },
            ],
            next_cursor: 'WyJ1IiwiYm9iIl0',
          }),
        },
      },
      '/v1/users/{user_id}': {
        get: {
          summary: "A user's kept counts: memories, by kind, edges by type, last write",
          parameters: [{ name: 'user_id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            ...json(
              '{"user_id","memories","by_kind","edges","last_write","knn_approximate","semantic_pending"}',
            ),
            404: errorRef,
          },
        },
        delete: {
          summary:
            'Forget a whole user: memories, views, vectors, edges, questions and uploaded media; no copy of the text stays in the store files',
          parameters: [{ name: 'user_id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { ...json('Deleted, with counts'), 404: errorRef },
        },
      },
      '/v1/search': {
        post: {
          summary:
            'Flat multi-view search; flags name what degraded it (lexical_search_bounded: a view kind hit the lexical work bound, its hits the best within it; dense_retrieval_failed)',
          requestBody: body(searchSchema),
          responses: json('{"results":[{"memory_id","score","best_view","memory"}],"flags":[]}'),
        },
      },
      '/v1/retrieve': {
        post: {
          summary:
            'Evidence forest and packet for a question. Versions of one fact (relation supersedes) are read oldest first; each carries recorded_at next to its event date and version {status: current | superseded, supersedes, superseded_by}',
          requestBody: body(retrieveSchema),
          responses: withExample(json('Evidence, forest, pool, verified edges, trace'), {
            user_id: 'ann',
            question: 'When is the dentist appointment now?',
            evidence: [
              {
                rank: 1,
                memory_id: 'appt',
                kind: 'note',
                date: '2024-05-20T10:00:00Z',
                text: 'Dentist appointment with Dr. Ruiz on Monday June 3 at 9:00',
                recorded_at: '2024-05-20T10:00:03.120Z',
                version: { status: 'superseded', supersedes: [], superseded_by: ['moved'] },
              },
              {
                rank: 2,
                memory_id: 'moved',
                kind: 'note',
                date: '2024-05-28T16:30:00Z',
                text: 'Update: the dentist appointment moved to Thursday June 6 at 11:00',
                recorded_at: '2024-05-28T16:30:01.004Z',
                version: { status: 'current', supersedes: ['appt'], superseded_by: [] },
              },
            ],
          }),
        },
      },
      '/v1/answer': {
        post: {
          summary: 'Retrieve then answer with the reader model',
          requestBody: body(answerSchema),
          responses: json('Answer with its evidence'),
        },
      },
      '/v1/health': {
        get: {
          summary: 'Liveness, version, store backend (sqlite | memory | postgres) and vector support',
          security: [],
          responses: json('ok'),
        },
      },
      '/v1/media/{asset_id}': {
        get: {
          summary:
            'Bytes of one stored media file of a memory (asset, video frame, page image); Range supported',
          parameters: [
            { name: 'asset_id', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'user_id', in: 'query', required: true, schema: { type: 'string' } },
            { name: 'size', in: 'query', required: false, schema: { enum: ['original', 'thumb'] } },
          ],
          responses: {
            200: { description: 'the file' },
            206: { description: 'one byte range' },
            401: errorRef,
            404: errorRef,
            416: { description: 'range not satisfiable' },
          },
        },
      },
      '/view': {
        get: {
          summary: 'Evidence-forest viewer page for a question (HTML)',
          parameters: query(viewSchema),
          responses: {
            200: { description: 'HTML page', content: { 'text/html': {} } },
            400: errorRef,
            401: errorRef,
          },
        },
      },
    },
  };
}

const errorRef = {
  description: 'Error with a stable code',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

function jsonSchema(schema: z.ZodType): JsonObject {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  }) as JsonObject;
  return rest;
}
