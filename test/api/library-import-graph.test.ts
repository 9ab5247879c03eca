import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const RECORDER = join(ROOT, 'test/support/record-loaded-modules.mjs');
// Absolute, so the child may run from any working folder.
const TSX = import.meta.resolve('tsx/esm');
const work = mkdtempSync(join(tmpdir(), 'gmx-import-graph-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Shells and heavy optional parts that the library entry must never load. */
const NOT_IN_LIBRARY = [
  /\/src\/(server|mcp|viewer|eval|cli|demo)\//,
  /\/node_modules\/(hono|@hono|@modelcontextprotocol|sharp|@img|tesseract\.js|@tesseract\.js-data|mailparser|exifr|pg|pg-pool|playwright-core)\//,
];

/** Runs `code` in a fresh node (TypeScript through tsx) and returns the URLs of every module it loaded. */
function loadedBy(code: string, args: string[] = []): string[] {
  const log = join(work, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  const result = spawnSync(
    process.execPath,
    ['--import', TSX, '--import', pathToFileURL(RECORDER).href, ...args, '--input-type=module', '-e', code],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, GRAPHMEMIX_LOADED_LOG: log }, timeout: 60_000 },
  );
  expect(result.stderr).not.toMatch(/Error/);
  expect(result.status).toBe(0);
  return readFileSync(log, 'utf8').trim().split('\n');
}

describe("import('graphmemix') loads the library only", () => {
  it('loads no server, MCP, viewer, eval, CLI, image or OCR module', () => {
    const loaded = loadedBy(
      `const gm = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'src/index.ts')).href)});
       if (typeof gm.openGraphmemix !== 'function') throw new Error('no openGraphmemix');`,
    );
    // The log saw the library itself (the recorder works), and nothing from the excluded list.
    expect(loaded.some((url) => url.endsWith('/src/graphmemix.ts'))).toBe(true);
    expect(loaded.filter((url) => NOT_IN_LIBRARY.some((pattern) => pattern.test(url)))).toEqual([]);
  });

  it('the check catches a shell: the server entry loads hono', () => {
    const loaded = loadedBy(
      `await import(${JSON.stringify(pathToFileURL(join(ROOT, 'src/server/index.ts')).href)});`,
    );
    expect(loaded.filter((url) => NOT_IN_LIBRARY.some((pattern) => pattern.test(url)))).not.toEqual([]);
  });

  it('graphmemix --help loads no command module and none of the library', () => {
    const log = join(work, 'help.txt');
    const result = spawnSync(
      process.execPath,
      ['--import', TSX, '--import', pathToFileURL(RECORDER).href, join(ROOT, 'src/cli/main.ts'), '--help'],
      { cwd: work, encoding: 'utf8', env: { ...process.env, GRAPHMEMIX_LOADED_LOG: log }, timeout: 60_000 },
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('retrieve [options] <question>');
    const loaded = readFileSync(log, 'utf8').trim().split('\n');
    expect(
      loaded.filter((url) => /-command\.ts$|\/src\/graphmemix\.ts$|\/node_modules\/zod\//.test(url)),
    ).toEqual([]);
  });
});
