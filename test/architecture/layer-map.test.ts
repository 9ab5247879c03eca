import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

interface Layer {
  name: string;
  paths: string[];
  mayImport: Set<string>;
}

/** The layer table of AGENTS.md, parsed (see the rules above the table there). */
function parseLayerMap(markdown: string): Layer[] {
  const section = markdown.slice(markdown.indexOf('## Layer map'));
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| ---') && !line.startsWith('| layer '));
  const layers: Layer[] = [];
  for (const row of rows.slice(0, rows.findIndex((r, i) => i > 0 && !r.startsWith('| ')) >>> 0)) {
    const [name, pathsCell, importsCell] = row
      .split('|')
      .slice(1, 4)
      .map((cell) => cell.trim());
    const paths = [...pathsCell!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
    const list = importsCell!.split(';')[0]!.trim();
    const mayImport = new Set<string>();
    if (list === 'everything above') for (const above of layers) mayImport.add(above.name);
    else if (list !== 'nothing') for (const item of list.split(',')) mayImport.add(item.trim());
    layers.push({ name: name!, paths, mayImport });
  }
  return layers;
}

/** The layer a repo-relative source path belongs to: a file beats a `*` pattern beats the longest folder. */
function layerOf(layers: readonly Layer[], path: string): string | undefined {
  let best: { layer: string; rank: number } | undefined;
  for (const layer of layers) {
    for (const pattern of layer.paths) {
      let rank = -1;
      if (pattern === path) rank = 1e6;
      else if (pattern.includes('*')) {
        const [before, after] = pattern.split('*') as [string, string];
        const rest = path.slice(before.length);
        if (path.startsWith(before) && path.endsWith(after) && !rest.includes('/')) rank = 1e5;
      } else if (pattern.endsWith('/') && path.startsWith(pattern)) rank = pattern.length;
      if (rank > (best?.rank ?? -1)) best = { layer: layer.name, rank };
    }
  }
  return best?.layer;
}

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

/** Relative runtime imports: static `import`/`export ... from` (not `import type`/`export type`) and `import()`. */
function runtimeImportsOf(source: string): string[] {
  const code = withoutComments(source);
  const found: string[] = [];
  for (const match of code.matchAll(/\b(import|export)\s+(type\s+)?([^'";]*?)\bfrom\s*['"]([^'"]+)['"]/g)) {
    if (match[2] === undefined) found.push(match[4]!);
  }
  for (const match of code.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) found.push(match[1]!);
  for (const match of code.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(match[1]!);
  return found.filter((specifier) => specifier.startsWith('.'));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : /\.(ts|mjs)$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Every runtime import in src/ that the map does not allow, as "from -> to (layer -> layer)". */
function violations(layers: readonly Layer[]): string[] {
  const byName = new Map(layers.map((layer) => [layer.name, layer]));
  const bad: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const from = relative(ROOT, file);
    const fromLayer = layerOf(layers, from);
    if (fromLayer === undefined) {
      bad.push(`${from}: in no layer`);
      continue;
    }
    for (const specifier of runtimeImportsOf(readFileSync(file, 'utf8'))) {
      const to = relative(ROOT, resolve(dirname(file), specifier));
      if (!to.startsWith('src/')) continue;
      const toLayer = layerOf(layers, to);
      if (toLayer === fromLayer || (toLayer !== undefined && byName.get(fromLayer)!.mayImport.has(toLayer)))
        continue;
      bad.push(`${from} -> ${to} (${fromLayer} -> ${toLayer ?? 'no layer'})`);
    }
  }
  return bad;
}

describe('AGENTS.md layer map is the code', () => {
  const layers = parseLayerMap(readFileSync(join(ROOT, 'AGENTS.md'), 'utf8'));

  it('parses the table: every layer names paths, and imports only layers defined above it', () => {
    expect(layers.length).toBeGreaterThan(10);
    const seen = new Set<string>();
    for (const layer of layers) {
      expect(layer.paths.length, layer.name).toBeGreaterThan(0);
      for (const name of layer.mayImport) expect(seen.has(name), `${layer.name} -> ${name}`).toBe(true);
      seen.add(layer.name);
    }
  });

  it('every runtime import in src/ follows the map', () => {
    expect(violations(layers)).toEqual([]);
  });

  it('the checks catch violations', () => {
    expect(layerOf(layers, 'src/store/archive-store-spec.ts')).toBe('ports');
    expect(layerOf(layers, 'src/store/sqlite-store.ts')).toBe('store');
    expect(layerOf(layers, 'src/retrieval/tokenize.ts')).toBe('text primitives');
    expect(
      runtimeImportsOf(
        "import type { A } from './a.ts';\nimport { b } from '../b.ts';\nexport { c } from './c.ts';\n" +
          "export type { D } from './d.ts';\nconst e = await import('./e.ts');\nimport { x } from 'zod';",
      ),
    ).toEqual(['../b.ts', './c.ts', './e.ts']);
    // A store module reaching into the pipeline would be reported.
    const store = layers.find((layer) => layer.name === 'store')!;
    expect(store.mayImport.has('pipeline')).toBe(false);
  });
});
