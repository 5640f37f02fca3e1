import { describe, expect, it } from 'vitest';
import { parseCli } from '../../src/cli/args.ts';
import { helpText } from '../../src/cli/flags.ts';

describe('parseCli', () => {
  it('defaults to the demo on loopback', () => {
    const cli = parseCli([], {});
    expect(cli).toMatchObject({
      source: { kind: 'demo' },
      address: '127.0.0.1',
      adminPort: 9901,
      listenerPortOffset: 0,
    });
    expect(cli.controllerName).toBe('clusterset-gateway.io/gateway-controller');
  });

  it('translates on a thread of its own unless --no-translation-thread', () => {
    expect(parseCli([], {}).translationThread).toBe(true);
    expect(parseCli(['--translation-thread'], {}).translationThread).toBe(true);
    expect(parseCli(['--no-translation-thread'], {}).translationThread).toBe(false);
  });

  it('runs the translation thread 10 nice steps down unless --translation-thread-nice says otherwise (0 to 19)', () => {
    expect(parseCli([], {}).limits.translationThreadNice).toBe(10);
    expect(parseCli(['--translation-thread-nice', '0'], {}).limits.translationThreadNice).toBe(0);
    expect(parseCli(['--translation-thread-nice', '19'], {}).limits.translationThreadNice).toBe(19);
    expect(() => parseCli(['--translation-thread-nice', '20'], {})).toThrow(/between 0 and 19/);
    expect(() => parseCli(['--translation-thread-nice=-1'], {})).toThrow(/between 0 and 19/);
    expect(() => parseCli(['--translation-slice-ms', '0'], {})).toThrow(/between 1 and/);
  });

  it('logs JSON by default; --log-format text for a terminal; anything else is a usage error', () => {
    expect(parseCli([], {}).logFormat).toBe('json');
    expect(parseCli(['--log-format', 'text'], {}).logFormat).toBe('text');
    expect(() => parseCli(['--log-format', 'pretty'], {})).toThrow(
      '--log-format must be json or text, not pretty',
    );
  });

  it('reads the flags the conformance runner and deploy/ pass', () => {
    const cli = parseCli(
      [
        '--manifests',
        '/m',
        '--listener-port-offset',
        '10000',
        '--admin-port',
        '19000',
        '--controller-name',
        'example.net/gw',
      ],
      {},
    );
    expect(cli).toMatchObject({
      source: { kind: 'file', dir: '/m' },
      listenerPortOffset: 10000,
      adminPort: 19000,
      controllerName: 'example.net/gw',
    });
  });

  it('takes identity from flags, else from the downward-API environment', () => {
    const cli = parseCli(['--kubernetes', '--zone', 'z1'], {
      NODE_NAME: 'n1',
      CLUSTERSET_GATEWAY_ZONE: 'z9',
      KUBECONFIG: '/k',
    });
    expect(cli.identity).toEqual({ zone: 'z1', node: 'n1' });
    // KUBECONFIG is one of the places loadKubeConfig looks (a list, as kubectl reads it); the flag alone is a path.
    expect(cli.source).toEqual({ kind: 'kubernetes' });
    expect(parseCli(['--kubernetes', '--kubeconfig', '/c'], { KUBECONFIG: '/k' }).source).toEqual({
      kind: 'kubernetes',
      kubeconfig: '/c',
    });
    expect(cli.address).toBe('0.0.0.0');
  });

  it('treats an empty environment variable as unset, as an empty downward-API label arrives', () => {
    expect(
      parseCli([], { CLUSTERSET_GATEWAY_ZONE: '', CLUSTERSET_GATEWAY_REGION: '', NODE_NAME: 'n1' }).identity,
    ).toEqual({
      node: 'n1',
    });
  });

  it('normalizes paths by default; each part has its flag', () => {
    expect(parseCli([], {}).paths).toEqual({ normalize: true, mergeSlashes: true, escapedSlashes: 'keep' });
    expect(
      parseCli(
        [
          '--no-normalize-path',
          '--no-merge-slashes',
          '--path-escaped-slashes-action',
          'unescape-and-redirect',
        ],
        {},
      ).paths,
    ).toEqual({ normalize: false, mergeSlashes: false, escapedSlashes: 'unescape-and-redirect' });
    expect(() => parseCli(['--path-escaped-slashes-action', 'drop'], {})).toThrow(
      /--path-escaped-slashes-action must be one of keep, reject, unescape-and-redirect, unescape-and-forward, not drop/,
    );
  });

  it("sizes the layer-4 relays' upstream read buffer: 64 KiB unless --layer4-read-buffer-bytes says otherwise", () => {
    expect(parseCli([], {}).layer4ReadBufferBytes).toBe(65_536);
    expect(parseCli(['--layer4-read-buffer-bytes', '16384'], {}).layer4ReadBufferBytes).toBe(16_384);
    expect(() => parseCli(['--layer4-read-buffer-bytes', '100'], {})).toThrow(/--layer4-read-buffer-bytes/);
  });

  it('rejects bad values with a message naming the flag', () => {
    expect(() => parseCli(['--admin-port', 'x'], {})).toThrow(/--admin-port must be an integer/);
    expect(() => parseCli(['--manifests', 'a', '--kubernetes'], {})).toThrow(/choose one source/);
    expect(() => parseCli(['--nope'], {})).toThrow(/Unknown option/);
    expect(() => parseCli(['--service-import-kinds', 'ServiceImport'], {})).toThrow(/group\/Kind/);
  });

  it('lists every flag in --help', () => {
    for (const flag of [
      '--manifests',
      '--listener-port-offset',
      '--admin-port',
      '--controller-name',
      '--log-level',
      '--kubernetes',
    ]) {
      expect(helpText()).toContain(flag);
    }
  });
});
