/**
 * Why `CAIRN_ADMIN_TOKEN` cannot become the admin token, or null. The node reads a bearer token up
 * to the first whitespace (and HTTP trims a header's ends), so a token holding any (an env file's
 * trailing space, a phrase) would be stored but could never authenticate: a store whose only admin
 * token nobody can send.
 */
export function seedTokenRefusal(token: string): string | null {
  if (token.length < 32) return `must be at least 32 characters, got ${token.length}`;
  if (/\s/.test(token)) {
    return 'must hold no space or other whitespace (a bearer token ends at the first one, so this one could never be sent)';
  }
  return null;
}
