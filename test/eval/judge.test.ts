import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeAnswer, parseVerdict } from '../../src/eval/judge.ts';
import { createOpenAICompatibleChat } from '../../src/providers/openai-compatible-chat.ts';
import type { EvalQuestion } from '../../src/types/question.ts';
import { type FakeOpenAIServer, startFakeOpenAIServer } from '../support/fake-openai-server.ts';

const question: EvalQuestion = {
  id: 'q1',
  contextId: 'alice',
  prompt: 'What is the revised deadline?',
  instruction: 'Answer briefly.',
  choices: [
    { id: 'A', text: 'May 2' },
    { id: 'B', text: 'May 7' },
  ],
  images: [{ uri: 'notice.png' }],
  answer: { text: 'May 7', choiceIds: ['B'] },
  evidence: [],
};

describe('judge', () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('accepts exactly one boolean field', () => {
    expect(parseVerdict('{"correct": true}')).toEqual({ ok: true, value: true });
    expect(parseVerdict('{"correct": "yes"}').ok).toBe(false);
    expect(parseVerdict('{"correct": true, "reason": "x"}').ok).toBe(false);
    expect(parseVerdict('not json').ok).toBe(false);
  });

  it('sends only the protocol fields and reads the verdict', async () => {
    const judge = createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'judge' });
    server.enqueue('chat', { type: 'json', value: { correct: true } });
    const verdict = await judgeAnswer(judge, question, 'It moved to May 7.');
    expect(verdict).toMatchObject({ correct: true, judged: true, attempts: 1 });
    const body = server.requests.at(-1)!.body;
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.temperature).toBe(0);
    const payload = JSON.parse(body.messages[1].content);
    expect(Object.keys(payload).sort()).toEqual(
      ['choices', 'instruction', 'prediction', 'question', 'reference_answer', 'response_type'].sort(),
    );
    expect(payload.question).toBe('<image:notice.png> What is the revised deadline?');
    expect(payload.response_type).toBe('multiple_choice');
    expect(payload.choices).toEqual([
      { choice_id: 'A', text: 'May 2' },
      { choice_id: 'B', text: 'May 7' },
    ]);
  });

  it('retries a malformed verdict with a correction, then counts a failure as wrong', async () => {
    const judge = createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'judge' });
    server.enqueue(
      'chat',
      { type: 'text', content: 'I think it is right' },
      { type: 'json', value: { correct: false } },
    );
    expect(await judgeAnswer(judge, question, 'May 2')).toMatchObject({
      correct: false,
      judged: true,
      attempts: 2,
    });
    const retry = server.requests.at(-1)!.body.messages;
    expect(retry.at(-1).content).toContain('"correct"');

    server.enqueue(
      'chat',
      { type: 'json', value: { correct: true, why: 'x' } },
      { type: 'json', value: { verdict: 1 } },
      { type: 'text', content: '' },
    );
    expect(await judgeAnswer(judge, question, 'May 7')).toMatchObject({
      correct: false,
      judged: false,
      attempts: 3,
    });
  });

  it('marks empty predictions wrong without a call', async () => {
    const judge = createOpenAICompatibleChat({ baseUrl: server.baseUrl, model: 'judge' });
    const before = server.requests.length;
    expect(await judgeAnswer(judge, question, '   ')).toMatchObject({
      correct: false,
      judged: false,
      attempts: 0,
    });
    expect(await judgeAnswer(judge, question, undefined)).toMatchObject({ correct: false, judged: false });
    expect(server.requests.length).toBe(before);
  });
});
