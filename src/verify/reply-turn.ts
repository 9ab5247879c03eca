import type { MemoryRecord } from '../types/memory-record.ts';

/**
 * Who wrote a message: its speaker, else its conversation role (user / assistant, or a participant name).
 * Undefined when neither is known: alternation cannot be read then.
 */
function participant(record: MemoryRecord): string | undefined {
  const who = record.speaker ?? record.role;
  return who === undefined || who.trim() === '' ? undefined : who.trim().toLowerCase();
}

/**
 * Is `candidate` the reply to `anchor` in a two-person chat: the next message of the same session
 * (`consecutive_turn`, later in sequence) written by the OTHER participant? A message and the reply to it are
 * one exchange even when the archive carries no round ids (LoCoMo, exported messengers, `--shape turns`); the
 * reply often shares no word with the question ("Yes, last Tuesday!") and is still what completes it. The
 * relation types must be given so that a pair the schema never linked is not read as adjacent.
 */
export function isReplyTurn(
  anchor: MemoryRecord,
  candidate: MemoryRecord,
  relationTypes: readonly string[],
): boolean {
  if (!relationTypes.includes('consecutive_turn')) return false;
  if (anchor.sessionId === undefined || anchor.sessionId !== candidate.sessionId) return false;
  if (candidate.sequence <= anchor.sequence) return false;
  const from = participant(anchor);
  const to = participant(candidate);
  return from !== undefined && to !== undefined && from !== to;
}
