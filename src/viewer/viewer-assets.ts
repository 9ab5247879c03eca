/** Inline stylesheet and script of the viewer page (no network: the page must work as a saved file). */
export const VIEWER_CSS = `
:root { --fg:#1d232b; --muted:#5d6875; --line:#d5dbe2; --seed:#2f6fdb; --exp:#a45ad8; --gold:#1f9d55;
  --sel:#fff6d6; --drop:#b0b7bf; --bad:#c0392b; }
* { box-sizing: border-box; }
.media-strip { display:flex; flex-wrap:wrap; gap:6px; margin:4px 0; }
.media-strip img.thumb { max-height:90px; max-width:160px; border:1px solid var(--line); }
.media-strip img.strip { max-height:90px; max-width:100%; border:1px solid var(--line); }
.media-strip figure.frame { margin:0; text-align:center; font-size:11px; color:var(--muted); }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--fg);
  margin: 0; background: #f6f8fa; }
header.page { padding: 16px 24px; background: #fff; border-bottom: 1px solid var(--line); }
header.page h1 { margin: 0; font-size: 20px; }
header.page p { margin: 4px 0 0; color: var(--muted); }
main { padding: 16px 24px; }
section.question { background: #fff; border: 1px solid var(--line); border-radius: 8px; margin: 0 0 24px;
  padding: 16px 20px; }
section.question h2 { margin: 0 0 6px; font-size: 18px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: var(--muted); font-size: 12px; }
.flag { display: inline-block; background: #fdecea; color: var(--bad); border-radius: 4px; padding: 0 6px;
  margin-right: 4px; font-size: 12px; }
.answer { background: #eef6ff; border-left: 3px solid var(--seed); padding: 6px 10px; margin: 8px 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f0f3f6; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.selected td { background: var(--sel); }
tr.dropped td, tr[data-kept="false"] td { color: var(--drop); }
tr.gold td:first-child, li.gold > .ev-head { border-left: 4px solid var(--gold); }
.origin-seed { color: var(--seed); font-weight: 600; }
.origin-expanded { color: var(--exp); font-weight: 600; }
.badge { display: inline-block; border-radius: 4px; padding: 0 5px; font-size: 11px; background: #eef1f4; }
.badge.gold { background: #dcf5e6; color: var(--gold); }
.badge.anchor { background: #e6efff; color: var(--seed); }
ol.reading, ol.reading ol { list-style: none; padding-left: 0; margin: 0; }
ol.reading li { margin: 4px 0; }
.ev-head { padding-left: 6px; }
.ev-edge { color: var(--exp); font-size: 12px; }
.ev-text { color: var(--muted); }
svg.forest { background: #fbfcfd; border: 1px solid var(--line); border-radius: 6px; }
svg.forest .f-node rect { fill: #fff; stroke: var(--seed); stroke-width: 1.5; }
svg.forest .f-node.gold rect { stroke: var(--gold); stroke-width: 3; }
svg.forest .f-node text { font-size: 12px; fill: var(--fg); }
svg.forest .f-node .f-sub { fill: var(--muted); font-size: 11px; }
svg.forest .f-edge line { stroke: var(--exp); }
svg.forest .f-edge text { font-size: 10px; fill: var(--exp); paint-order: stroke; stroke: #fbfcfd; stroke-width: 3px; }
svg.objective-chart polyline { stroke: var(--seed); stroke-width: 2; }
svg.objective-chart circle { fill: var(--seed); }
svg.objective-chart text { font-size: 11px; fill: var(--muted); }
.hl, tr.hl td { outline: 2px solid #f5a623; }
.grid2 { display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 16px; }
@media (max-width: 900px) { .grid2 { grid-template-columns: 1fr; } }
`;

/**
 * Hovering a memory anywhere in a question highlights it everywhere else in that question (pool row,
 * edge rows, forest node, reading order); a checkbox hides pool rows that were not selected.
 */
export const VIEWER_JS = `
document.querySelectorAll('section.question').forEach(function (section) {
  section.addEventListener('mouseover', function (event) {
    var el = event.target.closest && event.target.closest('[data-memory-id]');
    section.querySelectorAll('.hl').forEach(function (n) { n.classList.remove('hl'); });
    if (!el) return;
    var id = el.getAttribute('data-memory-id');
    section.querySelectorAll('[data-memory-id]').forEach(function (n) {
      if (n.getAttribute('data-memory-id') === id) n.classList.add('hl');
    });
  });
  var toggle = section.querySelector('input.only-selected');
  if (toggle) toggle.addEventListener('change', function () {
    section.querySelectorAll('table.pool tbody tr').forEach(function (row) {
      row.hidden = toggle.checked && !row.classList.contains('selected');
    });
  });
});
`;
