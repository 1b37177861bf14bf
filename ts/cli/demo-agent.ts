#!/usr/bin/env node
// One agent of `cairn demo`, in its own process: the official MCP SDK client over Streamable HTTP
// with the token in CAIRN_TOKEN. `writer` leaves knowledge, a note and a handoff; `reader`, another
// agent with another token, finds them. Exits 1 when the reader does not find what it should.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const TASK = 'refund-service-release';

type Body = Record<string, unknown>;

async function connect(url: string, token: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '1' });
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL('/v1/mcp', url), { requestInit: { headers } }));
  return client;
}

async function call(client: Client, name: string, args: Body): Promise<Body> {
  const r = await client.callTool({ name, arguments: args });
  const body = (r.structuredContent ?? {}) as Body;
  if (r.isError === true) throw new Error(`${name} refused: ${JSON.stringify(body)}`);
  return body;
}

const say = (line: string) => process.stdout.write(`${line}\n`);

async function writer(client: Client): Promise<boolean> {
  const stored = await call(client, 'memory_remember', {
    content:
      'Priya Raman works at Acme Robotics, where she owns the refund service. The refund service ships on ' +
      'Friday after the load test passes.',
    source: 'kickoff notes',
    facts: {
      entities: [
        { name: 'Priya Raman', type: 'person' },
        { name: 'Acme Robotics', type: 'company' },
        { name: 'refund service', type: 'service' },
      ],
      relations: [
        { source: 'Priya Raman', target: 'Acme Robotics', type: 'works_at' },
        { source: 'Priya Raman', target: 'refund service', type: 'owns' },
      ],
    },
  });
  say(`remember: stored ${JSON.stringify(stored.stored)} from "kickoff notes"`);
  const note = await call(client, 'memory_note_write', {
    key: 'deploy.window',
    value: { day: 'Friday', after: '14:00 UTC', reason: 'load test first' },
    kind: 'decision',
  });
  say(`note_write: deploy.window version ${String(note.version)} (${String(note.evolution)})`);
  const handoff = await call(client, 'memory_handoff_create', {
    taskId: TASK,
    summary: 'Refund service is feature-complete; the load test is the last gate.',
    status: 'in_progress',
    decisions: ['ship on Friday after 14:00 UTC'],
    nextSteps: ['run the load test', 'tag the release', 'tell Priya'],
    blockers: [],
  });
  say(
    `handoff_create: on task ${TASK} (${String((handoff.handoff as Body | undefined)?.id ?? handoff.id ?? 'stored')})`,
  );
  return true;
}

async function reader(client: Client): Promise<boolean> {
  let ok = true;
  const recall = await call(client, 'memory_recall', { subject: 'Priya' });
  const facts = (recall.facts ?? []) as { subject: string; relation: string; object: string; citation?: Body }[];
  say(`recall "Priya": ${String(recall.state)}`);
  for (const f of facts) {
    const span = (f.citation?.span as Body | null | undefined)?.text;
    say(`  ${f.subject} ${f.relation} ${f.object}${typeof span === 'string' ? `  — "${span}"` : ''}`);
  }
  ok &&= facts.some((f) => f.relation === 'works_at' && f.object === 'Acme Robotics');
  const context = await call(client, 'memory_context', { question: 'When does the refund service ship?', k: 3 });
  const grounding = context.grounding as Body | undefined;
  const top = ((context.items ?? []) as { text?: string }[])[0]?.text;
  say(`context "When does the refund service ship?": ${String(grounding?.verdict)}; top: ${top ?? '(none)'}`);
  ok &&= typeof top === 'string' && top.includes('Friday');
  const notes = await call(client, 'memory_note_list', { key: 'deploy.window' });
  const note = ((notes.notes ?? []) as { value: Body; agent?: string }[])[0];
  say(`note_list deploy.window: ${JSON.stringify(note?.value)} (written by ${String(note?.agent)})`);
  ok &&= note?.value.day === 'Friday';
  const resumed = await call(client, 'memory_handoff_resume', { taskId: TASK });
  const capsule = resumed.handoff as Body | undefined;
  say(`handoff_resume ${TASK}: ${String(resumed.state)}: ${String(capsule?.summary)}`);
  say(`  next: ${JSON.stringify(capsule?.nextSteps)}`);
  ok &&= resumed.state === 'resumed';
  return ok;
}

const [role, url] = process.argv.slice(2);
const token = process.env.CAIRN_TOKEN;
if ((role !== 'writer' && role !== 'reader') || url === undefined || token === undefined) {
  process.stderr.write('usage: CAIRN_TOKEN=… demo-agent writer|reader URL\n');
  process.exit(2);
}
const client = await connect(url, token, `cairn-demo-${role}`);
try {
  process.exitCode = (await (role === 'writer' ? writer(client) : reader(client))) ? 0 : 1;
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await client.close();
}
