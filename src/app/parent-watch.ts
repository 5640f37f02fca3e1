const PARENT_POLL_MS = 500;

/**
 * `npm start` (and npx) is a foreground command: the gateway it runs lives as long as npm. npm forwards SIGTERM
 * and SIGINT to its script, but a shell between them (`sh -c`) may die of the signal without passing it on, and a
 * SIGKILLed npm forwards nothing; either way the gateway would be left to init, holding its ports. Linux's
 * PR_SET_PDEATHSIG is not reachable from Node, so the parent is polled: when it changes, the one that started
 * this process is gone and `onGone` runs (the gateway drains as on SIGTERM). Run any other way (a container's
 * PID 1, systemd, `nohup`), the gateway's life is not tied to its parent's.
 */
export function followParentWhenRunByNpm(
  env: NodeJS.ProcessEnv,
  onGone: () => void,
  pollMs = PARENT_POLL_MS,
): () => void {
  const parent = process.ppid;
  if (env['npm_lifecycle_event'] === undefined || parent <= 1) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, pollMs);
  timer.unref();
  return () => clearInterval(timer);
}
