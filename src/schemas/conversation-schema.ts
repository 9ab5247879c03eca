import { z } from 'zod';
import type { MemoryRecord } from '../types/memory-record.ts';
import { isoTimestampSchema } from './record-schema.ts';

/** Messages one conversation call may carry (the add route's record cap). */
export const MAX_MESSAGES = 1000;

/** One chat message in the OpenAI / mem0 shape. */
export const conversationMessageSchema = z.strictObject({
  role: z.string().min(1).max(64).describe('user, assistant, system, or a participant name.'),
  content: z.string().describe('The message text.'),
  name: z.string().min(1).max(128).optional().describe('Who wrote it, when the role is not enough.'),
  timestamp: isoTimestampSchema
    .optional()
    .describe('When it was said; defaults to the previous message time, then now.'),
});
export type ConversationMessage = z.infer<typeof conversationMessageSchema>;

export interface ConversationScope {
  agentId?: string;
  runId?: string;
  metadata?: Record<string, unknown>;
}

/**
 * Turns a conversation into message records without any model: ids `<session>:<stamp>:<n>`, the session is
 * the run id (or `chat-<stamp>`), and rounds follow speakers, not roles: a round opens with a speaker
 * (name, else role) and takes every message until that speaker talks again after someone else did. So
 * user/assistant chats get one round per user turn, and two-person chats without such roles (Ann, Ben,
 * Ben, Ann) get rounds too. A message without a timestamp takes the previous one's, the first one `now`.
 * Empty messages are kept out (they would be rejected as records without content); their index still counts.
 */
export function messagesToRecords(
  messages: readonly ConversationMessage[],
  scope: ConversationScope,
  now: Date,
  stamp: string,
): Omit<MemoryRecord, 'contextId' | 'sequence' | 'assets'>[] {
  const session = scope.runId ?? `chat-${stamp}`;
  const records: Omit<MemoryRecord, 'contextId' | 'sequence' | 'assets'>[] = [];
  let opener: string | undefined;
  let previous: string | undefined;
  let round = 0;
  let time = now.toISOString();
  messages.forEach((message, index) => {
    const speaker = message.name ?? message.role;
    if (opener === undefined || (speaker === opener && previous !== opener)) {
      round++;
      opener = speaker;
    }
    previous = speaker;
    if (message.timestamp !== undefined) time = message.timestamp;
    if (message.content.trim() === '') return;
    records.push({
      id: `${session}:${stamp}:${index + 1}`,
      kind: 'message',
      role: message.role,
      speaker,
      text: message.content,
      timestamp: time,
      sessionId: session,
      roundId: `${session}:${stamp}:r${round}`,
      ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }),
      ...(scope.runId === undefined ? {} : { runId: scope.runId }),
      ...(scope.metadata === undefined ? {} : { metadata: scope.metadata }),
    });
  });
  return records;
}
