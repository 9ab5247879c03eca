// Read worker entry when graphmemix runs from its TypeScript sources (no build step): registers tsx's loader in
// this thread, as bin/graphmemix.js does for the main thread, then loads the real worker.
import { register } from 'tsx/esm/api';

register();
await import('./read-worker-main.ts');
