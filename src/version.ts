import { readFileSync } from 'node:fs';

/** The package version, sent as `User-Agent: shiphook/<version>`. */
export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
