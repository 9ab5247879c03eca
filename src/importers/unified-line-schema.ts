import { z } from 'zod';
import { memoryRecordInputSchema } from '../schemas/record-schema.ts';

/**
 * The unified archive format (JSONL), one object per line, told apart by `type`:
 * - `{"type":"context","id":"alice"}` starts a context: the records after it (until the next context line)
 *   belong to it unless they name their own `contextId`;
 * - `{"type":"memory", ...record}`: a MemoryRecordInput (src/schemas/record-schema.ts);
 * - `{"type":"question", ...}`: an evaluation question stored with the archive.
 * docs/archive-format.md documents it; schema/unified-archive.schema.json is generated from `unifiedLineSchema`
 * by scripts/write-json-schema.ts.
 */

const nonEmptyString = z.string().min(1);

export const questionInputSchema = z.strictObject({
  id: nonEmptyString,
  /** Accepted so exported questions round-trip; resolved like a record's context. */
  contextId: z.string().optional(),
  prompt: nonEmptyString,
  type: z.string().optional(),
  instruction: z.string().optional(),
  choices: z.array(z.strictObject({ id: nonEmptyString, text: z.string() })).optional(),
  images: z
    .array(z.strictObject({ uri: nonEmptyString.optional(), caption: z.string().optional() }))
    .optional(),
  answer: z
    .strictObject({
      text: z.string().optional(),
      alternatives: z.array(z.string()).optional(),
      choiceIds: z.array(z.string()).optional(),
      unanswerable: z.boolean().optional(),
    })
    .optional(),
  /** Gold evidence: memory ids of the same context. */
  evidence: z.array(nonEmptyString).optional(),
  unresolvedEvidence: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export type UnifiedQuestionLine = z.infer<typeof questionInputSchema>;

export const contextLineSchema = z.strictObject({
  type: z.literal('context'),
  id: nonEmptyString,
  /** Free description of the context (whose archive it is); kept for the reader, not indexed. */
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const memoryLineSchema = memoryRecordInputSchema.extend({ type: z.literal('memory') });
export const questionLineSchema = questionInputSchema.extend({ type: z.literal('question') });

export const unifiedLineSchema = z.discriminatedUnion('type', [
  contextLineSchema,
  memoryLineSchema,
  questionLineSchema,
]);

export type UnifiedLine = z.infer<typeof unifiedLineSchema>;

/**
 * JSON Schema (draft 2020-12) of one line of the unified format, as committed in
 * schema/unified-archive.schema.json. Calendar checks (Feb 30) are refinements and not expressible in JSON
 * Schema; the importer applies them anyway.
 */
export function unifiedArchiveJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(unifiedLineSchema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: 'graphmemix unified archive line',
    description:
      'One line of a graphmemix unified archive (JSONL): a context header, a memory record or an evaluation ' +
      'question, told apart by "type". See docs/archive-format.md.',
    ...rest,
  };
}

/** The committed file's exact text (2-space JSON and a final newline), shared by the script and its test. */
export function unifiedArchiveJsonSchemaText(): string {
  return `${JSON.stringify(unifiedArchiveJsonSchema(), null, 2)}\n`;
}
