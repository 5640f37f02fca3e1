import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DOWNLOAD_PATHS } from '../../bench/harness/backend-content.ts';
import { type GatewayManifestOptions, gatewayManifests } from '../../bench/harness/gateway-manifests.ts';
import { GRPC_METHOD_PATH, GRPC_REQUEST, grpcFrame, grpcMessages } from '../../bench/harness/grpc-wire.ts';
import { haproxyConfig } from '../../bench/harness/haproxy-config.ts';
import {
  nginxBackendConfig,
  nginxGrpcProxyConfig,
  nginxProxyConfig,
  nginxTlsPassthroughConfig,
} from '../../bench/harness/nginx-config.ts';
import { findScenarios } from '../../bench/harness/scenarios.ts';
import { derive } from '../../bench/harness/summarize.ts';
import { wrkUrl } from '../../bench/harness/wrk-load.ts';
import { snapshotOf, TRANSLATE_OPTIONS } from '../../bench/micro/fixtures.ts';
import { translate } from '../../src/gateway/translate.ts';
import { measuredRow } from './measured-row.ts';

/** The pure parts of the gRPC and TLS scenarios: generated peer configs, gateway manifests, gRPC framing. */
const UPSTREAM = [{ address: '127.0.0.1', port: 9000 }];
const COMMON = { dir: '/tmp/x', workers: 1 };
const TLS = { certFile: '/tmp/c/bench.crt', keyFile: '/tmp/c/bench.key' };

/** The certificate of the https-listener golden case (unit tests spawn no openssl). */
function goldenCertificate(): { certPem: string; keyPem: string } {
  const text = readFileSync(new URL('../golden/https-listener.in.yaml', import.meta.url), 'utf8');
  const secret = parseAllDocuments(text)
    .map((d) => d.toJS() as { kind: string; data?: Record<string, string> })
    .find((o) => o.kind === 'Secret');
  const decode = (key: string): string => Buffer.from(secret?.data?.[key] ?? '', 'base64').toString('utf8');
  return { certPem: decode('tls.crt'), keyPem: decode('tls.key') };
}

