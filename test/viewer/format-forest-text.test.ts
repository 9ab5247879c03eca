import { describe, expect, it } from 'vitest';
import { formatForestText } from '../../src/viewer/format-forest-text.ts';
import { viewerFixture } from './viewer-fixture.ts';

describe('formatForestText', () => {
  it('prints every selected memory once, children indented under parents with relation and role', async () => {
    const { result } = await viewerFixture();
    const text = formatForestText(result);
    for (const id of result.forest.order) expect(text.match(new RegExp(`\\] ${id} `, 'g'))?.length).toBe(1);
    expect(text.match(/^tree \d+$/gm)?.length).toBe(result.forest.trees.length);
    for (const tree of result.forest.trees) {
      for (const [child, { edge }] of Object.entries(tree.parents)) {
        const lines = text.split('\n');
        const at = lines.findIndex((line) => line.includes(`] ${child} `));
        expect(lines[at - 1]).toContain(`└─ ${edge.relationTypes.join('+')} · ${edge.role}`);
        // Indented deeper than its parent.
        const parentLine = lines.find((line) => line.includes(`] ${tree.parents[child]!.parentId} `))!;
        expect(lines[at]!.search(/\S/)).toBeGreaterThan(parentLine.search(/\S/));
      }
    }
  });
});
