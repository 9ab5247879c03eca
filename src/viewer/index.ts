// The evidence-forest viewer: one self-contained HTML page per set of questions, and a terminal rendering.
export * from './forest-svg.ts';
export * from './format-forest-text.ts';
export * from './render-viewer-html.ts';
