/** A unit of a document's reading order. */
export interface Block {
  kind: 'paragraph' | 'heading' | 'list_item';
  text: string;
  /** 1-based page, for a PDF. */
  page?: number;
  /** Its line breaks and indentation are the text's (code: HTML `<pre>`, a Markdown fence). */
  preformatted?: true;
}

/** A block placed in the extracted text. */
export interface PlacedBlock extends Block {
  /** 0-based, in reading order. */
  paragraph: number;
  /** UTF-8 byte offsets into the extracted text: [start, end). */
  start: number;
  end: number;
}

/**
 * Whitespace runs inside a block become one space; soft hyphens (U+00AD), which a reader never
 * sees unless a word breaks there, go, so the word is stored (and found) whole; blank blocks go.
 * A preformatted block keeps its lines and their indentation (code read as one line loses what
 * makes it code); only line ends are made `\n`, spaces that end a line and blank lines around it go.
 */
export function clean(blocks: Block[]): Block[] {
  return blocks
    .map((b) => ({
      ...b,
      text: b.preformatted
        ? b.text
            .replace(/\r\n?/g, '\n')
            .replace(/[^\S\n]+$/gm, '')
            .replace(/^\n+|\n+$/g, '')
        : b.text
            .replace(/\u00ad/g, '')
            .replace(/\s+/g, ' ')
            .trim(),
    }))
    .filter((b) => b.text !== '');
}

/** The blocks joined by blank lines, and where each sits in that text (UTF-8 bytes). */
export function place(blocks: Block[]): { text: string; blocks: PlacedBlock[] } {
  const placed: PlacedBlock[] = [];
  let bytes = 0;
  for (const [paragraph, b] of blocks.entries()) {
    if (paragraph > 0) bytes += 2;
    const len = Buffer.byteLength(b.text);
    placed.push({ ...b, paragraph, start: bytes, end: bytes + len });
    bytes += len;
  }
  return { text: blocks.map((b) => b.text).join('\n\n'), blocks: placed };
}
