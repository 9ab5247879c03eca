// Prepare helper entry when graphmemix runs from its TypeScript sources (no build step): registers tsx's loader
// in this thread, as bin/graphmemix.js does for the main thread, then loads the real helper.
import { register } from 'tsx/esm/api';

register();
await import('./prepare-worker-main.ts');
