import { type Block, clean } from './blocks.js';

/** Plain UTF-8 text: paragraphs are separated by blank lines; a `#` line is a heading and a
 * `-`/`*`/`1.` line a list item, as in the Markdown people write notes in. */
export function textBlocks(bytes: Uint8Array): Block[] {
  const text = new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
  const blocks: Block[] = [];
  for (const para of text.split(/\r?\n\s*\r?\n/)) {
    const lines = para.split(/\r?\n/).filter((l) => l.trim() !== '');
    const items = lines.every((l) => /^\s*([-*•]|\d+[.)])\s+/.test(l));
    if (items) {
      for (const l of lines) blocks.push({ kind: 'list_item', text: l.replace(/^\s*([-*•]|\d+[.)])\s+/, '') });
    } else if (lines.length === 1 && /^#{1,6}\s/.test(lines[0] ?? '')) {
      blocks.push({ kind: 'heading', text: (lines[0] ?? '').replace(/^#{1,6}\s+/, '') });
    } else {
      blocks.push({ kind: 'paragraph', text: para });
    }
  }
  return clean(blocks);
}
