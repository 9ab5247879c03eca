import type { MemoryRecord } from '../../types/memory-record.ts';
import { compareBySequence, PairSet, type RecordPair } from './record-pair.ts';

/**
 * `consecutive_turn`: adjacent dialogue messages (kind 'message') of one session, by ingestion sequence
 * (ties by id). Never across sessions; messages without a session id are not linked, since adjacency in
 * the import order says nothing about a conversation then. Other kinds inside a session (a photo shared in
 * a chat) are skipped over, so the messages around them stay adjacent.
 */
export function consecutiveTurnPairs(records: readonly MemoryRecord[]): RecordPair[] {
  const sessions = new Map<string, MemoryRecord[]>();
  for (const record of records) {
    const session = turnSession(record);
    if (session === undefined) continue;
    const turns = sessions.get(session);
    if (turns) turns.push(record);
    else sessions.set(session, [record]);
  }
  const out = new PairSet();
  for (const turns of sessions.values()) {
    turns.sort(compareBySequence);
    for (let i = 1; i < turns.length; i++) out.add(turns[i - 1]!.id, turns[i]!.id);
  }
  return out.pairs;
}

/** The session whose turn chain a record belongs to: messages with a session id only. */
export function turnSession(record: MemoryRecord): string | undefined {
  return record.kind === 'message' && record.sessionId !== undefined && record.sessionId !== ''
    ? record.sessionId
    : undefined;
}
