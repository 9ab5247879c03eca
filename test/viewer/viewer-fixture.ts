import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { createFakeGraphmemix } from '../support/fake-graphmemix.ts';

/** A small archive and one retrieval over it, for the viewer tests (built here, never read from disk). */
export async function viewerFixture() {
  const graphmemix = createFakeGraphmemix();
  await graphmemix.addMemories('alice', [
    {
      id: 'm1',
      text: 'The design review is on Friday at 10 in room Tejo',
      timestamp: '2024-04-01T09:00:00Z',
    },
    {
      id: 'm2',
      text: 'Update: the design review moved to Monday, same room',
      timestamp: '2024-04-03T17:00:00Z',
    },
    { id: 'm3', text: 'Lunch with Marta', timestamp: '2024-04-04' },
    {
      id: 'm4',
      text: 'Whiteboard photo from the design review <script>alert(1)</script>',
      timestamp: '2024-04-08',
    },
    { id: 'm5', text: 'Booked room Tejo for review prep', timestamp: '2024-04-09' },
  ]);
  const result = await graphmemix.retrieve('alice', 'When is the design review and in which room?', { k: 4 });
  const records = new Map<string, MemoryRecord>();
  for (const candidate of result.pool) {
    const record = await graphmemix.getMemory('alice', candidate.memoryId);
    if (record) records.set(record.id, record);
  }
  return { result, records };
}
