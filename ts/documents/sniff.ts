/** The document types `memory_document` reads. */
export type DocType = 'pdf' | 'docx' | 'html' | 'text';

const PDF = Buffer.from('%PDF-');
const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** How far into a file its kind must show (a PDF header may follow a little junk). */
const HEAD = 1024;

/** Control characters other than tab, newline, form feed and carriage return mean binary data. */
function binary(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0c && c !== 0x0d) || c === 0x7f) return true;
  }
  return false;
}

/**
 * The type of `bytes` from its leading bytes, never from a file name: a PDF header, a ZIP holding
 * `word/document.xml` (DOCX), markup that opens as HTML, or text that is valid UTF-8 without NUL
 * or other control bytes. Anything else is `null` (refused before anything is stored).
 */
export function sniff(bytes: Uint8Array): DocType | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.subarray(0, HEAD).indexOf(PDF) >= 0) return 'pdf';
  if (buf.subarray(0, 4).equals(ZIP)) return buf.indexOf('word/document.xml') >= 0 ? 'docx' : null;
  const start = buf.subarray(0, 3).equals(BOM) ? 3 : 0;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(start));
  } catch {
    return null;
  }
  if (binary(text)) return null;
  const head = text
    .slice(0, HEAD)
    .trimStart()
    .toLowerCase()
    // An XHTML page opens with an XML declaration before its doctype or <html>.
    .replace(/^<\?xml[^>]*\?>\s*/, '');
  // RTF is text on the wire but its words are wrapped in control words: not a type read here.
  if (head.startsWith('{\\rtf')) return null;
  if (/^(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>]|<!--[\s\S]*?-->\s*<(!doctype html|html))/.test(head)) {
    return 'html';
  }
  return 'text';
}
