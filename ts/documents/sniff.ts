/** The document types `memory_document` reads. */
export type DocType = 'pdf' | 'docx' | 'html' | 'text';

const PDF = Buffer.from('%PDF-');
const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
/** How far into a file a PDF's header may sit (behind a binary wrapper, see `isPdf`). */
const HEAD = 1024;

/**
 * Element names that open an HTML document or a fragment of one (a page saved without its
 * `<html>`, a snippet pasted from a page). SVG and MathML are left out: a file that opens with
 * one is an image or a formula, not a page.
 */
const HTML_ELEMENTS = new Set(
  (
    'html head body title meta link base style script noscript template ' +
    'div p span a img br hr h1 h2 h3 h4 h5 h6 ul ol li dl dt dd menu ' +
    'table caption colgroup col thead tbody tfoot tr td th ' +
    'section article header footer main nav aside hgroup search address figure figcaption blockquote pre ' +
    'details summary dialog form fieldset legend label input button select option textarea ' +
    'b i u s em strong small mark abbr cite q dfn sub sup time code kbd samp var del ins bdi bdo wbr ' +
    'picture source video audio track canvas iframe object embed center font'
  ).split(' '),
);

/** Control characters other than tab, newline, form feed and carriage return mean binary data. */
function binary(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0c && c !== 0x0d) || c === 0x7f) return true;
  }
  return false;
}

/** `bytes` as text (a byte order mark dropped): valid UTF-8 without NUL or other control
 * characters; otherwise `null`. */
function asText(bytes: Buffer): string | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  return binary(text) ? null : text;
}

/**
 * Whether the file is a PDF: its header `%PDF-` opens it, or follows a prefix that is not text.
 * Readers (Acrobat, pdf.js) look for the header anywhere in the first 1,024 bytes because real
 * files carry binary wrappers before it: a MacBinary header from old Macs, a printer job's PJL
 * escape sequence. A text prefix is not such a wrapper: it is a note that mentions the magic
 * bytes, and it is read as the text it is.
 */
function isPdf(buf: Buffer): boolean {
  const at = buf.subarray(0, HEAD).indexOf(PDF);
  return at === 0 || (at > 0 && asText(buf.subarray(0, at)) === null);
}

/** What may come before a page's first element: white space, an XML declaration (XHTML), comments. */
const PROLOGUE = /\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*/y;

/** Elements only a page opens with (its document and head): they say HTML on their own. */
const PAGE_ELEMENTS = new Set('html head body title meta link base style script noscript template'.split(' '));

/**
 * Whether most non-blank lines of `text` start with markup. A fragment opening with a body element
 * (`<div>`) may be HTML pasted from a page, or Markdown that opens with one (a README's centred
 * `<div align="center">` banner, then `# Title` and paragraphs): the lines tell them apart, where
 * reading such a README as HTML ran its Markdown together into one paragraph.
 */
function mostlyMarkup(text: string): boolean {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const tagged = lines.filter((l) => l.trimStart().startsWith('<')).length;
  return 2 * tagged >= lines.length;
}

/**
 * Whether text opens as HTML: after its prologue, a doctype or a known HTML element (a body
 * element only when the text is mostly markup, `mostlyMarkup`). Only markup decides: an element
 * name HTML does not have (`<note>` of an XML file, `<T>` in a note about generics) leaves the
 * file text.
 */
function opensAsHtml(text: string): boolean {
  PROLOGUE.lastIndex = 0;
  PROLOGUE.exec(text);
  const head = text.slice(PROLOGUE.lastIndex, PROLOGUE.lastIndex + 32).toLowerCase();
  if (/^<!doctype html[\s>]/.test(head)) return true;
  const name = /^<([a-z][a-z0-9]*)[\s/>]/.exec(head)?.[1];
  if (name === undefined || !HTML_ELEMENTS.has(name)) return false;
  return PAGE_ELEMENTS.has(name) || mostlyMarkup(text);
}

/**
 * The type of `bytes` from its leading bytes, never from a file name: a PDF header, a ZIP holding
 * `word/document.xml` (DOCX), markup that opens as HTML, or text that is valid UTF-8 without NUL
 * or other control bytes. Anything else is `null` (refused before anything is stored).
 */
export function sniff(bytes: Uint8Array): DocType | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isPdf(buf)) return 'pdf';
  if (buf.subarray(0, 4).equals(ZIP)) return buf.indexOf('word/document.xml') >= 0 ? 'docx' : null;
  const text = asText(buf);
  if (text === null) return null;
  // RTF is text on the wire but its words are wrapped in control words: not a type read here.
  if (/^\s*\{\\rtf/.test(text)) return null;
  return opensAsHtml(text) ? 'html' : 'text';
}

/** Bytes 0x80–0xFF in text of otherwise printable ASCII: a legacy 8-bit encoding, not binary. */
function legacyText(buf: Buffer): boolean {
  const head = buf.subarray(0, 64 * 1024);
  let high = 0;
  for (const b of head) {
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d) || b === 0x7f) return false;
    if (b >= 0x80) high++;
  }
  return high > 0 && high * 4 < head.length;
}

/**
 * Why `sniff` named no type, for the refusal: what the file looks like, when that is plain, and
 * what to send instead. UTF-16 text and text in a legacy encoding (Latin-1, Windows-1252) are not
 * read as text (DESIGN.md §2: UTF-8 text), but a user who sent one needs to know it is the
 * encoding, not the content, that was refused.
 */
export function unknownType(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) {
    return 'UTF-16 text (by its byte order mark); send it as UTF-8';
  }
  if (buf.subarray(0, 4).equals(ZIP)) return 'a ZIP archive without word/document.xml, so not a DOCX';
  if (/^\s*\{\\rtf/.test(buf.subarray(0, 64).toString('latin1'))) return 'RTF; send it as PDF, DOCX, HTML or text';
  if (legacyText(buf)) return 'text that is not valid UTF-8 (Latin-1 or Windows-1252?); send it as UTF-8';
  return 'not a PDF, DOCX, HTML or UTF-8 text file';
}
