import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEval } from '../../src/eval/run-eval.ts';
import { SELECTOR_NAMES } from '../../src/eval/selectors/selector-registry.ts';
import { writeEvalReport } from '../../src/eval/write-eval-report.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { BIN } from '../support/repo-paths.ts';

/** A small unified archive: two sessions about a trip, unrelated chatter, and three kinds of question. */
function writeFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gmx-eval-'));
  const lines: object[] = [{ type: 'context', id: 'alice' }];
  const turns: [string, string, string][] = [
    ['s1', 'user', 'We land in Lisbon on Friday and stay in Alfama near the tram line.'],
    ['s1', 'assistant', 'Alfama is lovely; the 28 tram passes right by.'],
    ['s1', 'user', 'The hotel is called Casa do Largo, room 12.'],
    ['s1', 'assistant', 'Noted: Casa do Largo, room 12.'],
    ['s2', 'user', 'I baked sourdough bread with rye flour today.'],
    ['s2', 'assistant', 'Rye gives a dense crumb; try a longer proof.'],
  ];
  for (let i = 0; i < 30; i++)
    turns.push([
      's3',
      i % 2 ? 'assistant' : 'user',
      `Random note ${i} about groceries and laundry day ${i}.`,
    ]);
  turns.forEach(([session, role, text], index) => {
    lines.push({
      type: 'memory',
      id: `m${index}`,
      role,
      sessionId: session,
      roundId: `${session}:${Math.floor(index / 2)}`,
      timestamp: `2024-06-0${1 + (index % 9)}`,
      text,
    });
  });
  lines.push(
    {
      type: 'question',
      id: 'q-hotel',
      prompt: 'What is the name of the hotel in Lisbon?',

      answer: { text: 'Casa do Largo' },
      evidence: ['m2', 'm3'],
    },
    {
      type: 'question',
      id: 'q-bread',
      prompt: 'Which flour did I use for the sourdough?',
      answer: { text: 'rye' },
      evidence: ['m4', 'ghost-id'],
    },
    {
      type: 'question',
      id: 'q-none',
      prompt: 'Did I ever go skiing?',
      answer: { text: 'Not mentioned', unanswerable: true },
      evidence: [],
    },
  );
  const file = join(dir, 'archive.jsonl');
  writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  return file;
}

