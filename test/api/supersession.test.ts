import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { renderPacketText } from '../../src/pipeline/evidence-packet.ts';
import { readerMessage, VERSIONS_NOTE } from '../../src/pipeline/reader-message.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from '../store/postgres-test-db.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await dropTestDatabases();
});

async function open(kind: string): Promise<Graphmemix> {
  if (kind === 'memory') return openGraphmemix({ db: 'memory:' });
  if (kind === 'postgres') return openGraphmemix({ db: await createTestDatabase() });
  const dir = mkdtempSync(join(tmpdir(), 'gmx-supersede-'));
  dirs.push(dir);
  return openGraphmemix({ db: join(dir, 'a.db') });
}

const NOTES = [
  {
    id: 'appt',
    text: 'Dentist appointment with Dr. Ruiz on Monday June 3 at 9:00',
    timestamp: '2024-05-20T10:00:00Z',
  },
  { id: 'milk', text: 'Buy oat milk and coffee beans', timestamp: '2024-05-21T08:00:00Z' },
  { id: 'kayak', text: 'Kayak rental in Lisbon costs 40 euros a day', timestamp: '2024-05-22T09:00:00Z' },
  {
    id: 'moved',
    text: 'Update: the dentist appointment moved to Thursday June 6 at 11:00',
    timestamp: '2024-05-28T16:30:00Z',
  },
];

async function supersedesEdges(gm: Graphmemix, ctx: string): Promise<string[]> {
  const ids = [...NOTES.map((note) => note.id), 'price'];
  return (await gm.store.neighbors(ctx, ids))
    .filter((edge) => edge.types.includes('supersedes'))
    .map((edge) => `${edge.a}|${edge.b}`)
    .sort();
}

if (PG_SKIP) console.warn(`[postgres supersession tests skipped] ${PG_SKIP}`);
const BACKENDS = PG_SKIP ? ['memory', 'sqlite'] : ['memory', 'sqlite', 'postgres'];

describe.each(BACKENDS)('supersession end to end (%s)', (kind) => {
  it('"when is the appointment now?": both versions in the packet, older first, the new value current', async () => {
    const gm = await open(kind);
    try {
      await gm.addMemories('ann', NOTES);
      expect(await supersedesEdges(gm, 'ann')).toEqual(['appt|moved']);
      const result = await gm.retrieve('ann', 'When is the dentist appointment now?', { k: 4 });
      const ids = result.evidence.map((item) => item.memoryId);
      expect(ids).toContain('appt');
      expect(ids).toContain('moved');
      expect(ids.indexOf('appt')).toBeLessThan(ids.indexOf('moved'));
      const moved = result.evidence.find((item) => item.memoryId === 'moved')!;
      const appt = result.evidence.find((item) => item.memoryId === 'appt')!;
      expect(moved.version).toEqual({ status: 'current', supersedes: ['appt'], supersededBy: [] });
      expect(appt.version).toEqual({ status: 'superseded', supersedes: [], supersededBy: ['moved'] });
      expect(moved.date).toBe('2024-05-28T16:30:00Z');
      expect(moved.recordedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(result.evidence.map((item) => item.rank)).toEqual(ids.map((_, i) => i + 1));
      // The packet text and the reader's message show both clocks and which value is current.
      expect(result.packetText).toBe(renderPacketText(result.evidence));
      expect(result.packetText).toContain(`Date: 2024-05-28T16:30:00Z | Recorded: ${moved.recordedAt}`);
      expect(result.packetText).toContain('Version: CURRENT (newest value; supersedes memory appt)');
      expect(result.packetText).toContain('Version: SUPERSEDED by memory moved (older value, not current)');
      const message = readerMessage(result.question, result.evidence);
      const text = (message.content as { type: string; text?: string }[])
        .map((part) => part.text ?? '')
        .join('\n');
      expect(text).toContain(VERSIONS_NOTE);
      expect(text.indexOf('Thursday June 6')).toBeGreaterThan(text.indexOf('Monday June 3'));
    } finally {
      await gm.close();
    }
  });

  it('relations follow add, PATCH and delete incrementally; explicit supersedes works across threads', async () => {
    const gm = await open(kind);
    try {
      await gm.addMemories('bob', NOTES.slice(0, 3));
      expect(await supersedesEdges(gm, 'bob')).toEqual([]);
      // The first add's semantic side (a rebuild of the new user) runs after it: settled before the spy.
      await gm.waitForCompactions();
      // No write below walks the context (a full rebuild reads it through listMemories).
      const walks = vi.spyOn(gm.store, 'listMemories');
      await gm.addMemories('bob', [NOTES[3]!]);
      expect(await supersedesEdges(gm, 'bob')).toEqual(['appt|moved']);
      // PATCH the correction into a plain note: the detected edge goes.
      await gm.updateMemory('bob', 'moved', { text: 'Dentist appointment reminder' });
      expect(await supersedesEdges(gm, 'bob')).toEqual([]);
      // PATCH it back to a correction: the edge comes back.
      await gm.updateMemory('bob', 'moved', { text: 'Correction: dentist appointment is on Friday June 7' });
      expect(await supersedesEdges(gm, 'bob')).toEqual(['appt|moved']);
      // An explicit link from another session, with no cue at all.
      await gm.addMemories('bob', [
        { id: 'price', text: 'Kayak rental price: 45 euros a day', sessionId: 'trip', supersedes: ['kayak'] },
      ]);
      expect(await supersedesEdges(gm, 'bob')).toEqual(['appt|moved', 'kayak|price']);
      await gm.deleteMemory('bob', 'appt');
      expect(walks).not.toHaveBeenCalled();
      expect(await supersedesEdges(gm, 'bob')).toEqual(['kayak|price']);
    } finally {
      await gm.close();
    }
  });

  it('a filtered question never names a version outside its scope', async () => {
    const gm = await open(kind);
    try {
      await gm.addMemories('cy', [
        { ...NOTES[0]!, agentId: 'calendar' },
        { ...NOTES[3]!, agentId: 'assistant' },
      ]);
      const result = await gm.retrieve('cy', 'When is the dentist appointment now?', {
        k: 4,
        filter: { agentId: 'calendar' },
      });
      expect(result.evidence.map((item) => item.memoryId)).toEqual(['appt']);
      expect(result.evidence[0]!.version).toBeUndefined();
      expect(result.packetText).not.toContain('moved');
    } finally {
      await gm.close();
    }
  });
});
