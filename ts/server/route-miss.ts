import { ApiError } from '../protocol/errors.js';
import { nearest } from '../protocol/spelling.js';
import { VERBS } from '../protocol/verbs.js';

// What a request to no route is told. A new-user audit sent `POST /v1/memory/recal`,
// `/v1/memory/memory_recall` (the MCP tool's name) and `/memory/recall` and got only "no route";
// each now names the route it most likely meant, from the verbs any caller can read in the
// OpenAPI document (so it reveals nothing a token guards).

const MEMORY = '/v1/memory/';
const ROUTES = VERBS.map((v) => v.verb);

/** The verb route `path` most likely meant, or undefined. */
function meant(path: string): string | undefined {
  const rest = path.startsWith(MEMORY)
    ? path.slice(MEMORY.length)
    : /^\/(?:v\d+\/)?(?:memory\/)?([a-z_]+)\/?$/i.exec(path)?.[1];
  if (rest === undefined) return undefined;
  const verb = rest
    .toLowerCase()
    .replace(/^memory_/, '')
    .replace(/\/$/, '');
  const found = ROUTES.includes(verb) ? verb : nearest(verb, ROUTES);
  return found === undefined ? undefined : `${MEMORY}${found}`;
}

/** The 404 for `method` `url`, naming the verb route it likely meant in `details`. */
export function routeMiss(method: string, url: string): ApiError {
  const path = url.split('?')[0] ?? url;
  const route = meant(path);
  if (route === undefined || route === path) return new ApiError('NOT_FOUND', `no route ${method} ${path}`);
  return new ApiError('NOT_FOUND', `no route ${method} ${path} (did you mean ${route}?)`, [{ did_you_mean: route }]);
}
