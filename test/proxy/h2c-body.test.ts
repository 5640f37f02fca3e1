import { PassThrough, Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { sendBody, stopBody } from '../../src/proxy/upstream/h2c-body.ts';

/** A sink that takes `highWaterMark` bytes, then holds its writes until `release()`. */
function slowSink(): { sink: Writable; received: Buffer[]; release: () => void } {
  const received: Buffer[] = [];
  let held: (() => void)[] = [];
  const sink = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      received.push(chunk);
      held.push(callback);
    },
  });
  return {
    sink,
    received,
    release: () => {
      const callbacks = held;
      held = [];
      for (const callback of callbacks) callback();
    },
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('sending a request body into an HTTP/2 stream', () => {
  it('sends every byte in order and ends the stream when the body ends', async () => {
    const chunks = [Buffer.from('a'.repeat(3000)), Buffer.from('b'.repeat(10)), Buffer.from('c')];
    const body = Readable.from(chunks, { objectMode: false });
    const received: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        received.push(chunk);
        callback();
      },
    });
    const finished = new Promise((resolve) => sink.once('finish', resolve));
    sendBody(body, sink);
    await finished;
    expect(Buffer.concat(received).toString()).toBe(Buffer.concat(chunks).toString());
  });

  it('stops reading while the stream is full and reads on when it drains', async () => {
    const body = new PassThrough();
    const { sink, received, release } = slowSink();
    sendBody(body, sink);
    body.write(Buffer.alloc(2048, 1));
    await tick();
    expect(body.isPaused()).toBe(true);
    body.write(Buffer.alloc(10, 2));
    await tick();
    expect(received).toHaveLength(1);
    release();
    await tick();
    expect(body.isPaused()).toBe(false);
    expect(Buffer.concat(received).length).toBe(2058);
  });

  it('leaves the rest of the body unread once stopped, and the stream open', async () => {
    const body = new PassThrough();
    const received: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        received.push(chunk);
        callback();
      },
    });
    sendBody(body, sink);
    body.write('first');
    await tick();
    stopBody(body, sink);
    body.end('second');
    await tick();
    expect(Buffer.concat(received).toString()).toBe('first');
    expect(sink.writableEnded).toBe(false);
    expect(body.listenerCount('data')).toBe(0);
  });

  it('stops writing into a stream that closed under it', async () => {
    const body = new PassThrough();
    const sink = new Writable({
      write(_chunk, _encoding, callback) {
        callback();
      },
    });
    sendBody(body, sink);
    sink.destroy();
    await tick();
    expect(body.listenerCount('data')).toBe(0);
    expect(body.listenerCount('end')).toBe(0);
  });
});
