import { Parser } from 'htmlparser2';
import JSZip from 'jszip';

/**
 * A DOCX without its hidden text. Word hides a run marked `<w:vanish/>` (directly, by its
 * character style or by its paragraph's style); mammoth reads it as plain text, and a user who hid
 * it does not expect it stored. So every hidden run (`w:r`) is cut from the parts mammoth reads
 * before it reads them. A run's own `w:vanish` wins over its character style, which wins over its
 * paragraph's style; styles inherit through `w:basedOn`. `w:val` of `0`, `false` or `off` unhides.
 * A file without `vanish` anywhere is passed through as it is.
 */
export async function withoutHiddenText(bytes: Uint8Array): Promise<Uint8Array> {
  const zip = await JSZip.loadAsync(bytes);
  const parts = zip.file(/^word\/[^/]+\.xml$/);
  const texts = new Map(await Promise.all(parts.map(async (f) => [f.name, await f.async('string')] as const)));
  if (![...texts.values()].some((xml) => xml.includes('vanish'))) return bytes;
  const styles = hiddenStyles(texts.get('word/styles.xml') ?? '');
  for (const [name, xml] of texts) {
    if (name === 'word/styles.xml') continue;
    const cut = cutHiddenRuns(xml, styles);
    if (cut !== xml) zip.file(name, cut);
  }
  return zip.generateAsync({ type: 'uint8array' });
}

/** `w:val` of a toggle element: absent or anything but 0/false/off turns it on. */
const on = (attribs: Record<string, string>) => !['0', 'false', 'off'].includes(attribs['w:val'] ?? 'true');

/** Whether a style id hides its runs (inheriting through `basedOn`); `undefined`: it does not say. */
type StyleHides = (id: string | undefined) => boolean | undefined;

/** The styles of `styles.xml` that set `vanish` in their run properties. */
function hiddenStyles(xml: string): StyleHides {
  const own = new Map<string, { vanish?: boolean; basedOn?: string }>();
  let current: { vanish?: boolean; basedOn?: string } | undefined;
  const path: string[] = [];
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        path.push(name);
        if (name === 'w:style') {
          current = {};
          own.set(attribs['w:styleId'] ?? '', current);
        } else if (current && name === 'w:basedOn' && path.at(-2) === 'w:style') {
          current.basedOn = attribs['w:val'];
        } else if (current && name === 'w:vanish' && path.at(-2) === 'w:rPr' && path.at(-3) === 'w:style') {
          current.vanish = on(attribs);
        }
      },
      onclosetag(name) {
        path.pop();
        if (name === 'w:style') current = undefined;
      },
    },
    { xmlMode: true },
  );
  parser.end(xml);
  // `seen` stops a `basedOn` loop (a malformed file) from recurring forever.
  const hides = (id: string | undefined, seen: Set<string>): boolean | undefined => {
    if (id === undefined || seen.has(id)) return undefined;
    seen.add(id);
    const style = own.get(id);
    return style?.vanish ?? hides(style?.basedOn, seen);
  };
  return (id) => hides(id, new Set());
}

/** An open element: where it starts and, for a `w:p` or `w:r`, what decides whether it hides. */
interface Open {
  name: string;
  start: number;
  /** `w:p`: its paragraph style. `w:r`: its own `vanish` and its character style. */
  style?: string;
  vanish?: boolean;
}

/** `xml` without the runs `styles` and their own properties hide (a hidden run whole, with
 * anything nested in it). */
function cutHiddenRuns(xml: string, styles: StyleHides): string {
  const cuts: [number, number][] = [];
  const stack: Open[] = [];
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const parent = stack.at(-1)?.name;
        const owner = stack.at(-2);
        stack.push({ name, start: parser.startIndex });
        // Only the element's own properties count (`w:pPr/w:pStyle`, `w:rPr/w:rStyle`,
        // `w:rPr/w:vanish`), not a paragraph mark's `w:pPr/w:rPr` nor a tracked change's old ones.
        if (owner?.name === 'w:p' && parent === 'w:pPr' && name === 'w:pStyle') owner.style = attribs['w:val'];
        if (owner?.name === 'w:r' && parent === 'w:rPr') {
          if (name === 'w:rStyle') owner.style = attribs['w:val'];
          if (name === 'w:vanish') owner.vanish = on(attribs);
        }
      },
      onclosetag(name) {
        const open = stack.pop();
        if (open === undefined || name !== 'w:r') return;
        const paragraph = stack.findLast((o) => o.name === 'w:p');
        const hidden = open.vanish ?? styles(open.style) ?? styles(paragraph?.style) ?? false;
        if (hidden) cuts.push([open.start, parser.endIndex + 1]);
      },
    },
    { xmlMode: true },
  );
  parser.end(xml);
  if (cuts.length === 0) return xml;
  // A run inside a hidden run (a text box's) goes with it: keep the outermost cuts.
  cuts.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  for (const [start, end] of cuts) {
    if (start < at) continue;
    out += xml.slice(at, start);
    at = end;
  }
  return out + xml.slice(at);
}
