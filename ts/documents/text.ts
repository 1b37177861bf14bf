import { type Block, clean } from './blocks.js';

/** A Markdown code fence: three or more backticks or tildes, indented at most three spaces. */
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** The fence `line` opens a code block with, if any (a backtick fence's info string holds none). */
function opening(line: string): string | undefined {
  const m = FENCE.exec(line);
  if (m === null || (m[1]?.[0] === '`' && m[2]?.includes('`'))) return undefined;
  return m[1];
}

/** Whether `line` closes the block `fence` opened: the same character, at least as many, alone. */
function closes(line: string, fence: string): boolean {
  const m = FENCE.exec(line);
  const f = m?.[1];
  return f !== undefined && f[0] === fence[0] && f.length >= fence.length && m?.[2]?.trim() === '';
}

/**
 * Plain UTF-8 text: paragraphs are separated by blank lines; a `#` line is a heading and a
 * `-`/`*`/`1.` line a list item, as in the Markdown people write notes in. A fenced code block
 * (```` ``` ```` or `~~~` lines, as CommonMark reads them: closed by a fence of the same character at
 * least as long, or by the end of the text) is one block that keeps its lines, blank ones too; the
 * fence lines themselves are not text.
 */
export function textBlocks(bytes: Uint8Array): Block[] {
  const text = new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
  const blocks: Block[] = [];
  let prose: string[] = [];
  let code: { fence: string; lines: string[] } | null = null;
  const endCode = (c: { lines: string[] }) =>
    blocks.push({ kind: 'paragraph', text: c.lines.join('\n'), preformatted: true });
  for (const line of text.split(/\r?\n/)) {
    if (code === null) {
      const fence = opening(line);
      if (fence === undefined) prose.push(line);
      else {
        blocks.push(...proseBlocks(prose.join('\n')));
        prose = [];
        code = { fence, lines: [] };
      }
    } else if (closes(line, code.fence)) {
      endCode(code);
      code = null;
    } else code.lines.push(line);
  }
  if (code !== null) endCode(code);
  blocks.push(...proseBlocks(prose.join('\n')));
  return clean(blocks);
}

/** Text outside code fences, paragraph by paragraph. */
function proseBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    const lines = para.split('\n').filter((l) => l.trim() !== '');
    const items = lines.every((l) => /^\s*([-*•]|\d+[.)])\s+/.test(l));
    if (items) {
      for (const l of lines) blocks.push({ kind: 'list_item', text: l.replace(/^\s*([-*•]|\d+[.)])\s+/, '') });
    } else if (lines.length === 1 && /^#{1,6}\s/.test(lines[0] ?? '')) {
      blocks.push({ kind: 'heading', text: (lines[0] ?? '').replace(/^#{1,6}\s+/, '') });
    } else {
      blocks.push({ kind: 'paragraph', text: para });
    }
  }
  return blocks;
}
