import type { Server } from 'node:net';
import type { Duplex } from 'node:stream';
import { listen } from '../../net/listen.ts';

/**
 * A layer-4 listening server and every socket it accepted or opened, so that closing it stops accepting at
 * once and destroys whatever is still open when the drain time is up.
 */
export class DrainingServer {
  readonly #server: Server;
  readonly #sockets = new Set<Duplex>();
  #boundPort = 0;

  constructor(server: Server) {
    this.#server = server;
  }

  get boundPort(): number {
    return this.#boundPort;
  }

  /** Counts the socket among those destroyed at the end of a drain, until it closes. */
  track(socket: Duplex): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }

  async listen(host: string, port: number): Promise<number> {
    this.#boundPort = await listen(this.#server, host, port);
    return this.#boundPort;
  }

  close(drainMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        for (const socket of this.#sockets) socket.destroy();
      }, drainMs);
      timer.unref();
      this.#server.close(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