describe('nginx peer configs', () => {
  it('terminates HTTPS on the listen port and proxies plain HTTP', () => {
    const text = nginxProxyConfig(COMMON, 8443, UPSTREAM, TLS);
    expect(text).toContain('listen 127.0.0.1:8443 ssl http2 backlog=4096;');
    expect(text).toContain('ssl_certificate /tmp/c/bench.crt;');
    expect(text).toContain('ssl_certificate_key /tmp/c/bench.key;');
    expect(text).toContain('proxy_pass http://backend;');
    expect(nginxProxyConfig(COMMON, 8080, UPSTREAM)).not.toContain('ssl');
  });

  it('proxies gRPC from an h2c listen to grpc_pass with keep-alive', () => {
    const text = nginxGrpcProxyConfig(COMMON, 8080, UPSTREAM);
    expect(text).toContain('listen 127.0.0.1:8080 http2 backlog=4096;');
    expect(text).toContain('grpc_pass grpc://grpc_backend;');
    expect(text).toMatch(/upstream grpc_backend \{\s+server 127\.0\.0\.1:9000;\s+keepalive 64;/);
  });

  it('passes TLS through by SNI in a stream block, loading the module first where it is dynamic', () => {
    const text = nginxTlsPassthroughConfig(
      COMMON,
      8443,
      UPSTREAM,
      'localhost',
      '/usr/lib/nginx/modules/x.so',
    );
    expect(text.startsWith('load_module /usr/lib/nginx/modules/x.so;\n')).toBe(true);
    expect(text).toContain('ssl_preread on;');
    expect(text).toMatch(
      /map \$ssl_preread_server_name \$tls_upstream \{\s+localhost tls_backend;\s+default 127\.0\.0\.1:1;/,
    );
    expect(text).toContain('proxy_pass $tls_upstream;');
    expect(text).not.toContain('http {');
    expect(nginxTlsPassthroughConfig(COMMON, 8443, UPSTREAM, 'localhost', undefined)).not.toContain(
      'load_module',
    );
  });

  it('gives the backend an HTTPS listen beside the plain ones', () => {
    const text = nginxBackendConfig(COMMON, UPSTREAM, 'hi', '/tmp/www', {
      endpoint: { address: '127.0.0.1', port: 9443 },
      tls: TLS,
    });
    expect(text).toContain('listen 127.0.0.1:9000 backlog=4096;');
    expect(text).toContain('listen 127.0.0.1:9443 ssl http2 backlog=4096;');
    expect(text).toContain('ssl_certificate /tmp/c/bench.crt;');
  });
});

describe('haproxy peer configs', () => {
  it('keeps the HTTP config as it was', () => {
    const text = haproxyConfig(8080, UPSTREAM);
    expect(text).toContain('mode http');
    expect(text).toContain('  bind 127.0.0.1:8080 backlog 4096\n');
    expect(text).toContain('http-reuse always');
    expect(text).toContain('  server s0 127.0.0.1:9000\n');
  });

  it('terminates HTTPS with the combined PEM', () => {
    const text = haproxyConfig(8443, UPSTREAM, { kind: 'https', certificateFile: '/tmp/c/bench.pem' });
    expect(text).toContain('bind 127.0.0.1:8443 backlog 4096 ssl crt /tmp/c/bench.pem alpn h2,http/1.1');
    expect(text).toContain('  server s0 127.0.0.1:9000\n');
  });

  it('speaks h2 on both sides for gRPC', () => {
    const text = haproxyConfig(8080, UPSTREAM, { kind: 'grpc' });
    expect(text).toContain('bind 127.0.0.1:8080 backlog 4096 proto h2');
    expect(text).toContain('  server s0 127.0.0.1:9000 proto h2\n');
  });

  it('routes raw TLS by SNI in mode tcp', () => {
    const text = haproxyConfig(8443, UPSTREAM, { kind: 'tls-passthrough', serverName: 'localhost' });
    expect(text).toContain('mode tcp');
    expect(text).not.toContain('mode http');
    expect(text).not.toContain('http-reuse');
    expect(text).toContain('tcp-request content accept if { req_ssl_hello_type 1 }');
    expect(text).toContain('use_backend upstream if { req_ssl_sni -i localhost }');
  });
});

describe('gateway manifests for gRPC and TLS', () => {
  const service = { kind: 'service', endpoint: UPSTREAM[0] ?? { address: '', port: 0 } } as const;
  const kinds = (files: Record<string, string>): string[] =>
    Object.values(files).flatMap((text) =>
      parseAllDocuments(text).map((d) => String((d.toJS() as { kind: string }).kind)),
    );

  it('splits 10,000 routes over files the file source accepts (1 MiB each by default)', () => {
    const files = gatewayManifests({
      routes: { kind: 'grid', hosts: 1000, pathsPerHost: 10 },
      backend: service,
    });
    const routeFiles = Object.keys(files).filter((name) => name.startsWith('route'));
    expect(routeFiles).toHaveLength(10);
    for (const name of routeFiles) expect(Buffer.byteLength(files[name] ?? '')).toBeLessThan(1024 * 1024);
    const names = Object.values(files).flatMap((text) =>
      parseAllDocuments(text)
        .map((d) => d.toJS() as { kind: string; metadata: { name: string } })
        .filter((o) => o.kind === 'HTTPRoute')
        .map((o) => o.metadata.name),
    );
    expect(new Set(names).size).toBe(10_000);
    // Parsing 10 MiB of YAML takes seconds on a loaded 2-core machine: more than the default 5 s once.
  }, 30_000);

  it('routes gRPC with a GRPCRoute to an h2c Service port', () => {
    const options: GatewayManifestOptions = {
      routes: { kind: 'grpc' },
      backend: { ...service, appProtocol: 'kubernetes.io/h2c' },
    };
    expect(kinds(gatewayManifests(options))).toContain('GRPCRoute');
    const { table, statuses } = translate(snapshotOf(options), TRANSLATE_OPTIONS);
    expect(Object.values(table.backends).map((b) => b.protocol)).toEqual(['h2c']);
    expect(table.ports.map((p) => [p.port, p.protocol])).toEqual([[8080, 'HTTP']]);
    const route = statuses.find((s) => s.kind === 'GRPCRoute');
    expect(JSON.stringify(route)).toContain('"Accepted"');
    expect(JSON.stringify(route)).not.toContain('"False"');
  });

  it('terminates HTTPS with the certificate in a kubernetes.io/tls Secret', () => {
    const options: GatewayManifestOptions = {
      routes: { kind: 'catch-all' },
      backend: service,
      listener: 'HTTPS',
    };
    expect(() => gatewayManifests(options)).toThrow(/certificate/);
    const certificate = goldenCertificate();
    const secret = parseAllDocuments(gatewayManifests(options, certificate)['gateway.yaml'] ?? '')
      .map((d) => d.toJS() as { kind: string; type?: string; stringData?: Record<string, string> })
      .find((o) => o.kind === 'Secret');
    expect(secret?.type).toBe('kubernetes.io/tls');
    expect(secret?.stringData?.['tls.crt']).toBe(certificate.certPem);
    const { table } = translate(snapshotOf(options, certificate), TRANSLATE_OPTIONS);
    expect(table.ports.map((p) => [p.port, p.protocol])).toEqual([[8080, 'HTTPS']]);
  });

  it('passes TLS through on a TLS listener with a TLSRoute for the SNI', () => {
    const options: GatewayManifestOptions = {
      routes: { kind: 'tls', hostname: 'localhost' },
      backend: service,
      listener: 'TLS-passthrough',
    };
    const { table } = translate(snapshotOf(options), TRANSLATE_OPTIONS);
    const [listener] = table.tlsPorts?.[0]?.listeners ?? [];
    expect(listener?.mode).toBe('Passthrough');
    expect(listener?.routes.map((r) => r.hostname)).toEqual(['localhost']);
    expect(table.ports).toEqual([]);
  });
});

describe('gRPC wire and load helpers', () => {
  it('frames a message with a 5-byte prefix and reads it back', () => {
    const frame = grpcFrame(GRPC_REQUEST);
    expect(frame.length).toBe(GRPC_REQUEST.length + 5);
    expect(frame.readUInt32BE(1)).toBe(GRPC_REQUEST.length);
    expect(grpcMessages(Buffer.concat([frame, frame]))).toEqual([GRPC_REQUEST, GRPC_REQUEST]);
    expect(grpcMessages(frame.subarray(0, frame.length - 1))).toBeUndefined();
    expect(grpcMessages(Buffer.from([1, 0, 0, 0, 0]))).toBeUndefined();
  });

  it('dials wrk by the SNI name for https origins only', () => {
    expect(wrkUrl({ origin: 'https://127.0.0.1:8443', serverName: 'localhost' })).toBe(
      'https://localhost:8443',
    );
    expect(wrkUrl({ origin: 'http://127.0.0.1:8080', serverName: 'localhost' })).toBe(
      'http://127.0.0.1:8080',
    );
    expect(wrkUrl({ origin: 'https://127.0.0.1:8443' })).toBe('https://127.0.0.1:8443');
  });

  it('selects each new scenario alone, with its peers and load generator', () => {
    const [grpc, https, passthrough, bulk, h2] = findScenarios([
      'grpc-unary',
      'https-terminate',
      'tls-passthrough',
      'tls-passthrough-64k',
      'h2-terminate',
    ]);
    expect(grpc?.tools).toEqual(['grpc']);
    expect(grpc?.targets({ id: 'direct', kind: 'direct', label: '' })).toEqual([
      { host: 'bench.test', path: GRPC_METHOD_PATH },
    ]);
    for (const scenario of [https, passthrough, bulk, h2]) {
      expect(scenario?.configs(UPSTREAM).map((c) => c.kind)).toEqual([
        'direct',
        'gateway',
        'nginx',
        'haproxy',
      ]);
    }
    // gRPC also has Node's own HTTP/2 floor beside the C proxies.
    expect(grpc?.configs(UPSTREAM).map((c) => c.kind)).toEqual([
      'direct',
      'gateway',
      'nginx',
      'haproxy',
      'node-h2',
    ]);
    expect(h2?.tools).toEqual(['h2load']);
    expect(h2?.configs(UPSTREAM)[1]?.gateway?.listener).toBe('HTTPS');
    expect(https?.configs(UPSTREAM)[1]?.gateway?.listener).toBe('HTTPS');
    expect(passthrough?.configs(UPSTREAM)[1]?.gateway?.routes).toEqual({
      kind: 'tls',
      hostname: 'localhost',
    });
    expect(bulk?.configs(UPSTREAM)[1]?.gateway?.listener).toBe('TLS-passthrough');
    expect(bulk?.targets({ id: 'direct', kind: 'direct', label: '' })).toEqual([
      { host: 'bench.test', path: DOWNLOAD_PATHS['64k'] },
    ]);
  });
});

describe('gRPC and TLS findings', () => {
  it('compares the gateway with nginx and haproxy per core, at p99 and in RSS', () => {
    const row = (config: string, rps: number, cores: number, p99: number, rss: number) => ({
      scenario: 'grpc-unary',
      config,
      label: config,
      status: 'ok' as const,
      tool: 'grpc' as const,
      runs: [
        {
          tool: 'grpc' as const,
          requests: rps,
          durationSec: 1,
          rps,
          latencyMs: { p50: 1, p99, p999: p99, max: p99, mean: 1 },
          errors: 0,
          non2xx: 0,
          proxyCpuCores: cores,
          proxyRssBytes: rss * 1024 * 1024,
        },
      ],
    });
    const { findings } = derive({ name: 'grpc-unary' }, [
      row('direct', 10_000, 0, 5, 0),
      row('gateway', 2_000, 0.5, 40, 120),
      row('nginx', 8_000, 0.5, 10, 25),
      row('haproxy', 8_000, 0.25, 8, 16),
    ]);
    expect(findings).toEqual([
      'grpc: clusterset-gateway 4,000 req/s per proxy core: 25.0% of nginx, 12.5% of haproxy; p99 40.000 ms (nginx 10.000 ms, haproxy 8.000 ms); RSS 120 MiB (nginx 25 MiB, haproxy 16 MiB)',
    ]);
  });

  it('states relayed MB/s per proxy core where a scenario moves bulk data', () => {
    const row = (config: string, mb: number, cores: number) =>
      measuredRow('tls-passthrough-64k', config, {
        requests: 1000,
        durationSec: 2,
        rps: 500,
        proxyCpuCores: cores,
        proxyRssBytes: 100 * 1024 * 1024,
        bytesRead: mb * 2 * 1e6,
      });
    const { rows, findings } = derive({ name: 'tls-passthrough-64k' }, [
      row('gateway', 600, 0.75),
      row('nginx', 800, 0.5),
      row('haproxy', 800, 0.4),
    ]);
    expect(rows[0]?.mbPerSec).toBe(600);
    expect(findings[0]).toMatch(/; 600 MB\/s, 800 MB\/s per proxy core \(nginx 1,600, haproxy 2,000\)$/);
  });
});
