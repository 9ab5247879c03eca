// Child process of `npm run bench:serve`: runs one load phase against --url and prints its LoadResult as JSON.
//   tsx bench/support/serve-load-client.ts --url U --clients C --k K (--duration-ms D | --import N)
import { parseArgs } from 'node:util';
import { load, loadWhileImporting } from './serve-load.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    clients: { type: 'string', default: '16' },
    k: { type: 'string', default: '10' },
    'duration-ms': { type: 'string', default: '10000' },
    import: { type: 'string', default: '0' },
  },
});
const target = { url: values.url!, clients: Number(values.clients), k: Number(values.k) };
const count = Number(values.import);
const result =
  count > 0 ? await loadWhileImporting(target, count) : await load(target, Number(values['duration-ms']));
process.stdout.write(`${JSON.stringify(result)}\n`);
