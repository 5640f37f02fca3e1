import { isIPv4, isIPv6 } from 'node:net';

/**
 * The string formats kube-openapi checks for CRDs (k8s.io/apiextensions-apiserver supported formats); an
 * unknown format is not checked, as there.
 */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const HOSTNAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i;

const CHECKS: Readonly<Record<string, (value: string) => boolean>> = {
  'date-time': (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)),
  byte: (v) => BASE64.test(v),
  ipv4: (v) => isIPv4(v),
  ipv6: (v) => isIPv6(v),
  uuid: (v) => UUID.test(v),
  hostname: (v) => v.length <= 255 && HOSTNAME.test(v),
  cidr: (v) => {
    const [ip, bits, extra] = v.split('/');
    if (ip === undefined || bits === undefined || extra !== undefined || !/^\d{1,3}$/.test(bits))
      return false;
    return isIPv4(ip) ? Number(bits) <= 32 : isIPv6(ip) && Number(bits) <= 128;
  },
};

/** undefined when the format is not one the API server checks. */
export function formatCheck(format: string | undefined): ((value: string) => boolean) | undefined {
  return format === undefined ? undefined : CHECKS[format];
}
