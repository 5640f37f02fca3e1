import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtProgram, freePort } from '../support/gateway-process.ts';

const ROOT = resolve(import.meta.dirname, '../..');

interface Exit {
  readonly code: number | null;
  readonly stderr: string;
  readonly stdout: string;
}

/** Runs the program as `npm start -- ARGS` would, with `env` instead of the test's environment. */
function run(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [builtProgram(), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // A program that does not exit is the failure under test: stop it and report what it said. Generous: on a
    // loaded machine loading the program's modules alone takes seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', fail);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:port (the admin server, had it been opened). */
function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe: Server = createServer();
    probe.once('error', () => done(true));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(false)));
  });
}

const scratch = mkdtempSync(join(tmpdir(), 'csgw-startup-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('start-up failures exit non-zero with their message, before any port is opened', {
  timeout: 90_000,
}, () => {
  it('--manifests on a missing folder names the path', async () => {
    const adminPort = await freePort();
    const missing = join(scratch, 'does-not-exist');
    const exit = await run(['--manifests', missing, '--admin-port', String(adminPort)], { HOME: scratch });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`--manifests ${missing}: no such folder`);
    // Nothing was announced or opened first.
    expect(exit.stdout).not.toContain('admin');
    expect(exit.stderr).not.toContain('admin');
    expect(await listening(adminPort)).toBe(false);
  });

  it('--manifests on a file, not a folder, says so', async () => {
    const file = join(scratch, 'route.yaml');
    writeFileSync(file, 'kind: HTTPRoute\n');
    const exit = await run(['--manifests', file, '--admin-port', String(await freePort())], {
      HOME: scratch,
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`--manifests ${file}: not a folder`);
  });

  it('--kubernetes with no configuration anywhere names every place it looked', async () => {
    const home = join(scratch, 'home-empty');
    mkdirSync(home);
    const adminPort = await freePort();
    const exit = await run(['--kubernetes', '--admin-port', String(adminPort)], { HOME: home });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('no Kubernetes configuration found');
    expect(exit.stderr).toContain('--kubeconfig: not given');
    expect(exit.stderr).toContain('KUBECONFIG: not set');
    expect(exit.stderr).toContain('in-cluster service account: KUBERNETES_SERVICE_HOST is not set');
    expect(exit.stderr).toContain(`${join(home, '.kube', 'config')}: no such file`);
    expect(exit.stderr).not.toContain('using Kubernetes API server');
    expect(await listening(adminPort)).toBe(false);
  });

  it('--kubernetes with KUBECONFIG naming missing files says which', async () => {
    const home = join(scratch, 'home-env');
    mkdirSync(home);
    const listed = `${join(scratch, 'a.yaml')}:${join(scratch, 'b.yaml')}`;
    const exit = await run(['--kubernetes', '--admin-port', String(await freePort())], {
      HOME: home,
      KUBECONFIG: listed,
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`KUBECONFIG=${listed}: no such file`);
    expect(exit.stderr).toContain(
      'in-cluster service account: /var/run/secrets/kubernetes.io/serviceaccount/token',
    );
  });

  it('--kubeconfig on a missing file names it', async () => {
    const path = join(scratch, 'nope.kubeconfig');
    const exit = await run(['--kubernetes', '--kubeconfig', path, '--admin-port', String(await freePort())], {
      HOME: scratch,
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`--kubeconfig ${path}: no such file`);
  });

  it('--kubeconfig that does not parse, or has no current cluster, says so', async () => {
    const garbage = join(scratch, 'garbage.kubeconfig');
    writeFileSync(garbage, 'clusters: [\n');
    const bad = await run(
      ['--kubernetes', '--kubeconfig', garbage, '--admin-port', String(await freePort())],
      {
        HOME: scratch,
      },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`cannot load Kubernetes configuration from --kubeconfig ${garbage}`);

    const empty = join(scratch, 'empty.kubeconfig');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    const none = await run(
      ['--kubernetes', '--kubeconfig', empty, '--admin-port', String(await freePort())],
      {
        HOME: scratch,
      },
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`no current cluster in the Kubernetes configuration ${empty}`);

    // A zero-byte file (a Secret mounted before it was filled): named, not a TypeError from inside the client.
    const nothing = join(scratch, 'nothing.kubeconfig');
    writeFileSync(nothing, '');
    const zero = await run(
      ['--kubernetes', '--kubeconfig', nothing, '--admin-port', String(await freePort())],
      { HOME: scratch },
    );
    expect(zero.code).toBe(1);
    expect(zero.stderr).toContain(
      `cannot load Kubernetes configuration from --kubeconfig ${nothing}: not a kubeconfig: no clusters`,
    );
    expect(zero.stderr).not.toContain('Cannot read properties');
  });

  it('--kubeconfig with an unset current-context, or one naming a missing context or cluster, says which', async () => {
    const cases = [
      ['', 'current-context is not set (kubectl config use-context <name>)'],
      ['current-context: other\n', 'current-context "other" names no context defined there'],
      ['current-context: lost\n', 'context "lost" names cluster "gone", which is not defined there'],
    ] as const;
    for (const [i, [current, reason]] of cases.entries()) {
      const path = join(scratch, `context-${i}.kubeconfig`);
      writeFileSync(
        path,
        `apiVersion: v1\nkind: Config\n${current}clusters: [{ name: c, cluster: { server: https://127.0.0.1:1 } }]\n` +
          'users: [{ name: u, user: { token: abc } }]\n' +
          'contexts: [{ name: x, context: { cluster: c, user: u } }, { name: lost, context: { cluster: gone, user: u } }]\n',
      );
      const adminPort = await freePort();
      const exit = await run(['--kubernetes', '--kubeconfig', path, '--admin-port', String(adminPort)], {
        HOME: scratch,
      });
      expect(exit.code).toBe(1);
      expect(exit.stderr).toContain(`no current cluster in the Kubernetes configuration ${path}: ${reason}`);
      expect(exit.stderr).not.toContain('undefined');
      expect(await listening(adminPort)).toBe(false);
    }
  });

  it('--kubeconfig whose user runs an exec plugin that does not exist names the plugin and its install hint', async () => {
    const kubeconfig = (command: string) =>
      'apiVersion: v1\nkind: Config\ncurrent-context: x\n' +
      'clusters: [{ name: c, cluster: { server: https://127.0.0.1:1 } }]\n' +
      `users: [{ name: ci-bot, user: { exec: { apiVersion: client.authentication.k8s.io/v1, command: ${command}, ` +
      'installHint: "install it with: brew install example-auth", interactiveMode: Never } } }]\n' +
      'contexts: [{ name: x, context: { cluster: c, user: ci-bot } }]\n';
    const byName = join(scratch, 'exec-name.kubeconfig');
    writeFileSync(byName, kubeconfig('example-auth-plugin-not-installed'));
    const adminPort = await freePort();
    const exit = await run(['--kubernetes', '--kubeconfig', byName, '--admin-port', String(adminPort)], {
      HOME: scratch,
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(
      'exec credential plugin "example-auth-plugin-not-installed" of user "ci-bot" not found in PATH: install it with: brew install example-auth',
    );
    expect(exit.stdout).not.toContain('using Kubernetes API server');
    expect(await listening(adminPort)).toBe(false);

    const byPath = join(scratch, 'exec-path.kubeconfig');
    writeFileSync(byPath, kubeconfig('./bin/missing-plugin'));
    const missing = await run(
      ['--kubernetes', '--kubeconfig', byPath, '--admin-port', String(await freePort())],
      {
        HOME: scratch,
      },
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      'exec credential plugin "./bin/missing-plugin" of user "ci-bot" not found:',
    );

    // The same path, present beside the kubeconfig (client-go resolves it there): the check passes, and the start
    // goes on to open the admin port, which is taken here so that the program stops there.
    mkdirSync(join(scratch, 'bin'));
    writeFileSync(join(scratch, 'bin', 'missing-plugin'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const takenPort = (taken.address() as { port: number }).port;
    const found = await run(['--kubernetes', '--kubeconfig', byPath, '--admin-port', String(takenPort)], {
      HOME: scratch,
    });
    taken.close();
    expect(found.code).not.toBe(0);
    expect(found.stderr).toContain('EADDRINUSE');
    expect(found.stderr).not.toContain('exec credential plugin');
  });
});
