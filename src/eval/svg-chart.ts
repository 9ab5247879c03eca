/**
 * Minimal dependency-free SVG charts for the evaluation report: horizontal bars (recall by selector, by
 * question type) and a scatter (accuracy against lifecycle time). Values are escaped; output is deterministic.
 */
export interface Bar {
  label: string;
  value: number;
}

export function barChartSvg(
  title: string,
  bars: readonly Bar[],
  options: { max?: number; unit?: string } = {},
): string {
  const width = 640;
  const rowHeight = 24;
  const labelWidth = 180;
  const top = 36;
  const height = top + rowHeight * bars.length + 16;
  const max = options.max ?? Math.max(1e-9, ...bars.map((bar) => bar.value));
  const plotWidth = width - labelWidth - 80;
  const rows = bars.map((bar, index) => {
    const y = top + index * rowHeight;
    const w = Math.max(0, (bar.value / max) * plotWidth);
    return [
      `<text x="${labelWidth - 8}" y="${y + 16}" text-anchor="end">${escapeXml(bar.label)}</text>`,
      `<rect x="${labelWidth}" y="${y + 4}" width="${w.toFixed(1)}" height="${rowHeight - 8}" fill="#4a7bd0"/>`,
      `<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + 16}">${bar.value.toFixed(2)}${escapeXml(options.unit ?? '')}</text>`,
    ].join('');
  });
  return svg(width, height, title, rows.join('\n'));
}

export interface Point {
  label: string;
  x: number;
  y: number;
}

export function scatterSvg(title: string, points: readonly Point[], axes: { x: string; y: string }): string {
  const width = 640;
  const height = 400;
  const margin = { left: 60, right: 20, top: 40, bottom: 50 };
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const xMax = Math.max(1e-9, ...xs) * 1.1;
  const yMin = Math.min(0, ...ys);
  const yMax = Math.max(1e-9, ...ys) * 1.1;
  const px = (x: number) => margin.left + (x / xMax) * (width - margin.left - margin.right);
  const py = (y: number) =>
    height - margin.bottom - ((y - yMin) / (yMax - yMin)) * (height - margin.top - margin.bottom);
  const body = [
    `<line x1="${margin.left}" y1="${height - margin.bottom}" x2="${width - margin.right}" y2="${height - margin.bottom}" stroke="#333"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${height - margin.bottom}" stroke="#333"/>`,
    `<text x="${width / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(axes.x)}</text>`,
    `<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})" text-anchor="middle">${escapeXml(axes.y)}</text>`,
    ...points.map(
      (p) =>
        `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="5" fill="#d0584a"/>` +
        `<text x="${(px(p.x) + 8).toFixed(1)}" y="${(py(p.y) - 6).toFixed(1)}">${escapeXml(p.label)}</text>`,
    ),
  ];
  return svg(width, height, title, body.join('\n'));
}

export function escapeXml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );
}

function svg(width: number, height: number, title: string, body: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    body,
    '</svg>',
  ].join('\n');
}
