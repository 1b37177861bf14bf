import { createRequire } from 'node:module';

/** The package version, shown in health, status and the MCP server info. */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
