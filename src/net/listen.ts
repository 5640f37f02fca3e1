import type { AddressInfo, Server } from 'node:net';

/**
 * Binds `server` and resolves with the port it got (useful with port 0). A bind error rejects; later errors
 * (a client's reset, say) are swallowed here because the per-connection handlers own them.
 */
export function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      server.on('error', () => {});
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Closes `server` at once, cutting keep-alive connections (admin and test servers, not the proxy). */
export function closeNow(server: Server & { closeAllConnections(): void }): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
