import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { calibrationKey, calibrationMetaKey } from '../../src/pipeline/prize-calibration.ts';
import { retrieverName } from '../../src/retrieval/multi-view-retriever.ts';
import { FIGURE1_QUESTION, figure1Records, PINNED } from './figure1-archive.ts';

describe('Figure 1 archive, offline verifiers', () => {
  let gm: Graphmemix;
  beforeEach(async () => {
    gm = await openGraphmemix({ db: ':memory:' });
    const report = await gm.addMemories('alice', figure1Records());
    expect(report.rejected).toEqual([]);
    // The archive as the figure has it: the adds' kNN edges (after the write) in.
    await gm.waitForCompactions();
    const key = calibrationKey({
      retriever: retrieverName(undefined),
      nodeVerifier: 'lexical-context-support',
      edgeVerifier: 'anchor-novelty',
    });
    await gm.store.setMeta(calibrationMetaKey(key), PINNED);
  });
  afterEach(async () => gm.close());

  it('puts the update and the original notice in one tree, without the copies', async () => {
    const result = await gm.retrieve('alice', FIGURE1_QUESTION);
    const ids = result.evidence.map((e) => e.memoryId);
    expect(ids).toContain('mail-01-notice');
    expect(ids).toContain('mail-02-update');
    expect(ids).not.toContain('mail-03-copy');
    expect(ids).not.toContain('mail-04-copy');
    const tree = (id: string) => result.evidence.find((e) => e.memoryId === id)!.tree;
    expect(tree('mail-01-notice')).toBe(tree('mail-02-update'));
    const update = result.evidence.find((e) => e.memoryId === 'mail-02-update')!;
    const notice = result.evidence.find((e) => e.memoryId === 'mail-01-notice')!;
    const child = update.parent ? update : notice;
    expect(child.parent?.relationTypes).toContain('same_record');
    expect(['new_fact', 'clarification', 'corroboration']).toContain(child.parent?.role);

    // The copies were judged, and not kept: redundant with the notice or conflicting with the update.
    const copyEdges = result.verifiedEdges.filter((e) => e.b === 'mail-03-copy' || e.b === 'mail-04-copy');
    expect(copyEdges.length).toBeGreaterThan(0);
    expect(copyEdges.every((e) => !e.kept)).toBe(true);

    expect(result.trace.flags).toEqual(
      expect.arrayContaining(['node_verifier_offline', 'edge_verifier_offline']),
    );
    expect(result.trace.calibration).toMatchObject(PINNED);
    expect(result.trace.components.nodeVerifier).toBe('lexical-context-support');
    expect(result.trace.modelCalls).toEqual([]);
    expect(result.packetText).toContain('[Evidence 1]');
    expect(result.pool.slice(0, 10).every((c) => c.isAnchor)).toBe(true);
  });

  it('with the shipped offline ranker (no calibration in the archive) the copies stay out too', async () => {
    const plain = await openGraphmemix({ db: ':memory:' });
    try {
      await plain.addMemories('alice', figure1Records());
      await plain.waitForCompactions();
      const result = await plain.retrieve('alice', FIGURE1_QUESTION);
      expect(result.trace.components.prizes).toMatch(/offline-ranker/);
      const ids = result.evidence.map((e) => e.memoryId);
      expect(ids).toEqual(expect.arrayContaining(['mail-01-notice', 'mail-02-update']));
      expect(ids).not.toContain('mail-03-copy');
      expect(ids).not.toContain('mail-04-copy');
      // The copies were judged repeats of the notice, which is worth at least as much: no prize of their own.
      const prize = (id: string) => result.pool.find((c) => c.memoryId === id)!.prize;
      expect(prize('mail-03-copy')).toBe(0);
      expect(prize('mail-04-copy')).toBe(0);
      expect(prize('mail-01-notice')).toBeGreaterThan(0.12);
    } finally {
      await plain.close();
    }
  });

  it('never returns empty evidence for a question nothing matches', async () => {
    const result = await gm.retrieve('alice', 'zzzqx unknownword');
    expect(result.evidence.length).toBeGreaterThan(0);
    expect(result.trace.flags).toContain('no_lexical_match');
  });

  it('answer() without a reader model reports answered false', async () => {
    const result = await gm.answer('alice', FIGURE1_QUESTION);
    expect(result.answered).toBe(false);
    expect(result.answer).toBe('');
  });

  it('rejects an empty question with INVALID_INPUT', async () => {
    await expect(gm.retrieve('alice', '  ')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
