import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { ensurePythonTool, TOOLS_DIR } from '../../src/launcher/python-tool';
import { fetchMarker, PYTHON_TOOLS } from './python-tools';

/**
 * `node --import tsx test/support/provision-tools.ts <tool>`: fetches one of the suite's PyPI
 * tools (python-tools.ts). The global setup runs it in the background, so a first run fetches
 * them while PostgreSQL and Temporal start, not inside the tests that need them. Silent when it
 * cannot: the test that needs the tool then fetches it itself and says why it cannot.
 */
const tool = PYTHON_TOOLS[process.argv[2] as keyof typeof PYTHON_TOOLS];
if (!tool) throw new Error(`usage: provision-tools.ts ${Object.keys(PYTHON_TOOLS).join('|')}`);
const marker = fetchMarker(tool, process.pid); // tests that need the tool wait while it is there
mkdirSync(TOOLS_DIR, { recursive: true });
writeFileSync(marker, '');
try {
  ensurePythonTool(tool, '');
} catch {
  process.exitCode = 1;
} finally {
  rmSync(marker, { force: true });
}
