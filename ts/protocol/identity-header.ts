// How `X-Cairn-User` and `X-Cairn-Scope` carry a name (docs/api.md, "Identity"). HTTP header values
// are bytes; Node hands them to us as latin1 strings (one char per byte). A name is text, so:
//
// - the value's bytes are read as UTF-8 (`用户` sent as its UTF-8 bytes is `用户`); bytes that are
//   not UTF-8 (say a lone 0xE9, `café` sent as Latin-1) are refused, never guessed at;
// - a value of the form `UTF-8''<percent-encoded UTF-8>` (RFC 8187's ext-value; charset
//   case-insensitive, an optional language tag between the quotes ignored) is percent-decoded,
//   for clients whose HTTP stack sends only ASCII header values (fetch refuses chars above U+00FF).
//
// Either way the name reached is the one the same text names as `user_id` or `scope` in a body.

const EXT_VALUE = /^utf-8'[A-Za-z0-9-]*'/i;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A decoded header value, or why it could not be decoded. */
export type DecodedHeader = { ok: true; value: string } | { ok: false; message: string };

const HOW =
  "send the name's UTF-8 bytes, or its percent-encoded UTF-8 as UTF-8''<encoded> (e.g. UTF-8''caf%C3%A9 for café)";

/** The name a raw identity header value (as Node's HTTP parser gives it) stands for. */
export function decodeIdentityHeader(raw: string): DecodedHeader {
  let text: string;
  // A char above U+00FF cannot come off the wire (Node reads header bytes as latin1): the value
  // was handed in as text already (an in-process request), and is taken as it is.
  if (/[\u0100-\uffff]/.test(raw)) text = raw;
  else {
    try {
      text = utf8.decode(Buffer.from(raw, 'latin1'));
    } catch {
      return { ok: false, message: `not valid UTF-8: ${HOW}` };
    }
  }
  const ext = EXT_VALUE.exec(text);
  if (ext === null) return { ok: true, value: text };
  const encoded = text.slice(ext[0].length);
  if (!/^(?:[\x21-\x24\x26-\x7e]|%[0-9A-Fa-f]{2})*$/.test(encoded)) {
    return { ok: false, message: `after UTF-8'' only printable ASCII and %XX escapes may follow: ${HOW}` };
  }
  const bytes = Buffer.from(
    encoded.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
    'latin1',
  );
  try {
    return { ok: true, value: utf8.decode(bytes) };
  } catch {
    return { ok: false, message: `its percent-encoded bytes are not valid UTF-8: ${HOW}` };
  }
}

/**
 * A name as a header value any HTTP client can send (fetch takes only ByteStrings): printable
 * ASCII as it is, anything else (or a name that itself starts like `UTF-8''`) as an RFC 8187
 * ext-value, `UTF-8''` and the name's UTF-8 bytes percent-encoded. `decodeIdentityHeader` of the
 * result is the name.
 */
export function encodeIdentityHeader(name: string): string {
  // Node trims a header value's surrounding blanks, so a name with them is encoded too.
  if (PRINTABLE_ASCII.test(name) && name.trim() === name && !EXT_VALUE.test(name)) return name;
  let out = "UTF-8''";
  for (const ch of name) {
    if (UNRESERVED.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
