import Database from 'better-sqlite3';
import { migrate } from '../src/store/migrations.ts';
const db = new Database(':memory:');
migrate(db, ':memory:');
for (const sql of [
  `SELECT rowid AS id, memory_id, kind, key, vector FROM vectors WHERE rowid IN (SELECT value FROM json_each(?)) AND context_id = ? AND space = ? AND changed <= ?`,
  `SELECT v.rowid AS id, v.memory_id, v.kind, v.key, v.vector FROM json_each(?) AS j CROSS JOIN vectors AS v ON v.rowid = j.value WHERE v.context_id = ? AND v.space = ? AND v.changed <= ?`,
  `SELECT rowid AS id, memory_id, kind, key, vector FROM vectors WHERE context_id = ? AND space = ? AND changed > ?`,
]) console.log(db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(sql.split('?').length === 5 ? ['[1]', 'c', 's', 1] : ['c', 's', 1])).map((r: any) => r.detail));
