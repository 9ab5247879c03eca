import Database from 'better-sqlite3';
import { openGraphmemix } from '../src/graphmemix.ts';
import { chatQuestions } from '../bench/support/realistic-chat.ts';
const probe = new Database(':memory:');
const proto = Object.getPrototypeOf(probe.prepare('select 1'));
const stats = new Map<string, { n: number; ms: number; rows: number }>();
let on = false;
for (const m of ['all', 'get', 'run', 'iterate'] as const) {
  const orig = proto[m];
  proto[m] = function (this: { source: string }, ...a: unknown[]) {
    if (!on) return orig.apply(this, a);
    const t = performance.now();
    const r = orig.apply(this, a);
    const key = `${m} ${this.source.replace(/\s+/g, ' ').slice(0, 110)}`;
    const s = stats.get(key) ?? { n: 0, ms: 0, rows: 0 };
    s.n++; s.ms += performance.now() - t; s.rows += Array.isArray(r) ? r.length : 1;
    stats.set(key, s);
    return r;
  };
}
const gm = await openGraphmemix({ db: process.argv[2]! });
const qs = chatQuestions(110, 5, { contextId: 'big', count: 10000, seed: 11 });
for (const q of qs.slice(0, 10)) await gm.retrieve('big', q);
on = true;
const t0 = performance.now();
for (const q of qs.slice(10)) await gm.retrieve('big', q);
const total = performance.now() - t0;
on = false;
console.log('total per q', (total / 100).toFixed(2));
for (const [k, s] of [...stats].sort((a, b) => b[1].ms - a[1].ms)) console.log((s.ms / 100).toFixed(3).padStart(7), 'ms/q', (s.n / 100).toFixed(1).padStart(5), 'calls/q', (s.rows / 100).toFixed(0).padStart(6), 'rows/q', k);
await gm.close();
