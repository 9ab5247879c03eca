import type { CandidateEdge } from '../core/candidate-graph.ts';
import type { AnswerResult, PoolCandidate, RetrievalResult } from '../pipeline/retrieval-result.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { renderForestSvg } from './forest-svg.ts';
import { escapeHtml, fmt, truncate } from './html-escape.ts';
import { renderObjectiveChartSvg } from './objective-chart-svg.ts';
import { VIEWER_CSS, VIEWER_JS } from './viewer-assets.ts';

/** One question of the page. `gold` switches on evaluation mode for it. */
export interface ViewerQuestion {
  result: RetrievalResult | AnswerResult;
  /** Gold evidence memory ids (evaluation mode). */
  gold?: readonly string[];
  /** Records of pool candidates, for text snippets of memories not in the evidence packet. */
  records?: ReadonlyMap<string, MemoryRecord> | Readonly<Record<string, MemoryRecord>>;
  /** Heading override (e.g. a benchmark question id). */
  label?: string;
}

export interface ViewerOptions {
  title?: string;
  /** Line under the title (archive, run date). Nothing time-dependent is added implicitly. */
  subtitle?: string;
  /**
   * URL of a media thumbnail: signed GET /v1/media links (HTTP /view) or `data:` URIs (`inlineThumbnails`, a
   * self-contained file); '' for none. With it, evidence items show image thumbnails and video frame strips.
   */
  mediaUrl?: (ref: { memoryId: string; assetId: string; frame?: number }) => string;
}

/**
 * Renders ONE self-contained HTML page (inline CSS, JS and SVG; no network) showing, per question, how the
 * evidence forest came about: the pool in retrieval order, verifier scores and prizes, verified edges, the
 * 1-swap trajectory, the final trees in reading order and, in evaluation mode, which candidates are gold.
 * Used by the HTTP /view route, `graphmemix view`, the demo and the eval report.
 */
