import { describe, expect, it } from 'vitest';
import { coalescingWebSocket } from '../../../lib/db/coalescing-websocket.js';

/** A WebSocket stand-in that records what reaches the wire. */
class RecordingSocket {
  readonly wire: unknown[] = [];
  constructor(readonly url: string) {}
  send(data: unknown): void {
    this.wire.push(data instanceof Uint8Array ? [...data] : data);
  }
  close(): void {
    this.wire.push('close');
  }
}

const Coalescing = coalescingWebSocket(RecordingSocket);
const bytes = (...values: number[]) => new Uint8Array(values);
const tick = () => new Promise<void>((resolve) => queueMicrotask(resolve));

// docs/ingest.md#a-batch: a batch costs a small number of round trips; each must not also wait a timer.
describe('coalescingWebSocket (the Neon driver socket, docs/ingest.md#a-batch)', () => {
  it('joins the messages of one synchronous run (Parse, Bind, Execute, Sync) into one send, in order, before any timer', async () => {
    const socket = new Coalescing('ws://db');
    socket.send(bytes(1, 2));
    socket.send(bytes(3));
    socket.send(bytes(4, 5));
    expect(socket.wire).toEqual([]);
    let timerFired = false;
    setTimeout(() => {
      timerFired = true;
    }, 0);
    await tick();
    expect(timerFired).toBe(false);
    expect(socket.wire).toEqual([[1, 2, 3, 4, 5]]);
    socket.send(bytes(6));
    await tick();
    expect(socket.wire).toEqual([[1, 2, 3, 4, 5], [6]]);
  });

  it('sends what is pending before closing, so a last message (Terminate) is not dropped', () => {
    const socket = new Coalescing('ws://db');
    socket.send(bytes(0x58, 0, 0, 0, 4));
    socket.close();
    expect(socket.wire).toEqual([[0x58, 0, 0, 0, 4], 'close']);
  });

  it('passes anything but bytes on at once, after what is pending', () => {
    const socket = new Coalescing('ws://db');
    socket.send(bytes(1));
    socket.send('text');
    expect(socket.wire).toEqual([[1], 'text']);
  });

  it('closes the socket instead of throwing from the microtask when it can no longer send', async () => {
    class Broken extends RecordingSocket {
      override send(_data: unknown): void {
        throw new Error('WebSocket is not open');
      }
    }
    const socket = new (coalescingWebSocket(Broken))('ws://db');
    socket.send(bytes(1));
    await tick();
    expect(socket.wire).toEqual(['close']);
  });
});
