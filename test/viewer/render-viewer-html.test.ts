import { describe, expect, it } from 'vitest';
import { renderViewerHtml } from '../../src/viewer/render-viewer-html.ts';
import { viewerFixture } from './viewer-fixture.ts';

describe('renderViewerHtml', () => {
  it('is one self-contained page: no external URLs, memory text escaped', async () => {
    const { result, records } = await viewerFixture();
    const html = renderViewerHtml([{ result, records }]);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('shows every pool candidate, every verified edge and every swap', async () => {
    const { result, records } = await viewerFixture();
    const html = renderViewerHtml([{ result, records }]);
    for (const candidate of result.pool)
      expect(html).toContain(`data-memory-id="${candidate.memoryId}" data-origin="${candidate.origin.kind}"`);
    expect(html.match(/<tr data-kept=/g)?.length).toBe(result.verifiedEdges.length);
    expect(html.match(/<tr data-step=/g)?.length ?? 0).toBe(result.forest.trace.swaps.length);
  });

  it('marks gold only in evaluation mode', async () => {
    const { result, records } = await viewerFixture();
    expect(renderViewerHtml([{ result, records }])).not.toContain('data-testid="gold-summary"');
    const html = renderViewerHtml([{ result, records, gold: ['m2', 'absent-id'] }]);
    expect(html).toContain('data-testid="gold-summary"');
    expect(html).toContain('never retrieved: absent-id');
  });
});
