import Database from 'better-sqlite3';
const db = new Database(process.argv[2]!, { readonly: true });
const max = (db.prepare('SELECT max(id) FROM lex_docs').pluck().get() as number);
console.log('docs', max, db.prepare("SELECT count(*) FROM lex_docs").pluck().get());
console.log(db.prepare('EXPLAIN QUERY PLAN SELECT terms FROM lex_docs WHERE id IN (SELECT value FROM json_each(?))').all('[1]'));
let seed = 1; const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
const sets = Array.from({ length: 200 }, () => Array.from({ length: 280 }, () => 1 + Math.floor(rnd() * max)).sort((a, b) => a - b));
const a = db.prepare('SELECT terms FROM lex_docs WHERE id IN (SELECT value FROM json_each(?))').pluck();
const b = db.prepare('SELECT d.terms FROM json_each(?) j JOIN lex_docs d ON d.id = j.value').pluck();
const c = db.prepare('SELECT terms FROM lex_docs WHERE id = ?').pluck();
const d = db.prepare(`SELECT terms FROM lex_docs WHERE id IN (${Array(280).fill('?').join(',')})`).pluck();
const e = db.prepare('SELECT terms FROM lex_docs WHERE id IN (SELECT value FROM json_each(?))').pluck();
const time = (name: string, f: (s: number[]) => unknown) => { const t = performance.now(); let n = 0; for (let r = 0; r < 3; r++) for (const s of sets) n += (f(s) as unknown[]).length ?? 1; console.log(name, ((performance.now() - t) / 600).toFixed(3), 'ms/set'); };
for (let i = 0; i < 2; i++) {
time('json_each IN', (s) => a.all(JSON.stringify(s)));
time('json_each JOIN', (s) => b.all(JSON.stringify(s)));
time('get loop', (s) => { const db2 = db; return db2.transaction(() => s.map((id) => c.get(id)))(); });
time('placeholders', (s) => d.all(...s));
time('json_each IN (ids as text)', (s) => e.all(JSON.stringify(s.map(String))));
}
