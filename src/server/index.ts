// The HTTP API shell (package entry `graphmemix/server`): a hono app over an open archive, and a listener.
export { createServer, type ServerOptions } from './create-server.ts';
export { apiKeysFromEnv, type RunningServer, type StartServerOptions, startServer } from './start-server.ts';