export function renderViewerHtml(questions: readonly ViewerQuestion[], options: ViewerOptions = {}): string {
  const title = options.title ?? 'graphmemix evidence forests';
  const sections = questions
    .map((question, index) => renderQuestion(question, index, options.mediaUrl))
    .join('\n');
  const imgSrc = options.mediaUrl ? "img-src data: 'self'" : 'img-src data:';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; ${imgSrc}">
<title>${escapeHtml(title)}</title>
<style>${VIEWER_CSS}</style></head>
<body><header class="page"><h1>${escapeHtml(title)}</h1>${
    options.subtitle ? `<p>${escapeHtml(options.subtitle)}</p>` : ''
  }<p>${questions.length} question${questions.length === 1 ? '' : 's'}. Seeds in blue, graph expansions in purple, gold evidence outlined green; hover a memory to find it in every panel.</p></header>
<main>${sections || '<p data-testid="empty">No questions.</p>'}</main>
<script>${VIEWER_JS}</script></body></html>
`;
}

function renderQuestion(
  question: ViewerQuestion,
  index: number,
  mediaUrl: ViewerOptions['mediaUrl'],
): string {
  const { result } = question;
  const gold = new Set(question.gold ?? []);
  const evalMode = question.gold !== undefined;
  const selected = new Set(result.forest.order);
  const byPool = new Map(result.pool.map((c) => [c.memoryId, c]));
  const rankOf = new Map(result.evidence.map((e) => [e.memoryId, e.rank]));
  const snippet = (id: string): string => snippetFor(id, question, result);

  const answer =
    'answer' in result && result.answered
      ? `<p class="answer" data-testid="answer"><b>Answer:</b> ${escapeHtml(result.answer)}</p>`
      : '';
  const flags = result.trace.flags.map((f) => `<span class="flag">${escapeHtml(f)}</span>`).join('');
  const timings = Object.entries(result.trace.timings)
    .map(([stage, ms]) => `${stage} ${fmt(ms ?? 0, 0)} ms`)
    .join(' · ');
  const components = Object.entries(result.trace.components)
    .map(([k, v]) => `${k}: ${v}`)
    .join(' · ');

  const forestSvg = renderForestSvg(result.forest.trees, (id) => {
    const candidate = byPool.get(id);
    return {
      ...(rankOf.has(id) ? { rank: rankOf.get(id)! } : {}),
      ...(candidate ? { prize: candidate.prize } : {}),
      label: snippet(id),
      gold: gold.has(id),
    };
  });

  return `<section class="question" data-testid="question" data-index="${index}" id="q${index + 1}">
<h2>${escapeHtml(question.label ?? `Q${index + 1}`)}: ${escapeHtml(result.question.prompt)}</h2>
<p class="meta">context ${escapeHtml(result.contextId)} · ${result.pool.length} candidates · ${result.evidence.length} selected · objective ${fmt(result.forest.objective)} · ${escapeHtml(timings)} (total ${fmt(result.trace.totalMs, 0)} ms)</p>
<p class="meta">${escapeHtml(components)}</p>${flags ? `<p>${flags}</p>` : ''}${answer}
${evalMode ? renderGoldSummary(gold, result, selected) : ''}
<h3>Final forest (${result.forest.trees.length} tree${result.forest.trees.length === 1 ? '' : 's'}, reading order)</h3>
<div class="scroll">${forestSvg}</div>
${renderReadingOrder(result, gold, snippet, mediaUrl ? (id) => mediaStrip(recordOf(question, id), mediaUrl) : () => '')}
<h3>Candidate pool (retrieval order)</h3>
<label class="meta"><input type="checkbox" class="only-selected"> selected only</label>
<div class="scroll">${renderPool(result.pool, selected, gold, evalMode, snippet)}</div>
<h3>Verified edges (${result.verifiedEdges.filter((e) => e.kept).length} kept of ${result.verifiedEdges.length})</h3>
<div class="scroll">${renderEdges(result, gold)}</div>
<h3>1-swap trajectory</h3>
${renderSwaps(result)}
</section>`;
}

function renderGoldSummary(gold: Set<string>, result: RetrievalResult, selected: Set<string>): string {
  const inPool = result.pool.filter((c) => gold.has(c.memoryId)).length;
  const inForest = [...gold].filter((id) => selected.has(id)).length;
  const missing = [...gold].filter((id) => !result.pool.some((c) => c.memoryId === id));
  return `<p class="meta" data-testid="gold-summary">evaluation mode: gold ${gold.size} · in pool ${inPool} · selected ${inForest}${
    missing.length > 0 ? ` · never retrieved: ${escapeHtml(missing.join(', '))}` : ''
  }</p>`;
}

function renderReadingOrder(
  result: RetrievalResult,
  gold: Set<string>,
  snippet: (id: string) => string,
  media: (id: string) => string,
): string {
  const items = result.evidence.map((item) => {
    const depth = depthOf(result, item.tree, item.memoryId);
    const edge = item.parent
      ? `<span class="ev-edge">↳ ${escapeHtml(item.parent.relationTypes.join('+'))} · ${escapeHtml(item.parent.role)} · w ${fmt(item.parent.weight, 2)} from ${escapeHtml(item.parent.memoryId)}</span> `
      : `<span class="badge">tree ${item.tree + 1} root</span> `;
    return `<li class="${gold.has(item.memoryId) ? 'gold' : ''}" data-memory-id="${escapeHtml(item.memoryId)}" style="margin-left:${depth * 22}px"><div class="ev-head"><b>#${item.rank}</b> ${edge}<code>${escapeHtml(item.memoryId)}</code> ${item.date ? `<span class="meta">${escapeHtml(item.date)}</span>` : ''} ${gold.has(item.memoryId) ? '<span class="badge gold">gold</span>' : ''}<br><span class="ev-text">${escapeHtml(truncate(item.text || snippet(item.memoryId), 240))}</span>${media(item.memoryId)}</div></li>`;
  });
  return `<ol class="reading" data-testid="reading-order">${items.join('')}</ol>`;
}

