/// <reference types="node" preserve="true" />
// The declarations use Node globals (AbortSignal, fetch, URL, NodeJS.ProcessEnv); @types/node is a dependency
// so a consumer type-checks with no @types of its own.
// The evidence-forest viewer: one self-contained HTML page per set of questions, and a terminal rendering.
export * from './forest-svg.ts';
export * from './format-forest-text.ts';
export * from './render-viewer-html.ts';
