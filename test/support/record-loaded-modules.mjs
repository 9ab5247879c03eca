// `node --import <this file>`: appends the URL of every module the process loads to $GRAPHMEMIX_LOADED_LOG,
// one per line (module hooks run on their own thread, so the hook writes the file itself). Used to assert
// what `import('graphmemix')` and `graphmemix --help` load (test/api/library-import-graph.test.ts and
// scripts/consumer-test.sh).
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (process.env.GRAPHMEMIX_LOADED_LOG) appendFileSync(process.env.GRAPHMEMIX_LOADED_LOG, url + '\\n');
  return next(url, context);
}`)}`,
);
