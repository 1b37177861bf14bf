import type { Readable, Writable } from 'node:stream';

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import { readLine } from './rpc-line.js';

/** The most a line may hold before the transport gives up, as the SDK's stdio transport (10 MiB). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/**
 * `cairn mcp`'s stdio transport: messages as lines of JSON on stdin and stdout, as the SDK's
 * `StdioServerTransport` reads and writes them, but a line that is no message is answered
 * (`readLine`: -32700 or -32600) and the next line read. The SDK's only reports it to `onerror`
 * and sends nothing, so a client that wrote one waited for a reply forever. A blank line holds no
 * message and is passed over. A line past 10 MiB ends the transport, as the SDK's does.
 */
export class StdioLines implements Transport {
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  onmessage?: Transport['onmessage'];
  /** What came after the last newline: the start of a line, in the chunks it came in. */
  private partial: Buffer[] = [];
  private partialBytes = 0;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
  ) {}

  private readonly onData = (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end >= 0; end = chunk.indexOf(0x0a, start)) {
      const line = Buffer.concat([...this.partial, chunk.subarray(start, end)]).toString('utf8');
      this.partial = [];
      this.partialBytes = 0;
      start = end + 1;
      this.take(line.replace(/\r$/, ''));
    }
    if (start < chunk.length) {
      this.partial.push(chunk.subarray(start));
      this.partialBytes += chunk.length - start;
    }
    if (this.partialBytes > MAX_LINE_BYTES) {
      this.onerror?.(new Error(`a line exceeded the maximum size of ${MAX_LINE_BYTES} bytes`));
      void this.close();
    }
  };

  /** Hands on the message `line` holds, or answers it. */
  private take(line: string): void {
    if (line.trim() === '') return;
    const read = readLine(line);
    if ('refused' in read) void this.write(read.refused);
    else this.onmessage?.(read.message);
  }

  private readonly onError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    // Another reader of stdin (the bridge's `watchUnderflows`) may still want it.
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.partial = [];
    this.partialBytes = 0;
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  /** Writes `message` as one line, resolving once stdout takes more. */
  private write(message: object): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }
}
