export * from './email-metadata.ts';
export * from './memory-record.ts';
export * from './question.ts';
export * from './relation.ts';
export * from './view.ts';