describe('runEval', () => {
  it('scores every selector on the frozen pool, counts missing gold, and writes a report', async () => {
    const file = writeFixture();
    const report = await runEval({
      format: 'unified',
      data: file,
      k: 4,
      selectors: [...SELECTOR_NAMES],
      questions: 'all',
      ablation: true,
      open: (db, models) => openGraphmemix({ db, models }),
    });
    expect(report.questions).toBe(3);
    expect(report.questions_without_gold).toBe(1);
    expect(report.unresolved_gold).toBe(1);
    expect(report.unresolved).toEqual([{ question_id: 'q-bread', memory_ids: ['ghost-id'] }]);
    expect(report.selectors.map((s) => s.name)).toEqual([...SELECTOR_NAMES]);
    for (const selector of report.selectors) {
      expect(selector.questions).toBe(2);
      expect(selector.recall).toBeGreaterThanOrEqual(0);
      expect(selector.recall).toBeLessThanOrEqual(1);
      expect(selector.mean_selected).toBeLessThanOrEqual(4);
    }
    // The reported recall is the mean over the gold questions of |packet and gold| / |resolved gold|,
    // recomputed here from the kept results (all three questions are kept).
    const graphmemix = report.selectors.find((s) => s.name === 'graphmemix')!;
    expect(report.examples.map((e) => e.question.id)).toEqual(['q-hotel', 'q-bread', 'q-none']);
    expect(report.examples.map((e) => e.gold)).toEqual([['m2', 'm3'], ['m4'], []]);
    const perQuestion = report.examples
      .filter((e) => e.gold.length > 0)
      .map((e) => {
        const packet = new Set(e.result.evidence.map((item) => item.memoryId));
        return e.gold.filter((id) => packet.has(id)).length / e.gold.length;
      });
    // The hotel round is the obvious answer: the full pipeline finds both of its memories, and m4 for bread.
    expect(perQuestion).toEqual([1, 1]);
    expect(graphmemix.recall).toBe(1);
    // Both questions with gold hash to fold 2 (sha256, src/eval/splits.ts): none in the dev fold.
    for (const selector of report.selectors) {
      expect(selector.by_fold.dev.questions).toBe(0);
      expect(selector.by_fold.heldout.questions).toBe(2);
      expect(selector.by_fold.heldout.recall).toBe(selector.recall);
    }
    // The packet-size distribution covers the questions with gold and agrees with the mean packet size.
    const sizes = Object.entries(report.packet_sizes).map(([size, count]) => [Number(size), count] as const);
    expect(sizes.reduce((n, [, count]) => n + count, 0)).toBe(2);
    expect(sizes.reduce((sum, [size, count]) => sum + size * count, 0) / 2).toBe(graphmemix.mean_selected);
    // The recall gap adds up: outside pool + not proposed + dropped + packet recall = 100 points per fold.
    const gap = report.recall_gap.heldout;
    expect(gap.questions).toBe(2);
    expect(report.recall_gap.dev.questions).toBe(0);
    expect(gap.packet_recall).toBeCloseTo(100 * graphmemix.recall, 9);
    expect(
      gap.outside_pool + gap.in_pool_not_proposed + gap.dropped_by_refinement + gap.packet_recall,
    ).toBeCloseTo(100, 9);
    expect(gap.mean_packet_size).toBe(graphmemix.mean_selected);
    expect(report.ablation?.map((s) => s.name)).toHaveLength(5);
    expect(report.memories).toBe(36);
    expect(report.digest_seconds).toBeGreaterThan(0);
    expect(report.model_calls_per_question).toBe(0);
    expect(report.answers).toBeUndefined();

    const dir = mkdtempSync(join(tmpdir(), 'gmx-report-'));
    const files = writeEvalReport(report, dir, () => '<html>viewer</html>');
    expect(files.map((f) => f.slice(dir.length + 1)).sort()).toEqual([
      'recall-by-selector.svg',
      'recall-by-type.svg',
      'report.md',
      'viewer.html',
    ]);
    const markdown = readFileSync(join(dir, 'report.md'), 'utf8');
    expect(markdown).toContain('| graphmemix |');
    expect(markdown).toContain('q-bread: ghost-id');
    expect(readFileSync(join(dir, 'recall-by-selector.svg'), 'utf8')).toMatch(/^<svg /);
  });

  it('answers with the reader and judges the answers when models are configured', async () => {
    const server = await startFakeOpenAIServer();
    try {
      // The judge sees a system rubric; everything else here is the reader.
      server.setHandler('chat', (request) => {
        const system = request.body.messages[0];
        const isJudge = system?.role === 'system' && String(system.content).includes('You grade answers');
        return isJudge
          ? { type: 'json', value: { correct: true } }
          : { type: 'text', content: 'Casa do Largo' };
      });
      const chat = createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'fake' });
      const report = await runEval({
        format: 'unified',
        data: writeFixture(),
        k: 4,
        selectors: ['graphmemix'],
        questions: 'all',
        models: { reader: chat, judge: chat },
        open: (db, models) => openGraphmemix({ db, models }),
      });
      expect(report.answers).toMatchObject({ judged: 3, accuracy: 1, failed: 0 });
      expect(report.answers!.exact_match).toBeCloseTo(1 / 3, 12);
      expect(report.model_calls_per_question).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('runs from the CLI and writes the documented JSON shape', () => {
    const file = writeFixture();
    const out = join(mkdtempSync(join(tmpdir(), 'gmx-cli-')), 'eval.json');
    execFileSync(process.execPath, [BIN, 'eval', '--format', 'unified', '--data', file, '--json', out], {
      stdio: 'pipe',
    });
    expect(existsSync(out)).toBe(true);
    const json = JSON.parse(readFileSync(out, 'utf8'));
    expect(Object.keys(json)).toEqual(
      expect.arrayContaining([
        'dataset',
        'questions',
        'questions_without_gold',
        'unresolved_gold',
        'k',
        'selectors',
        'latency_ms',
        'digest_seconds',
        'model_calls_per_question',
        'tokens_per_question',
      ]),
    );
    expect(json.k).toBe(10);
    expect(json.selectors[0]).toEqual(
      expect.objectContaining({
        name: 'lexical-topk',
        recall: expect.any(Number),
        by_type: expect.any(Object),
      }),
    );
    expect(json.latency_ms).toEqual(
      expect.objectContaining({ retrieve_p50: expect.any(Number), solver_p50: expect.any(Number) }),
    );
  });

  it('exits with code 2 for a missing data path', () => {
    let status = 0;
    try {
      execFileSync(process.execPath, [BIN, 'eval', '--format', 'unified', '--data', '/no/such/file'], {
        stdio: 'pipe',
      });
    } catch (error) {
      status = (error as { status: number }).status;
    }
    expect(status).toBe(2);
  });
});
