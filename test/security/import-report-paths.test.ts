import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SecurityWorld, startSecurityWorld } from './security-harness.ts';

// Round 52 audit: the import route's report named the server's scratch folder (`<db>.media/.scratch/import-XXXX/`)
// in every rejection and warning, which tells a client where the archive lives.
let world: SecurityWorld;
beforeAll(async () => {
  world = await startSecurityWorld();
});
afterAll(async () => {
  await world.close();
});

async function importFile(name: string, content: string): Promise<{ status: number; text: string }> {
  const form = new FormData();
  form.set('user_id', 'alice');
  form.set('format', 'unified');
  form.set('file', new File([content], name));
  const response = await world.app.request('/v1/memories/import', {
    method: 'POST',
    headers: { authorization: 'Bearer ka' },
    body: form,
  });
  return { status: response.status, text: await response.text() };
}

describe('the import report names the uploaded file, not the server folders', () => {
  it('rejections and warnings carry the file name relative to the upload', async () => {
    const lines = [
      JSON.stringify({ id: 'ok', text: 'a line that imports' }),
      '{not json',
      JSON.stringify({ id: 'img', text: 'x', assets: [{ id: 'a', kind: 'image', uri: '/etc/passwd' }] }),
    ].join('\n');
    const { status, text } = await importFile('notes.jsonl', `${lines}\n`);
    expect(status).toBe(200);
    const report = JSON.parse(text) as { rejected: { file?: string }[]; warnings: string[] };
    expect(report.rejected.length).toBeGreaterThan(0);
    expect(report.rejected.every((r) => r.file === undefined || r.file === 'notes.jsonl')).toBe(true);
    expect(text).not.toContain(world.mediaDir);
    expect(text).not.toContain('.scratch');
  });
});
