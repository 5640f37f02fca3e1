import { createRequire } from 'node:module';
import type * as Undici from 'undici';

// The parts of undici the proxy uses, loaded from their own modules. undici's index also loads fetch,
// WebSocket, EventSource, the HTTP cache and the mock agent: 3.1 MiB of heap that never goes away and 90 ms at
// every start, for nothing the gateway calls. The files are plain CommonJS with no exports map in the way;
// test/proxy/undici-parts.test.ts checks they are the index's own exports, so an undici update that moves them
// fails there.
const require = createRequire(import.meta.url);

export const Pool: typeof Undici.Pool = require('undici/lib/dispatcher/pool.js');
export type Pool = Undici.Pool;
export const Client: typeof Undici.Client = require('undici/lib/dispatcher/client.js');
export type Client = Undici.Client;
export const buildConnector: typeof Undici.buildConnector = require('undici/lib/core/connect.js');
export type Connector = Undici.buildConnector.connector;
export const errors: typeof Undici.errors = require('undici/lib/core/errors.js');
