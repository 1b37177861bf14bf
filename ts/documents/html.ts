import { Parser } from 'htmlparser2';

import { type Block, clean } from './blocks.js';

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
/** Elements whose text is not the document's. */
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object']);

/** HTML in reading order: paragraphs, headings (h1–h6) and list items, entities decoded. */
export function htmlBlocks(html: string): Block[] {
  const blocks: Block[] = [];
  const open: string[] = [];
  let skipping = 0;
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
  const flush = () => {
    if (text.trim() !== '') blocks.push({ kind: kind(), text });
    text = '';
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIP.has(name)) skipping++;
        if (BLOCK.has(name)) flush();
        open.push(name);
      },
      ontext(chunk) {
        if (skipping === 0) text += chunk;
      },
      onclosetag(name) {
        if (BLOCK.has(name)) flush();
        const at = open.lastIndexOf(name);
        if (at >= 0) open.length = at;
        if (SKIP.has(name)) skipping = Math.max(0, skipping - 1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  flush();
  return clean(blocks);
}
