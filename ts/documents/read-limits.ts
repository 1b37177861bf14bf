/**
 * What one document's reader may spend: `seconds` of wall time and a heap of `mb` megabytes. A
 * crafted or pathological file (a PDF whose content streams never end, a DOCX that inflates to
 * gigabytes) is stopped there and refused, instead of holding a reader, or the node's memory,
 * forever. Set with CAIRN_DOCUMENT_READ_SECONDS and CAIRN_DOCUMENT_READ_MB; `cairn serve` refuses
 * to start on a value that is not a whole number in range (`readLimitsRefusal`).
 */
export interface ReadLimits {
  seconds: number;
  mb: number;
}

/**
 * Room for any real file of the 5,000,000 bytes a call may send: a 5,000-page, 4 MB PDF read here
 * in about 5 s, and even in a 64 MB heap (in 12 s, collecting all the while).
 */
const DEFAULTS: ReadLimits = { seconds: 60, mb: 512 };

const RANGES = {
  CAIRN_DOCUMENT_READ_SECONDS: { min: 1, max: 3600, what: 'seconds a document may take to read' },
  CAIRN_DOCUMENT_READ_MB: { min: 64, max: 65536, what: 'megabytes of heap a document reader may use' },
} as const;

type Name = keyof typeof RANGES;

function valid(name: Name, text: string): boolean {
  const n = Number(text);
  return /^\d{1,6}$/.test(text) && n >= RANGES[name].min && n <= RANGES[name].max;
}

/** Why the environment's limits cannot be used, or null. */
export function readLimitsRefusal(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const name of Object.keys(RANGES) as Name[]) {
    const text = env[name];
    if (text !== undefined && !valid(name, text)) {
      const { min, max, what } = RANGES[name];
      return `${name} must be a whole number of ${what}, ${min}–${max}, got ${JSON.stringify(text)}`;
    }
  }
  return null;
}

/** The limits in force: the environment's where valid, else the defaults. */
export function readLimits(env: NodeJS.ProcessEnv = process.env): ReadLimits {
  const read = (name: Name, fallback: number) => {
    const text = env[name];
    return text !== undefined && valid(name, text) ? Number(text) : fallback;
  };
  return {
    seconds: read('CAIRN_DOCUMENT_READ_SECONDS', DEFAULTS.seconds),
    mb: read('CAIRN_DOCUMENT_READ_MB', DEFAULTS.mb),
  };
}
