/**
 * An open-loop HTTP/1.1 load at an even pace, for bench/harness/paced-load.ts (run as its own process).
 *
 * Request k is due at start + k / rate; each tick sends every request that is due on an idle keep-alive
 * connection (a request due while all connections wait for an answer waits for the first one free). Latency is
 * counted from when the request was due, so a stall of the server shows in full (no coordinated omission), and the
 * generator measures its own share: how late it sent (its timer and loop), and its own event-loop delay.
 *
 * argv[2]: JSON { port, host, path, connections, rate, seconds }. Writes one JSON line of results to stdout.
 */
import { connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const { port, host, path, connections, rate, seconds } = JSON.parse(process.argv[2]);
const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: paced-load\r\n\r\n`);
const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('0\r\n\r\n');

const capacity = Math.ceil(rate * seconds) + 16;
const fromDue = new Float64Array(capacity);
const fromWrite = new Float64Array(capacity);
/** How late the generator's own timer was for each request: what it adds, not the server. */
const timerLate = new Float64Array(capacity);
let answered = 0;
let errors = 0;

/** @type {number[]} due times of requests no connection was free for */
const backlog = [];
const idle = [];

function open() {
  const socket = connect({ port, host: '127.0.0.1', noDelay: true });
  const connection = { socket, busy: false, dueAt: 0, writtenAt: 0, pending: Buffer.alloc(0) };
  socket.on('data', (chunk) => onData(connection, chunk));
  socket.on('error', () => {});
  socket.on('close', () => {
    if (connection.busy) errors++;
    connection.busy = false;
    const at = idle.indexOf(connection);
    if (at >= 0) idle.splice(at, 1);
    if (!stopped) setTimeout(() => idle.push(open()), 10);
  });
  return connection;
}

/** The length of one whole response at the front of `buffer`, or -1 if it has not all arrived. */
function responseLength(buffer) {
  const headerEnd = buffer.indexOf(HEADER_END);
  if (headerEnd < 0) return -1;
  const head = buffer.subarray(0, headerEnd).toString('latin1').toLowerCase();
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (length) {
    const total = headerEnd + 4 + Number(length[1]);
    return buffer.length >= total ? total : -1;
  }
  if (head.includes('transfer-encoding: chunked')) {
    const end = buffer.indexOf(CHUNKED_END, headerEnd + 4);
    return end < 0 ? -1 : end + CHUNKED_END.length;
  }
  return headerEnd + 4;
}

function onData(connection, chunk) {
  connection.pending = connection.pending.length === 0 ? chunk : Buffer.concat([connection.pending, chunk]);
  const length = responseLength(connection.pending);
  if (length < 0) return;
  const status = Number(connection.pending.subarray(9, 12).toString('latin1'));
  connection.pending = connection.pending.subarray(length);
  const now = performance.now();
  if (status >= 200 && status < 300 && answered < capacity) {
    fromDue[answered] = now - connection.dueAt;
    fromWrite[answered] = now - connection.writtenAt;
    answered++;
  } else errors++;
  connection.busy = false;
  const next = backlog.shift();
  if (next !== undefined) send(connection, next, now);
  else idle.push(connection);
}

function send(connection, dueAt, now) {
  connection.busy = true;
  connection.dueAt = dueAt;
  connection.writtenAt = now;
  connection.socket.write(request);
}

for (let i = 0; i < connections; i++) idle.push(open());
await Promise.all(idle.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();

let stopped = false;
const start = performance.now();
const interval = 1000 / rate;
let scheduled = 0;
const total = Math.floor(rate * seconds);
const timer = setInterval(() => {
  const now = performance.now();
  while (scheduled < total && start + scheduled * interval <= now) {
    const dueAt = start + scheduled * interval;
    timerLate[scheduled] = now - dueAt;
    scheduled++;
    const connection = idle.pop();
    if (connection === undefined) backlog.push(dueAt);
    else send(connection, dueAt, now);
  }
  if (scheduled >= total) {
    clearInterval(timer);
    finish();
  }
}, 1);

function finish() {
  const sentAll = performance.now();
  const wait = setInterval(() => {
    if ((backlog.length === 0 && idle.length === connections) || performance.now() - sentAll > 2000) {
      clearInterval(wait);
      report(performance.now() - start);
    }
  }, 5);
}

function percentile(values, count, p) {
  if (count === 0) return Number.NaN;
  const sorted = values.subarray(0, count).sort();
  return sorted[Math.min(count - 1, Math.ceil((p / 100) * count) - 1)];
}

function report(elapsedMs) {
  stopped = true;
  loop.disable();
  const unanswered = total - answered - errors;
  const ms = (n) => Math.round(n * 10) / 10;
  process.stdout.write(
    `${JSON.stringify({
      rps: Math.round((answered / elapsedMs) * 1000),
      p50Ms: ms(percentile(fromDue, answered, 50)),
      p99Ms: ms(percentile(fromDue, answered, 99)),
      maxMs: ms(percentile(fromDue, answered, 100)),
      errors: errors + Math.max(0, unanswered),
      onSocket: {
        p50Ms: ms(percentile(fromWrite, answered, 50)),
        p99Ms: ms(percentile(fromWrite, answered, 99)),
        maxMs: ms(percentile(fromWrite, answered, 100)),
      },
      generator: {
        timerLateP99Ms: ms(percentile(timerLate, scheduled, 99)),
        timerLateMaxMs: ms(percentile(timerLate, scheduled, 100)),
        loopDelayP99Ms: ms(loop.percentile(99) / 1e6),
        loopDelayMaxMs: ms(loop.max / 1e6),
      },
    })}\n`,
  );
  process.exit(0);
}
