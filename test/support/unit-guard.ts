/**
 * Setup file of the `unit` project: a unit test is pure, so listening on or connecting a socket, or starting
 * a process, throws. A test that needs those belongs in the `e2e` project (see vitest.config.ts).
 * Nor does it wait on the wall clock: a real timer that fires fails the test (real-time-guard.ts); use
 * vi.useFakeTimers() or an injected clock, or wait for an event.
 */
import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { afterEach } from 'vitest';
import { installRealTimeGuard, takeRealTimeWaits } from './real-time-guard.ts';

const refuse = (what: string) => () => {
  throw new Error(`unit tests do not ${what}: name it *.e2e.test.ts (vitest.config.ts)`);
};

net.Server.prototype.listen = refuse('listen on sockets');
net.Socket.prototype.connect = refuse('connect sockets');
dgram.Socket.prototype.bind = refuse('bind sockets');
dgram.Socket.prototype.send = refuse('send datagrams');
// spawn, fork, exec and execFile all start through ChildProcess#spawn (an internal, untyped method).
(childProcess.ChildProcess.prototype as unknown as { spawn: () => never }).spawn = refuse('spawn processes');
for (const name of ['spawnSync', 'execSync', 'execFileSync'] as const) {
  childProcess[name] = refuse('spawn processes');
}
syncBuiltinESMExports();

installRealTimeGuard();
afterEach(() => {
  const waits = takeRealTimeWaits();
  if (waits.length > 0) {
    throw new Error(
      `unit tests do not wait on real time (use fake timers or an event):\n${waits.join('\n')}`,
    );
  }
});
