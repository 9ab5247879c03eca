/// <reference types="node" preserve="true" />
// The declarations use Node globals (AbortSignal, fetch, URL, NodeJS.ProcessEnv); @types/node is a dependency
// so a consumer type-checks with no @types of its own.
// The HTTP API shell (package entry `graphmemix/server`): a hono app over an open archive, and a listener.
export { createServer, type ServerOptions } from './create-server.ts';
export { apiKeysFromEnv, type RunningServer, type StartServerOptions, startServer } from './start-server.ts';
