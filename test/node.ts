import { type TokenSpec, Tokens } from '../ts/auth/tokens.js';
import { type NodeOptions, type RunningNode, startNode } from '../ts/server/node.js';
import { tempDir } from './helpers.js';

/** The admin token every test node is seeded with. */
export const ADMIN = 'cairn_test-admin-token-0123456789abcdefghijklmnop';

/** A reply as tests read it. */
export interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: { code: string; message: string; details: unknown[] } };
}

/** A real node on a free port with a temporary data dir, and small helpers to call it. */
export interface TestNode {
  url: string;
  port: number;
  dataDir: string;
  node: RunningNode;
  /** Makes a token directly in the node's store. */
  token(spec: TokenSpec): Promise<{ token: string; id: string }>;
  /** One HTTP request; `body` is sent as JSON unless it is a string. */
  call(
    method: string,
    path: string,
    opts?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  /** The store's transaction id: unchanged means nothing was written. */
  txn(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a node for one test file. */
export async function startTestNode(opts: Partial<NodeOptions> = {}): Promise<TestNode> {
  const { dir, cleanup } = await tempDir('node');
  const node = await startNode({ dataDir: dir, port: 0, adminToken: ADMIN, logLevel: 'silent', ...opts });
  const url = node.url;
  const tokens = new Tokens(node.store);
  return {
    url,
    port: node.port,
    dataDir: dir,
    node,
    async token(spec) {
      const { token, record } = await tokens.create(spec);
      return { token, id: record.id };
    },
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      const token = o.token === undefined ? ADMIN : o.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (o.body !== undefined) {
        body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
      const text = await res.text();
      let parsed: Reply['body'];
      try {
        parsed = text === '' ? {} : (JSON.parse(text) as Reply['body']);
      } catch {
        parsed = { text };
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async txn() {
      const snap = node.store.snapshot();
      try {
        return snap.txn;
      } finally {
        snap.close();
      }
    },
    async stop() {
      await node.close();
      await cleanup();
    },
  };
}
