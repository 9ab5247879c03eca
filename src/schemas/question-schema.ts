import { z } from 'zod';

/**
 * THE question schema: `retrieve` / `answer` in the library validate with `questionInputSchema`, and the
 * HTTP/MCP bodies (src/api-schemas/route-schemas.ts) are built from the same parts, so a question means the
 * same thing through every door.
 */
export const MAX_QUESTION_CHARS = 4000;

export const questionPromptSchema = z
  .string()
  .max(MAX_QUESTION_CHARS)
  .describe('A natural-language question about the user history.');

/** A prompt that must carry words (HTTP/MCP questions have no images). */
/** Most hits one search returns (library, HTTP and MCP alike). */
export const MAX_SEARCH_K = 100;

export const questionTextSchema = questionPromptSchema
  .trim()
  .min(1)
  .describe('A natural-language question about the user history.');

export const questionInstructionSchema = z
  .string()
  .max(2000)
  .describe('Instruction for the reader, e.g. "Answer in one word."');

export const questionChoiceSchema = z.strictObject({
  id: z.string().min(1).max(64),
  text: z.string().max(2000),
});
export const questionChoicesSchema = z
  .array(questionChoiceSchema)
  .max(26)
  .describe('Multiple-choice options, when the question has them.');

export const questionImageSchema = z.strictObject({
  uri: z.string().min(1).max(4096).optional(),
  caption: z.string().max(4000).optional(),
});

/** The question's own time: "last Tuesday" is resolved against it (src/pipeline/question-dates.ts). */
export const questionAsOfSchema = z
  .string()
  .max(64)
  .regex(/^\d{4}-\d{2}-\d{2}/, 'an ISO date or time, e.g. 2024-06-20 or 2024-06-20T18:00:00Z')
  .describe('When the question is asked (ISO date or time); relative dates in it are resolved against it.');

export const questionInputSchema = z
  .strictObject({
    prompt: questionPromptSchema,
    instruction: questionInstructionSchema.optional(),
    choices: questionChoicesSchema.optional(),
    images: z.array(questionImageSchema).max(16).optional(),
    type: z.string().max(64).optional(),
    asOf: questionAsOfSchema.optional(),
  })
  .refine((q) => q.prompt.trim() !== '' || (q.images ?? []).length > 0, {
    message: 'a question needs a non-empty prompt or an image',
    path: ['prompt'],
  });
