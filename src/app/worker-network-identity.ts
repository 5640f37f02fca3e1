import type { NetworkRuntime } from '../admin/network-report.ts';

export type NetworkIdentityReport = NetworkRuntime['identity'];

/**
 * What the Gateway condition says under `--workers`, where each worker loads the network identity itself: the
 * worker whose identity is worst off speaks for all, since a peer's connection may land on any of them. None
 * loaded beats a problem, a problem beats none, and among loaded ones the certificate that ends first.
 */
export function worstNetworkIdentity(
  reports: Iterable<NetworkIdentityReport>,
): NetworkIdentityReport | undefined {
  let worst: NetworkIdentityReport | undefined;
  for (const report of reports) if (worst === undefined || worseThan(report, worst)) worst = report;
  return worst;
}

function worseThan(a: NetworkIdentityReport, b: NetworkIdentityReport): boolean {
  const aLoaded = a.notAfter !== undefined;
  const bLoaded = b.notAfter !== undefined;
  if (aLoaded !== bLoaded) return !aLoaded;
  if (a.problems.length !== b.problems.length) return a.problems.length > b.problems.length;
  if (!aLoaded || !bLoaded) return false;
  return Date.parse(a.notAfter as string) < Date.parse(b.notAfter as string);
}

/** A report's identity for change detection: everything but the seconds left, which the clock alone moves. */
export function identityKey(report: NetworkIdentityReport): string {
  const { expiresInSeconds: _left, ...rest } = report;
  return JSON.stringify(rest);
}
