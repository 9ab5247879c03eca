// A child process serving MCP over stdio on the fake Graphmemix, seeded with two users. Used by the MCP
// transport test so the real stdio framing is exercised even before the real pipeline exists.
import { serveMcpStdio } from '../../src/mcp/serve-mcp.ts';
import { createFakeGraphmemix } from './fake-graphmemix.ts';

const graphmemix = createFakeGraphmemix();
await graphmemix.addMemories('alice', [
  { id: 'a1', text: 'Alice moved the team offsite to Sintra on May 12', timestamp: '2024-05-01' },
  { id: 'a2', text: 'Alice booked the Sintra train tickets', timestamp: '2024-05-02' },
]);
await graphmemix.addMemories('bob', [
  { id: 'b1', text: 'Bob secret: offsite in Sintra is a surprise party' },
]);
await serveMcpStdio(graphmemix);
