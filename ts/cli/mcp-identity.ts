import { isolatedFetch } from './isolated-fetch.js';

// Whether the node takes `cairn mcp`'s CAIRN_USER and CAIRN_SCOPE for CAIRN_TOKEN, asked once the
// first session is open. The node judges them on each call, not on `initialize`, so a user-bound
// token given another CAIRN_USER (or a scope-limited one another CAIRN_SCOPE) opened a session
// and then refused every tool call "X-Cairn-User: this token may not act for that user", naming
// a header the user never set (found by a new-user audit).

/** The variable each identity header comes from. */
const VARIABLES: Record<string, string> = { 'X-Cairn-User': 'CAIRN_USER', 'X-Cairn-Scope': 'CAIRN_SCOPE' };

interface Refusal {
  error?: { code?: string; message?: string; details?: { field?: string; message?: string }[] };
}

/**
 * Why the node refuses the bridge's CAIRN_USER or CAIRN_SCOPE, in the variables' names and with
 * what to do, or null (neither set, taken, or the node's answer says nothing of them: a call
 * refused for another reason says so when it is made).
 */
export async function identityRefusal(
  url: string,
  headers: Record<string, string>,
  ms: number,
): Promise<string | null> {
  if (headers['x-cairn-user'] === undefined && headers['x-cairn-scope'] === undefined) return null;
  let body: Refusal;
  try {
    const res = await isolatedFetch()(`${url}/v1/whoami`, { headers, signal: AbortSignal.timeout(ms) });
    if (res.status !== 403 && res.status !== 422) return null;
    body = (await res.json()) as Refusal;
  } catch {
    return null;
  }
  const detail = body.error?.details?.[0];
  const variable = VARIABLES[detail?.field ?? ''];
  if (variable === undefined) return null;
  const fix =
    variable === 'CAIRN_USER'
      ? 'set CAIRN_USER to that user or leave it out, or give the bridge a token made for the user (`cairn token create --agent NAME --user ID`)'
      : 'set CAIRN_SCOPE to one of those scopes or leave it out, or give the bridge a token that may use the scope';
  return `${variable}: ${body.error?.code ?? 'FORBIDDEN'}: ${detail?.message ?? body.error?.message ?? 'refused'}; ${fix}`;
}
