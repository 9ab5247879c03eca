import type { MemoryRecord } from '../../types/memory-record.ts';
import { PairSet, type RecordPair } from './record-pair.ts';

/**
 * `consecutive_turn`: adjacent dialogue messages (kind 'message') of one session, by ingestion sequence
 * (ties by id). Never across sessions; messages without a session id are not linked, since adjacency in
 * the import order says nothing about a conversation then. Other kinds inside a session (a photo shared in
 * a chat) are skipped over, so the messages around them stay adjacent.
 */
export function consecutiveTurnPairs(records: readonly MemoryRecord[]): RecordPair[] {
  const sessions = new Map<string, MemoryRecord[]>();
  for (const record of records) {
    if (record.kind !== 'message' || record.sessionId === undefined || record.sessionId === '') continue;
    const turns = sessions.get(record.sessionId);
    if (turns) turns.push(record);
    else sessions.set(record.sessionId, [record]);
  }
  const out = new PairSet();
  for (const turns of sessions.values()) {
    turns.sort((x, y) => x.sequence - y.sequence || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    for (let i = 1; i < turns.length; i++) out.add(turns[i - 1]!.id, turns[i]!.id);
  }
  return out.pairs;
}
