import { rejectItem, warningItem } from './import-items.ts';
import type { ImportItem } from './importer-spec.ts';
import { asText, isJsonObject, type JsonObject } from './json-values.ts';

/** One valid round of a session-based dialogue dataset, with where it sits in the source file. */
export interface DialogueRound {
  type: 'round';
  sessionId: string;
  /** The session's ISO date, when it has one. */
  timestamp?: string;
  roundId: string;
  round: JsonObject;
  /** JSON path of the round in the file, for errors. */
  field: string;
}

/**
 * Walks the sessions of a Mem-Gallery / M3Exam style dialogue file ({session_id, date, dialogues: [{round, ...}]})
 * and yields each valid round, or a reject/warning item naming the field: a session without a dialogues list, a
 * date that is not ISO (the session is kept without a timestamp), a round without an id, a round id seen twice
 * (`rounds` collects the ids, so questions can be resolved against them afterwards).
 */
export function* dialogueRounds(
  file: string,
  sessions: readonly unknown[],
  fieldPrefix: string,
  rounds: Set<string>,
): Generator<ImportItem | DialogueRound> {
  for (const [sessionIndex, session] of sessions.entries()) {
    const sessionField = fieldPrefix === '' ? String(sessionIndex) : `${fieldPrefix}.${sessionIndex}`;
    if (!isJsonObject(session) || !Array.isArray(session.dialogues)) {
      yield rejectItem(file, 'INVALID_INPUT', 'session without a dialogues list', {
        field: `${sessionField}.dialogues`,
      });
      continue;
    }
    const sessionId = asText(session.session_id) ?? `D${sessionIndex + 1}`;
    const date = asText(session.date);
    const timestamp = date !== undefined && /^\d{4}-\d{2}-\d{2}/.test(date) ? date : undefined;
    if (date !== undefined && timestamp === undefined) {
      yield warningItem(file, `"${date}" is not an ISO date; session ${sessionId} has no timestamp`, {
        field: `${sessionField}.date`,
      });
    }
    for (const [roundIndex, round] of session.dialogues.entries()) {
      const field = `${sessionField}.dialogues.${roundIndex}`;
      const roundId = isJsonObject(round) ? asText(round.round) : undefined;
      if (!isJsonObject(round) || roundId === undefined) {
        yield rejectItem(file, 'INVALID_INPUT', 'round without a round id', { field: `${field}.round` });
        continue;
      }
      if (rounds.has(roundId)) {
        yield rejectItem(file, 'DUPLICATE_ID', `round ${roundId} appears twice`, {
          field: `${field}.round`,
          recordId: roundId,
        });
        continue;
      }
      rounds.add(roundId);
      yield {
        type: 'round',
        sessionId,
        ...(timestamp === undefined ? {} : { timestamp }),
        roundId,
        round,
        field,
      };
    }
  }
}