function renderPool(
  pool: readonly PoolCandidate[],
  selected: Set<string>,
  gold: Set<string>,
  evalMode: boolean,
  snippet: (id: string) => string,
): string {
  const rows = pool.map((c) => {
    const origin =
      c.origin.kind === 'seed'
        ? `<span class="origin-seed">seed</span> #${c.origin.rank + 1} via ${escapeHtml(c.origin.bestView)}`
        : `<span class="origin-expanded">expanded</span> from <code>${escapeHtml(c.origin.parentId)}</code> by ${escapeHtml(c.origin.relationTypes.join('+'))} (${fmt(c.origin.strength, 2)})`;
    const classes = [selected.has(c.memoryId) ? 'selected' : '', gold.has(c.memoryId) ? 'gold' : ''].filter(
      Boolean,
    );
    const text = snippet(c.memoryId);
    return `<tr class="${classes.join(' ')}" data-memory-id="${escapeHtml(c.memoryId)}" data-origin="${c.origin.kind}"><td class="num">${c.position + 1}</td><td><code>${escapeHtml(c.memoryId)}</code>${c.isAnchor ? ' <span class="badge anchor">anchor</span>' : ''}</td><td>${origin}</td><td class="num">${fmt(c.retrievalScore)}</td><td class="num">${fmt(c.verifierScore, 1)}</td><td class="num">${fmt(c.prize)}</td><td>${selected.has(c.memoryId) ? '✓' : ''}</td>${evalMode ? `<td>${gold.has(c.memoryId) ? '<span class="badge gold">gold</span>' : ''}</td>` : ''}<td title="${escapeHtml(text)}">${escapeHtml(truncate(text, 90))}</td></tr>`;
  });
  return `<table class="pool" data-testid="pool"><thead><tr><th>#</th><th>memory</th><th>origin</th><th>retrieval s</th><th>verifier v</th><th>prize p</th><th>in forest</th>${evalMode ? '<th>gold</th>' : ''}<th>text</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function renderEdges(result: RetrievalResult, gold: Set<string>): string {
  const inForest = new Set(result.forest.edges.map(edgeKey));
  const rows = result.verifiedEdges.map((e) => {
    const used = inForest.has(edgeKey(e));
    return `<tr data-kept="${e.kept}" data-in-forest="${used}" data-memory-id="${escapeHtml(e.b)}"><td><code>${escapeHtml(e.a)}</code>${gold.has(e.a) ? ' <span class="badge gold">gold</span>' : ''}</td><td><code>${escapeHtml(e.b)}</code>${gold.has(e.b) ? ' <span class="badge gold">gold</span>' : ''}</td><td>${escapeHtml(e.relationTypes.join('+'))}</td><td>${escapeHtml(e.role)}</td><td class="num">${e.incrementalSupport === undefined ? '' : fmt(e.incrementalSupport, 1)}</td><td class="num">${fmt(e.weight)}</td><td class="num">${fmt(e.cost)}</td><td>${e.kept ? 'kept' : 'dropped'}</td><td>${used ? '✓' : ''}</td></tr>`;
  });
  if (rows.length === 0)
    return '<p class="meta">No verified edges (no eligible anchor–candidate relation).</p>';
  return `<table class="edges" data-testid="edges"><thead><tr><th>anchor</th><th>candidate</th><th>relations</th><th>role</th><th>s_inc</th><th>weight w</th><th>cost c</th><th>status</th><th>in forest</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function renderSwaps(result: RetrievalResult): string {
  const t = result.forest.trace;
  const rows = t.swaps.map(
    (s, i) =>
      `<tr data-step="${i + 1}"><td class="num">${i + 1}</td><td data-memory-id="${escapeHtml(s.out)}"><code>${escapeHtml(s.out)}</code></td><td data-memory-id="${escapeHtml(s.in)}"><code>${escapeHtml(s.in)}</code></td><td class="num">${fmt(s.objective, 4)}</td></tr>`,
  );
  const list = (ids: readonly string[]) => ids.map((id) => `<code>${escapeHtml(id)}</code>`).join(' ') || '—';
  const chart = renderObjectiveChartSvg([t.initialObjective, ...t.swaps.map((s) => s.objective)]);
  return `<div class="grid2"><div>
<p class="meta">initial set (objective ${fmt(t.initialObjective, 4)}): ${list(t.initial)}</p>
<table class="swaps" data-testid="swaps"><thead><tr><th>step</th><th>out</th><th>in</th><th>objective</th></tr></thead><tbody>${rows.join('') || '<tr><td colspan="4" class="meta">no improving swap</td></tr>'}</tbody></table>
<p class="meta">proposal (objective ${fmt(t.proposalObjective, 4)}): ${list(t.proposal)}</p>
<p class="meta" data-testid="dropped">dropped by exact refinement (${escapeHtml(t.refineMethod)}): ${list(t.dropped)}</p>
<p class="meta">final objective ${fmt(t.finalObjective, 4)}</p></div><div>${chart}</div></div>`;
}

function recordOf(question: ViewerQuestion, id: string): MemoryRecord | undefined {
  const records = question.records;
  return records instanceof Map
    ? (records as ReadonlyMap<string, MemoryRecord>).get(id)
    : (records as Readonly<Record<string, MemoryRecord>> | undefined)?.[id];
}

/**
 * Thumbnails of a memory's images (at most 4) and its video frames with their times: the stored frame strip
 * when the digest made one, else one thumbnail per frame (archives digested before strips were stored).
 */
function mediaStrip(record: MemoryRecord | undefined, url: NonNullable<ViewerOptions['mediaUrl']>): string {
  if (!record) return '';
  const cells: string[] = [];
  for (const asset of record.assets) {
    if (asset.kind === 'image' && asset.uri !== undefined && cells.length < 4) {
      if (url({ memoryId: record.id, assetId: asset.id }) === '') continue;
      cells.push(
        `<img class="thumb" loading="lazy" alt="${escapeHtml(asset.id)}" src="${escapeHtml(url({ memoryId: record.id, assetId: asset.id }))}">`,
      );
    }
    const strip =
      asset.kind === 'video' && asset.thumbnail !== undefined
        ? url({ memoryId: record.id, assetId: asset.id })
        : '';
    if (strip !== '') {
      // The frame strip the media digest stored: one image for the sampled frames, their times below it.
      const times = (asset.frameTimes ?? []).map((time) => `${fmt(time, 1)} s`).join(' · ');
      cells.push(
        `<figure class="frame-strip" data-testid="frame-strip"><img class="strip" loading="lazy" alt="frames of ${escapeHtml(asset.id)}" src="${escapeHtml(strip)}"><figcaption>${escapeHtml(times)}</figcaption></figure>`,
      );
      continue;
    }
    for (const [i] of (asset.frames ?? []).entries()) {
      if (url({ memoryId: record.id, assetId: asset.id, frame: i }) === '') continue;
      const time = asset.frameTimes?.[i];
      cells.push(
        `<figure class="frame"><img class="thumb" loading="lazy" alt="frame ${i + 1}" src="${escapeHtml(url({ memoryId: record.id, assetId: asset.id, frame: i }))}"><figcaption>${time === undefined ? '' : `${fmt(time, 1)} s`}</figcaption></figure>`,
      );
    }
  }
  if (record.media?.status === 'pending') cells.push('<span class="badge">media pending</span>');
  if (record.media?.status === 'failed') cells.push('<span class="badge">media failed</span>');
  return cells.length === 0
    ? ''
    : `<div class="media-strip" data-testid="media-strip">${cells.join('')}</div>`;
}

function snippetFor(id: string, question: ViewerQuestion, result: RetrievalResult): string {
  const item = result.evidence.find((e) => e.memoryId === id);
  if (item?.text) return item.text;
  const record = recordOf(question, id);
  if (!record) return '';
  if (record.text) return record.text;
  const derived = record.assets.flatMap((a) => [...(a.derived?.captions ?? []), a.derived?.ocr ?? '']);
  return derived.filter(Boolean).join(' · ');
}

function depthOf(result: RetrievalResult, treeIndex: number, id: string): number {
  const tree = result.forest.trees[treeIndex];
  let depth = 0;
  let current = id;
  while (tree?.parents[current] && depth < 64) {
    current = tree.parents[current]!.parentId;
    depth++;
  }
  return depth;
}

function edgeKey(edge: CandidateEdge): string {
  return edge.a < edge.b ? `${edge.a}|${edge.b}` : `${edge.b}|${edge.a}`;
}
