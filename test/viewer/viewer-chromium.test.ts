import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderViewerHtml } from '../../src/viewer/render-viewer-html.ts';
import { viewerFixture } from './viewer-fixture.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);

describe.skipIf(!hasChromium)('viewer in headless Chromium', () => {
  let context: BrowserContext;
  let userDataDir: string;
  beforeAll(async () => {
    // A fresh profile per run, so no cached state or extension leaks in.
    userDataDir = mkdtempSync(join(tmpdir(), 'gmx-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  });
  afterAll(async () => {
    await context?.close();
    rmSync(userDataDir, { recursive: true, force: true });
  });

  it('renders pool, edges, swaps and the forest drawing, offline', async () => {
    const { result, records } = await viewerFixture();
    const dir = mkdtempSync(join(tmpdir(), 'gmx-viewer-'));
    const file = join(dir, 'view.html');
    writeFileSync(file, renderViewerHtml([{ result, records, gold: ['m2'] }], { title: 'test page' }));
    const page = await context.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith('file:')) requests.push(request.url());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`file://${file}`);

    expect(await page.title()).toBe('test page');
    expect(await page.locator('[data-testid="question"]').count()).toBe(1);
    expect(await page.locator('table.pool tbody tr').count()).toBe(result.pool.length);
    expect(await page.locator('table.pool tr[data-origin="expanded"]').count()).toBe(
      result.pool.filter((c) => c.origin.kind === 'expanded').length,
    );
    expect(await page.locator('table.edges tbody tr').count()).toBe(result.verifiedEdges.length);
    expect(await page.locator('table.edges tr[data-kept="false"]').count()).toBeGreaterThan(0);
    expect(await page.locator('[data-testid="reading-order"] > li').count()).toBe(result.evidence.length);
    expect(await page.locator('svg.forest g.f-node').count()).toBe(result.forest.order.length);
    expect(await page.locator('svg.forest g.f-edge').count()).toBe(result.forest.edges.length);
    expect(await page.locator('table.swaps tr[data-step]').count()).toBe(result.forest.trace.swaps.length);
    expect(await page.locator('table.pool tr.gold').count()).toBe(
      result.pool.some((c) => c.memoryId === 'm2') ? 1 : 0,
    );

    // The forest drawing has real size and sits inside the page.
    const box = await page.locator('svg.forest').boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(150);
    expect(box?.height ?? 0).toBeGreaterThan(40);

    // The inline script works: "selected only" hides candidates outside the forest.
    await page.locator('input.only-selected').check();
    expect(await page.locator('table.pool tbody tr:visible').count()).toBe(result.forest.order.length);
    // Hover highlights the memory in every panel.
    const firstId = result.forest.order[0]!;
    await page.locator(`svg.forest g.f-node[data-memory-id="${firstId}"]`).hover();
    expect(await page.locator(`table.pool tr.hl[data-memory-id="${firstId}"]`).count()).toBe(1);

    // Screenshot: expected size, not blank (several distinct colours, not one flat fill).
    const png = await page.screenshot({ fullPage: false });
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([1280, 900]);
    const colours = new Set<number>();
    for (let i = 0; i < data.length; i += info.channels * 97)
      colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
    expect(colours.size).toBeGreaterThan(5);

    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
