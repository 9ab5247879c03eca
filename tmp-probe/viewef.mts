const usearch = (await import('usearch')).default as any;
import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
const n = 20000, dims = 32; const r = mulberry32(3);
const g = () => { const u = Math.max(1e-12, r()); return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r()); };
const m = Float32Array.from({ length: n * dims }, g);
const mk = (ef: number) => new usearch.Index({ dimensions: dims, metric: 'cos', quantization: 'f32', connectivity: 8, expansion_add: 32, expansion_search: ef, multi: false });
const a = mk(128); a.add(BigUint64Array.from({ length: n }, (_, i) => BigInt(i)), m, 0); a.save('/tmp/warm3/ef.usearch');
const b = mk(128); b.view('/tmp/warm3/ef.usearch');
const c = mk(16); c.add(BigUint64Array.from({ length: n }, (_, i) => BigInt(i)), m, 0);
const qs = Array.from({ length: 200 }, () => Float32Array.from({ length: dims }, g));
const dot = (q: Float32Array, i: number) => { let s = 0, qa = 0, va = 0; for (let d = 0; d < dims; d++) { s += q[d]! * m[i * dims + d]!; qa += q[d]! ** 2; va += m[i * dims + d]! ** 2; } return s / Math.sqrt(qa * va); };
const truth = qs.map((q) => Array.from({ length: n }, (_, i) => [i, dot(q, i)] as const).sort((x, y) => y[1] - x[1]).slice(0, 10).map((x) => x[0]));
for (const [name, idx] of [['memory ef128', a], ['viewed ef128', b], ['memory ef16', c]] as const) {
  let h = 0; for (const [i, q] of qs.entries()) { const s = new Set(Array.from(idx.search(q, 10, 1).keys as BigUint64Array, Number)); h += truth[i]!.filter((x) => s.has(x)).length; }
  console.log(name, (h / 2000).toFixed(4));
}
