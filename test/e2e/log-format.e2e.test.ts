import { afterEach, describe, expect, it } from 'vitest';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, yamlDocs } from '../support/manifests.ts';

/**
 * Issue 42, "Logs an operator can read": the gateway as a user starts it, with `--log-format text` and without;
 * the start-up status lines (a GatewayClass's was ~1,800 characters) are short in both.
 */
const TEXT_LINE = /^\d\d:\d\d:\d\d\.\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/;

async function started(format: 'json' | 'text'): Promise<GatewayProcess> {
  const port = await freePort();
  return startGateway({
    manifests: {
      'edge.yaml': yamlDocs(
        gatewayClass(),
        gateway('edge', 'shop', [{ name: 'http', protocol: 'HTTP', port }]),
        httpRoute('web', 'shop', {
          parentRefs: [{ name: 'edge' }],
          rules: [{ backendRefs: [{ name: 'missing', port: 80 }] }],
        }),
      ),
    },
    args: ['--log-level', 'info', '--log-format', format],
  });
}

/** The gateway's own lines: its output may also carry the runtime's warnings (tsx, node) on stderr. */
const lines = (gw: GatewayProcess) =>
  gw
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '');

describe('--log-format', () => {
  let gw: GatewayProcess | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('text: time, level, message and key=value on every line, the status lines short', async () => {
    gw = await started('text');
    const running = gw;
    const gatewayClassLine = await eventually(async () => {
      const found = lines(running).find(
        (l) => l.includes(' status changed ') && l.includes(' object=GatewayClass/csgw '),
      );
      if (found === undefined) throw new Error(`no GatewayClass status line yet:\n${running.output()}`);
      return found;
    });
    expect(gatewayClassLine).toMatch(TEXT_LINE);
    expect(gatewayClassLine).toMatch(
      / conditions="Accepted=True SupportedVersion=True" supportedFeatures=\d+$/,
    );
    // Status lines come in the order the writes finish: the route's may follow the GatewayClass's.
    const routeLine = await eventually(async () => {
      const found = lines(running).find((l) => l.includes('object=HTTPRoute/shop/web'));
      if (found === undefined) throw new Error(`no HTTPRoute status line yet:\n${running.output()}`);
      return found;
    });
    expect(routeLine).toMatch(/ parents="Gateway edge: Accepted=True ResolvedRefs=False \(BackendNotFound: /);
    for (const line of lines(running).filter((l) => /^\d\d:/.test(l))) {
      expect(line).toMatch(TEXT_LINE);
      expect(line.length, line).toBeLessThan(400);
    }
  });

  it('json (the default): pino JSON objects, the status lines short', async () => {
    gw = await started('json');
    const running = gw;
    const gatewayClassLine = await eventually(async () => {
      const found = lines(running)
        .filter((l) => l.startsWith('{'))
        .map((l) => ({ text: l, record: JSON.parse(l) as Record<string, unknown> }))
        .find(({ record }) => record.object === 'GatewayClass/csgw');
      if (found === undefined) throw new Error(`no GatewayClass status line yet:\n${running.output()}`);
      return found;
    });
    expect(gatewayClassLine.record).toMatchObject({
      level: 30,
      msg: 'status changed',
      conditions: 'Accepted=True SupportedVersion=True',
    });
    expect(gatewayClassLine.text.length).toBeLessThan(400);
  });
});
