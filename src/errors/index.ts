export * from './error-codes.ts';
export * from './graphmemix-error.ts';
