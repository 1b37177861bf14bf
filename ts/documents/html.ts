import { Parser } from 'htmlparser2';

import { type Block, clean } from './blocks.js';
import { DocumentError } from './errors.js';

/** Elements whose start and end close the running block. */
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'aside',
  'nav',
  'blockquote',
  'pre',
  'li',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'table',
  'tr',
  'td',
  'th',
  'caption',
  'figcaption',
  'figure',
  'address',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'br',
  'form',
  'fieldset',
  'legend',
  'details',
  'summary',
]);
/** Elements whose text keeps its line breaks and indentation, as a browser shows it (code). */
const PREFORMATTED = new Set(['pre', 'listing', 'xmp']);
/** Elements whose text is not the document's; `title` is the head's even where a page leaves out
 * its `<head>` tag (HTML lets it), and a reader sees it on no page. */
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'svg', 'math', 'iframe', 'object']);

/**
 * The deepest elements may nest. htmlparser2 keeps its open elements in an array it shifts at the
 * front, so each level costs as much as the levels above it: 100,000 nested `<div>`s (1 MB) held a
 * reader 17 s, 200,000 unclosed `<b>`s 42 s. Pages nest some tens of levels deep; at this depth
 * the parser has spent some 50 ms.
 */
const MAX_DEPTH = 10_000;

/** An inline style that keeps an element from being shown. */
const HIDING_STYLE =
  /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse))\s*(?:!important\s*)?(?=;|$)/i;

/**
 * Whether an element and everything in it is hidden from a reader, so its text is not the
 * document's: the `hidden` attribute (but `until-found`, which find-in-page reveals),
 * `aria-hidden="true"`, or an inline style `display: none` / `visibility: hidden`. Stylesheets and
 * scripts are not run, so text hidden only by a class stays.
 */
function hides(attribs: Record<string, string>): boolean {
  const hidden = attribs.hidden;
  if (hidden !== undefined && hidden.trim().toLowerCase() !== 'until-found') return true;
  if (attribs['aria-hidden']?.trim().toLowerCase() === 'true') return true;
  return HIDING_STYLE.test(attribs.style ?? '');
}

/** HTML in reading order: paragraphs, headings (h1–h6) and list items, entities decoded; the text
 * of a `<pre>` keeps its lines (`preformatted`). */
export function htmlBlocks(html: string): Block[] {
  const blocks: Block[] = [];
  const open: string[] = [];
  // Where in `open` the outermost element whose text is skipped sits (-1: none): an element
  // closed implicitly with its parent ends the skip too.
  let skipFrom = -1;
  let text = '';
  const kind = (): Block['kind'] => {
    for (let i = open.length - 1; i >= 0; i--) {
      const tag = open[i] ?? '';
      if (/^h[1-6]$/.test(tag)) return 'heading';
      if (tag === 'li') return 'list_item';
      if (BLOCK.has(tag)) return 'paragraph';
    }
    return 'paragraph';
  };
  const preformatted = () => open.some((tag) => PREFORMATTED.has(tag));
  const flush = () => {
    if (text.trim() !== '') blocks.push({ kind: kind(), text, ...(preformatted() ? { preformatted: true } : {}) });
    text = '';
  };
  // A `<br>` in preformatted text is a line break in the block, not the end of one.
  const breaks = (name: string) => BLOCK.has(name) && !(name === 'br' && preformatted());
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (open.length >= MAX_DEPTH) {
          throw new DocumentError('DOCUMENT_NOT_READABLE', `its elements nest more than ${MAX_DEPTH} deep`);
        }
        if (name === 'br' && skipFrom < 0 && preformatted()) text += '\n';
        if (breaks(name)) flush();
        if (skipFrom < 0 && (SKIP.has(name) || hides(attribs))) skipFrom = open.length;
        open.push(name);
      },
      ontext(chunk) {
        if (skipFrom < 0) text += chunk;
      },
      onclosetag(name) {
        if (breaks(name)) flush();
        const at = open.lastIndexOf(name);
        if (at >= 0) open.length = at;
        if (skipFrom >= open.length) skipFrom = -1;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  flush();
  return clean(blocks);
}
