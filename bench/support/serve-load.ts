// The client side of `npm run bench:serve`: C concurrent retrieve clients, a health prober and an optional
// importer against a running server, and the generated archive they share with the bench. Run in its own
// process by serve-load-client.ts, so the server's event loop is measured without the clients' work on it.
import type { MemoryRecordInput } from '../../src/graphmemix-api.ts';

export const USER = 'bench';

export interface LoadTarget {
  url: string;
  clients: number;
  k: number;
}

export interface LoadResult {
  /** Latencies of answered (200) retrieves. */
  latencies: number[];
  elapsed: number;
  /** 503 answers (queue full): backpressure, not failures. */
  busy: number;
  /** Connection-level failures (reset, refused, socket closed): the request got no answer at all. */
  resets: number;
  errors: number;
  firstErrors: string[];
  health: number[];
  importS?: number;
}

/** C clients retrieving until the deadline (or until `until` settles), with a health prober every 20 ms. */
export async function load(
  target: LoadTarget,
  durationMs: number,
  until?: Promise<unknown>,
): Promise<LoadResult> {
  const { url, clients, k } = target;
  const questions = QUESTION_TEMPLATES;
  const latencies: number[] = [];
  const health: number[] = [];
  let errors = 0;
  let busy = 0;
  let resets = 0;
  const firstErrors: string[] = [];
  let done = false;
  void until?.finally(() => {
    done = true;
  });
  const deadline = performance.now() + durationMs;
  const running = () => !done && (until !== undefined || performance.now() < deadline);
  const started = performance.now();
  const prober = (async () => {
    while (running()) {
      const t0 = performance.now();
      const ok = await fetch(`${url}/v1/health`)
        .then(async (r) => (await r.text()) !== '' && r.status === 200)
        .catch(() => false);
      if (ok) health.push(performance.now() - t0);
      else {
        errors++;
        if (firstErrors.length < 3) firstErrors.push('health check failed');
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      let n = client;
      while (running()) {
        const question = questions[n++ % questions.length]!;
        const t0 = performance.now();
        const outcome = await retrieveOnce(url, question, k);
        if (outcome === 'ok') latencies.push(performance.now() - t0);
        else if (outcome === 'busy') {
          busy++;
          // Honour Retry-After loosely: back off a little instead of spinning on 503s.
          await new Promise((resolve) => setTimeout(resolve, 50));
        } else {
          if (outcome.startsWith('reset:')) resets++;
          else errors++;
          if (firstErrors.length < 3) firstErrors.push(outcome);
        }
      }
    }),
  );
  await prober;
  return {
    latencies,
    elapsed: (performance.now() - started) / 1000,
    busy,
    resets,
    errors,
    firstErrors,
    health,
  };
}

/** The same load while `count` memories go into another user through the HTTP add route. */
export async function loadWhileImporting(target: LoadTarget, count: number): Promise<LoadResult> {
  const { url } = target;
  const records = generateArchive(count).map((record) => ({ ...record, id: `w${record.id}` }));
  const started = performance.now();
  const importing = (async () => {
    for (let i = 0; i < records.length; i += 1000) {
      const response = await fetch(`${url}/v1/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: `${USER}-writer`, memories: records.slice(i, i + 1000) }),
      });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`import: ${response.status} ${body.slice(0, 200)}`);
    }
    return (performance.now() - started) / 1000;
  })();
  const result = await load(target, Number.POSITIVE_INFINITY, importing);
  result.importS = await importing;
  return result;
}

export async function retrieveOnce(url: string, question: string, k: number): Promise<string> {
  try {
    const response = await fetch(`${url}/v1/retrieve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: USER, question, k, verifiers: 'offline' }),
    });
    const body = await response.text();
    if (response.status === 200) return 'ok';
    if (response.status === 503) return 'busy';
    return `${response.status} ${body.slice(0, 200)}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return `reset: ${cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))}`;
  }
}

/**
 * A deterministic synthetic life log: sessions of a few rounds each over ~2 years, drawn from topic
 * vocabularies so that questions hit a few hundred candidates, like a real archive.
 */
export function generateArchive(n: number): MemoryRecordInput[] {
  let seed = 42;
  const random = () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const out: MemoryRecordInput[] = [];
  const start = Date.UTC(2023, 0, 1);
  for (let i = 0; i < n; i++) {
    const session = Math.floor(i / 8);
    const round = Math.floor((i % 8) / 2);
    const topic = TOPICS[session % TOPICS.length]!;
    const time = new Date(start + session * 3 * 3600_000 + (i % 8) * 60_000).toISOString();
    const text =
      `${pick(PEOPLE)} ${pick(topic.verbs)} the ${pick(topic.nouns)} ${pick(PLACES)} ` +
      `${pick(['on Monday', 'next week', 'after work', 'in the morning', 'at 6pm', 'tomorrow'])}; ` +
      `${pick(topic.nouns)} ${pick(['costs', 'needs', 'was', 'looks'])} ${pick(DETAILS)}.`;
    out.push({
      id: `m${i}`,
      text,
      timestamp: time,
      sessionId: `s${session}`,
      roundId: `s${session}:r${round}`,
      role: i % 2 === 0 ? 'user' : 'assistant',
      speaker: i % 2 === 0 ? 'Sam' : 'assistant',
    });
  }
  return out;
}

const PEOPLE = ['Sam', 'Marta', 'Joao', 'Priya', 'Leo', 'Ana', 'Chen', 'Omar'];
const PLACES = [
  'in Lisbon',
  'in Porto',
  'at home',
  'at the office',
  'in Sintra',
  'near the river',
  'downtown',
];
const DETAILS = [
  'about 40 euros',
  'two more days',
  'great',
  'a new battery',
  'blue paint',
  'the red folder',
  'a refund',
];
const TOPICS = [
  { verbs: ['booked', 'cancelled', 'moved'], nouns: ['flight', 'hotel', 'train', 'dinner table'] },
  { verbs: ['fixed', 'bought', 'returned'], nouns: ['bike', 'laptop', 'phone', 'kettle'] },
  { verbs: ['planned', 'reviewed', 'presented'], nouns: ['design review', 'budget', 'roadmap', 'offsite'] },
  { verbs: ['cooked', 'tried', 'shared'], nouns: ['recipe', 'soup', 'curry', 'cake'] },
  {
    verbs: ['ran', 'trained', 'signed up for'],
    nouns: ['half marathon', 'yoga class', 'swim lesson', 'hike'],
  },
] as const;
export const QUESTION_TEMPLATES = [
  'When did Sam book the flight to Lisbon?',
  'What did Marta say about the design review budget?',
  'Where was the bike fixed and how much did it cost?',
  'Which recipe did Priya share after work?',
  'When is the half marathon and who signed up?',
  'What happened to the hotel booking in Porto?',
  'Who presented the roadmap at the office?',
  'What needs a new battery?',
];
