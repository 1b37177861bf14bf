/**
 * The Node.js versions Cairn runs on, as package.json's `engines` states them. The floors are its
 * dependencies': pdfjs-dist, which reads PDF documents, calls `process.getBuiltinModule` (Node
 * 20.16, 22.3) and states 20.19 / 22.13; the addon's build tool (@napi-rs/cli, which `npm install`
 * runs) states 20.17 / 22.13. On Node 22.0 every PDF sent to `memory_document` failed 500
 * INTERNAL ("DOMMatrix is not defined") while the rest of the node ran.
 */
export const SUPPORTED_NODE = '^20.19.0 || >=22.13.0';

/** {@link SUPPORTED_NODE} as a person reads it. */
export const SUPPORTED_NODE_SAID = 'Node.js 20.19 or a later 20, or 22.13 or later';

/** Whether Node `version` (as `process.versions.node`: "22.13.0") is one Cairn runs on. */
export function nodeSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major === 20) return minor >= 19;
  if (major === 22) return minor >= 13;
  return major > 22;
}
