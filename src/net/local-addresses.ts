import { networkInterfaces, platform } from 'node:os';

/**
 * Whether an IP address belongs to this host, so a listener can bind it: an interface address, or (on Linux,
 * where the whole 127.0.0.0/8 is routed to `lo`) any IPv4 loopback address. Interfaces are read per call:
 * addresses come and go, and this runs once per translation, not per request.
 */
export function isLocalAddress(address: string): boolean {
  if (platform() === 'linux' && /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address)) return true;
  const normalized = address.toLowerCase();
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) if (info.address.toLowerCase() === normalized) return true;
  }
  return false;
}
