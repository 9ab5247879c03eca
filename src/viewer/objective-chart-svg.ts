import { fmt } from './html-escape.ts';

/**
 * A small line chart of the 1-swap objective: the initial value, then one point per accepted swap.
 * Pure SVG so the exported page stays self-contained.
 */
export function renderObjectiveChartSvg(values: readonly number[]): string {
  const width = 320;
  const height = 120;
  const pad = 24;
  if (values.length === 0) return '';
  const min = Math.min(...values);
  const max = Math.max(...values);
  const span = max - min || 1;
  const step = values.length > 1 ? (width - 2 * pad) / (values.length - 1) : 0;
  const points = values.map((value, i) => ({
    x: pad + i * step,
    y: height - pad - ((value - min) / span) * (height - 2 * pad),
  }));
  const path = points.map((p) => `${fmt(p.x, 1)},${fmt(p.y, 1)}`).join(' ');
  const dots = points
    .map(
      (p, i) =>
        `<circle cx="${fmt(p.x, 1)}" cy="${fmt(p.y, 1)}" r="3"><title>${i === 0 ? 'initial' : `swap ${i}`}: ${fmt(values[i] ?? 0, 4)}</title></circle>`,
    )
    .join('');
  return (
    `<svg class="objective-chart" data-testid="objective-chart" xmlns="http://www.w3.org/2000/svg" ` +
    `width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="objective per swap">` +
    `<text x="${pad}" y="14">objective ${fmt(values[0] ?? 0, 3)} → ${fmt(values[values.length - 1] ?? 0, 3)}</text>` +
    `<polyline points="${path}" fill="none"/>${dots}</svg>`
  );
}
