import { DocumentError } from '../documents/errors.js';
import type { Extracted } from '../documents/extract.js';
import { extract } from '../documents/extract.js';
import { sniff, unknownType } from '../documents/sniff.js';
import { DOCUMENT_MAX_BYTES, DocumentInput, normalBase64 } from '../protocol/document.js';
import { ApiError } from '../protocol/errors.js';
import { type Principal, parseInput, type Service } from './context.js';
import { knowledge } from './engine.js';
import { resolveIdentity } from './identity.js';

/** Text and blocks come back in the reply up to this size; past it, only sizes. */
const INLINE_TEXT = 16 * 1024;
/** What `remember` takes as one content (DESIGN.md §2: 1 MiB of text a call). */
const MAX_TEXT = 1024 * 1024;

const field = (message: string) => [{ field: 'content_base64', message }];

/**
 * memory_document: a PDF, DOCX, HTML or UTF-8 text file (base64), its type read from its leading
 * bytes. Its text is extracted in reading order (paragraphs, headings, list items; a PDF's
 * paragraphs rebuilt from layout) and stored as `content` with `remember` (source: `name`). An
 * unknown type is 415, a truncated or malformed file 422 `DOCUMENT_CORRUPT`, an encrypted or
 * scanned PDF 422 `DOCUMENT_NOT_READABLE`, each before anything is stored.
 */
export async function memoryDocument(svc: Service, p: Principal, raw: unknown): Promise<Record<string, unknown>> {
  const input = parseInput(DocumentInput, raw);
  const bytes = Buffer.from(normalBase64(input.content_base64), 'base64');
  if (bytes.length > DOCUMENT_MAX_BYTES) {
    throw new ApiError(
      'PAYLOAD_TOO_LARGE',
      `content_base64: ${bytes.length} bytes decoded; at most 5,000,000`,
      field('too large'),
    );
  }
  const type = sniff(bytes);
  if (type === null) {
    throw new ApiError(
      'UNSUPPORTED_MEDIA_TYPE',
      `content_base64: ${unknownType(bytes)} (the type is read from the bytes, not the name)`,
      field('unknown type'),
    );
  }
  const id = resolveIdentity(p, input);
  let doc: Extracted;
  try {
    // The readers take turns between callers: an agent's pile waits behind another's one document.
    doc = await extract(bytes, type, `${p.token.id}\0${id.user}`);
  } catch (err) {
    if (err instanceof DocumentError)
      throw new ApiError(err.code, `content_base64: ${err.message}`, field(err.message));
    throw err;
  }
  const textBytes = Buffer.byteLength(doc.text);
  if (textBytes === 0) {
    throw new ApiError('DOCUMENT_NOT_READABLE', 'content_base64: the document holds no text', field('no text'));
  }
  if (textBytes > MAX_TEXT) {
    throw new ApiError(
      'PAYLOAD_TOO_LARGE',
      `content_base64: the document's text is ${textBytes} bytes; at most 1 MiB a document`,
      field('text too large'),
    );
  }
  const stored = await knowledge(svc.store, 'remember', id, {
    content: doc.text,
    source: input.source ?? input.name,
    ...(input.date === undefined ? {} : { date: input.date }),
  });
  const pages = type === 'pdf' ? Math.max(0, ...doc.blocks.map((b) => b.page ?? 0)) : undefined;
  return {
    ...(stored.doc_id === undefined ? {} : { doc_id: stored.doc_id }),
    name: input.name,
    type,
    already: stored.already,
    // As stored: a text stored before keeps its first label, whatever `name` this call sent.
    ...(stored.source === undefined ? {} : { source: stored.source }),
    stored: stored.stored,
    meaning: stored.meaning,
    sizes: {
      bytes: bytes.length,
      text_bytes: textBytes,
      blocks: doc.blocks.length,
      ...(pages === undefined ? {} : { pages }),
    },
    // A block is its place in `text` (page, paragraph, byte span: DESIGN.md §2); its own text again
    // doubled the reply (an audit: 7.5 KB of text came back as 19.3 KB).
    ...(textBytes <= INLINE_TEXT
      ? { text: doc.text, blocks: doc.blocks.map(({ text: _text, ...place }) => place) }
      : {}),
  };
}
