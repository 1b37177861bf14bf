import { expired, type TokenInfo, Tokens } from '../auth/tokens.js';
import { TokenCreateInput } from '../protocol/admin.js';
import { findRunningNode } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { needStore } from './data-dir.js';
import { parseExpires } from './expires.js';
import { asFailure, CliFailure, missing, usage } from './failure.js';
import { openStore } from './store-owner.js';

/** Arguments of `cairn token create|list|revoke`. */
export interface TokenArgs {
  dataDir: string;
  json: boolean;
  agent?: string | undefined;
  user?: string | undefined;
  scopes?: string[] | undefined;
  role?: string | undefined;
  /** `--expires`: a duration from now or an RFC 3339 date-time. */
  expires?: string | undefined;
  id?: string | undefined;
}

/** What to do on a data dir that holds no store, or one without tokens, before making a token. */
const INIT_FIRST = 'run `cairn init` (or `cairn serve`) first, which makes its admin token';

/**
 * Refuses a token that is not an admin when the store has no live token: it would leave a store
 * nobody administers, where `init` is refused (it has a token) and `serve` makes no admin token.
 * `token create` and `connect` both make tokens on the store.
 */
export async function refuseFirstNonAdmin(t: Tokens, role: string | undefined, dataDir: string): Promise<void> {
  if (role !== 'admin' && !(await t.any())) {
    throw new CliFailure('NOT_FOUND', `no admin token in the store at ${dataDir}: ${INIT_FIRST}`);
  }
}

/** Runs `fn` on the store directly (no node holds it); refuses a data dir without one. */
async function withTokens<T>(dataDir: string, fn: (t: Tokens) => Promise<T>, then?: string): Promise<T> {
  needStore(dataDir, then);
  const store = await openStore(dataDir);
  try {
    return await fn(new Tokens(store));
  } finally {
    await store.close();
  }
}

/** The CLI option that carries each field of the token input, as the user typed it. */
const OPTION: Record<string, string> = {
  agent: '--agent',
  user: '--user',
  scopes: '--scope',
  role: '--role',
  expiresAt: '--expires',
};

/**
 * `cairn token create|list|revoke`: through the running node's admin API (admin token from
 * `CAIRN_ADMIN_TOKEN`) when a node holds the store, else on the store directly.
 */
export async function runToken(sub: string, a: TokenArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const node = findRunningNode(a.dataDir);
  const admin = env.CAIRN_ADMIN_TOKEN;
  try {
    if (sub === 'create') {
      if (a.agent === undefined) throw usage('--agent', 'required: the agent the token is for');
      const expires = a.expires === undefined ? undefined : parseExpires(a.expires);
      if (expires !== undefined && 'error' in expires) throw usage('--expires', expires.error);
      const parsed = TokenCreateInput.safeParse({
        agent: a.agent,
        ...(a.user === undefined ? {} : { user: a.user }),
        ...(a.scopes === undefined ? {} : { scopes: a.scopes }),
        ...(a.role === undefined ? {} : { role: a.role }),
        ...(expires === undefined ? {} : { expiresAt: expires.at }),
      });
      if (!parsed.success) {
        const i = parsed.error.issues[0];
        throw usage(OPTION[String(i?.path[0])] ?? '--agent', i?.message ?? 'invalid');
      }
      const made =
        node !== null
          ? await adminCall(node, admin, 'POST', '/v1/admin/tokens', parsed.data)
          : await withTokens(
              a.dataDir,
              async (t) => {
                await refuseFirstNonAdmin(t, parsed.data.role, a.dataDir);
                const { token, record } = await t.create(parsed.data);
                const { id, agent, user, scopes, role, expiresAt } = record;
                return {
                  token,
                  id,
                  agent,
                  user: user ?? null,
                  scopes: scopes ?? null,
                  role,
                  expiresAt: expiresAt ?? null,
                };
              },
              INIT_FIRST,
            );
      const commas = (parsed.data.scopes ?? []).filter((s) => s.includes(','));
      if (commas.length > 0) {
        // Commas are allowed in a scope name, so this is no error; but `--scope work,personal`
        // most likely meant two scopes, and the token is limited to one named with the comma.
        process.stderr.write(
          `cairn token: ${commas.map((s) => JSON.stringify(s)).join(', ')} is one scope (a name may hold a comma); for several, repeat the option: --scope work --scope personal (revoke this token with cairn token revoke ${String(made.id)})\n`,
        );
      }
      process.stdout.write(
        a.json
          ? `${JSON.stringify({ token: made.token, id: made.id, agent: made.agent, user: made.user ?? null, scopes: made.scopes ?? null, role: made.role, expiresAt: made.expiresAt ?? null })}\n`
          : `Token for agent ${String(made.agent)} (id ${String(made.id)}${made.expiresAt == null ? '' : `; expires ${String(made.expiresAt)}`}; shown once):\n  ${String(made.token)}\n`,
      );
      return 0;
    }
    if (sub === 'list') {
      const list =
        node !== null
          ? ((await adminCall(node, admin, 'GET', '/v1/admin/tokens')).tokens as TokenInfo[])
          : await withTokens(a.dataDir, (t) => t.list());
      // What a token has none of is said null, as `token create --json` says it.
      const said = list.map((t) => ({
        ...t,
        user: t.user ?? null,
        scopes: t.scopes ?? null,
        expiresAt: t.expiresAt ?? null,
      }));
      if (a.json) process.stdout.write(`${JSON.stringify({ tokens: said })}\n`);
      // Said, not left blank: a store made by `import` into a new data dir has none yet.
      else if (list.length === 0) process.stdout.write('no tokens (`cairn init` makes an admin token)\n');
      else
        for (const t of list) {
          const state =
            t.revokedAt !== undefined ? `revoked ${t.revokedAt}` : expired(t) ? `expired ${t.expiresAt}` : 'live';
          process.stdout.write(
            `${t.id}  ${t.role.padEnd(6)}  agent=${t.agent}  user=${t.user ?? '*'}  scopes=${shownScopes(t.scopes)}  expires=${t.expiresAt ?? 'never'}  ${state}\n`,
          );
        }
      return 0;
    }
    if (sub === 'revoke') {
      if (a.id === undefined) throw missing('ID', 'the token to revoke, by its id (`cairn token list` shows them)');
      const id = a.id;
      const revoked =
        node !== null
          ? ((await adminCall(node, admin, 'DELETE', `/v1/admin/tokens/${encodeURIComponent(id)}`))
              .revoked as TokenInfo)
          : await withTokens(a.dataDir, (t) => t.revoke(id));
      if (revoked === null) {
        // Said as the node says it (its refusal passed on, code first), with or without one.
        const message = `no token has id ${id}`;
        throw new CliFailure('NOT_FOUND', message, undefined, [], `NOT_FOUND: ${message}`);
      }
      process.stdout.write(a.json ? `${JSON.stringify({ revoked })}\n` : `revoked ${id}\n`);
      return 0;
    }
    throw new CliFailure(
      'VALIDATION_ERROR',
      `unknown subcommand ${JSON.stringify(sub)}; use create, list or revoke`,
      2,
    );
  } catch (err) {
    throw asFailure(err);
  }
}

/** A token's scopes in `token list`: comma-separated, or as JSON when a name holds a comma. */
function shownScopes(scopes: string[] | undefined): string {
  if (scopes === undefined) return '*';
  return scopes.some((s) => s.includes(',')) ? JSON.stringify(scopes) : scopes.join(',');
}
