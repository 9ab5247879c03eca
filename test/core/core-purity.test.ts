import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CORE_DIR = join(import.meta.dirname, '../../src/core');
const ALLOWED_IMPORT = /^(\.\/[^/]+\.ts|\.\.\/types\/[\w./-]+\.ts|\.\.\/errors\/[\w./-]+\.ts)$/;
const FORBIDDEN: [string, RegExp][] = [
  ['await', /\bawait\b/],
  ['async', /\basync\b/],
  ['Date.now', /\bDate\.now\b/],
  ['new Date', /\bnew\s+Date\b/],
  ['Math.random', /\bMath\.random\b/],
  ['process.', /\bprocess\./],
  ['performance', /\bperformance\./],
  ['require(', /\brequire\s*\(/],
  ['dynamic import(', /\bimport\s*\(/],
];

/** Source with comments removed so a doc comment may mention what the code must not do. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/\b(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g)) {
    specifiers.push(match[1]!);
  }
  for (const match of source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) specifiers.push(match[1]!);
  return specifiers;
}

describe('src/core stays pure', () => {
  const files = readdirSync(CORE_DIR).filter((name) => name.endsWith('.ts'));

  it('has source files to check', () => {
    expect(files.length).toBeGreaterThan(3);
  });

  it.each(files)('%s imports only ./, ../types and ../errors', (name) => {
    const source = withoutComments(readFileSync(join(CORE_DIR, name), 'utf8'));
    const bad = importsOf(source).filter((specifier) => !ALLOWED_IMPORT.test(specifier));
    expect(bad).toEqual([]);
  });

  it.each(files)('%s uses no clock, randomness, process or await', (name) => {
    const source = withoutComments(readFileSync(join(CORE_DIR, name), 'utf8'));
    const found = FORBIDDEN.filter(([, pattern]) => pattern.test(source)).map(([label]) => label);
    expect(found).toEqual([]);
  });

  it('the checks catch violations', () => {
    const sample = "import { readFileSync } from 'node:fs';\nconst t = Date.now();\nawait x;";
    expect(importsOf(sample).filter((s) => !ALLOWED_IMPORT.test(s))).toEqual(['node:fs']);
    expect(FORBIDDEN.filter(([, p]) => p.test(sample)).map(([l]) => l)).toEqual(['await', 'Date.now']);
  });
});
