import { afterEach, describe, expect, it, vi } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { startQuestionDeadline } from '../../src/pipeline/question-deadline.ts';

/**
 * The question deadline makes its timer when a model call first reads its signal (for the time then left);
 * an offline question never does, and its `exceeded()` reads the clock.
 */
describe('question deadline, made on first use', () => {
  afterEach(() => vi.restoreAllMocks());

  it('times the signal for what is left of the budget when first read', () => {
    let clock = 1000;
    const timeout = vi.spyOn(AbortSignal, 'timeout');
    const deadline = startQuestionDeadline(500, undefined, () => clock);
    expect(timeout).not.toHaveBeenCalled();
    clock = 1200;
    const signal = deadline.signal;
    expect(timeout).toHaveBeenCalledTimes(1);
    expect(timeout).toHaveBeenCalledWith(300);
    expect(deadline.signal).toBe(signal);
    expect(timeout).toHaveBeenCalledTimes(1);
    expect(deadline.exceeded()).toBe(false);
  });

  it('past the budget before any read: exceeded by the clock, and a signal read then aborts', async () => {
    let clock = 0;
    const deadline = startQuestionDeadline(100, undefined, () => clock);
    expect(deadline.exceeded()).toBe(false);
    clock = 100;
    expect(deadline.exceeded()).toBe(true);
    const signal = deadline.signal;
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    expect(signal.aborted).toBe(true);
    expect(deadline.exceeded()).toBe(true);
  });

  it('joins the client signal; a client abort is not the deadline', () => {
    const client = new AbortController();
    const deadline = startQuestionDeadline(60_000, client.signal);
    const signal = deadline.signal;
    client.abort();
    expect(signal.aborted).toBe(true);
    expect(deadline.exceeded()).toBe(false);
  });

  it('an offline retrieve makes no timer', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await gm.addMemories('ctx', [
        { id: 'a', text: 'the kayak rental opens at nine' },
        { id: 'b', text: 'pottery class moved to Friday' },
      ]);
      const timeout = vi.spyOn(AbortSignal, 'timeout');
      const result = await gm.retrieve('ctx', 'when does the kayak rental open?', {
        signal: new AbortController().signal,
      });
      expect(result.evidence[0]?.memoryId).toBe('a');
      expect(result.trace.flags).not.toContain('deadline_exceeded');
      expect(timeout).not.toHaveBeenCalled();
    } finally {
      await gm.close();
    }
  });
});
