import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ensurePythonTool, type ProvisionedTool, provisionedTool, type PythonTool, TOOLS_DIR, toolDir } from '../../src/launcher/python-tool';

/** The PyPI tools the contract tests run, pinned; provisioned into node_modules/.cache/shiphook on first use. */
const HELP = 'Install Python 3 with pip (Debian: apt-get install python3-pip), or put the tool on PATH yourself.';

export const PYTHON_TOOLS = {
  'openapi-spec-validator': { requirement: 'openapi-spec-validator==0.9.0', binary: 'openapi-spec-validator' },
  schemathesis: { requirement: 'schemathesis==4.32.5', binary: 'schemathesis' },
} satisfies Record<string, PythonTool>;

export const openapiSpecValidator = (): Promise<ProvisionedTool> => provisioned(PYTHON_TOOLS['openapi-spec-validator']);
export const schemathesis = (): Promise<ProvisionedTool> => provisioned(PYTHON_TOOLS.schemathesis);

/** The tool, once the global setup's background fetch of it (provision-tools.ts) has ended, or fetched now. */
async function provisioned(tool: PythonTool): Promise<ProvisionedTool> {
  while (!provisionedTool(tool) && fetchesUnderWay(tool)) await new Promise((r) => setTimeout(r, 250));
  return ensurePythonTool(tool, HELP);
}

/**
 * Where a background fetch of the tool (provision-tools.ts) says it is under way: pip stages
 * a `--target` install elsewhere until its very end, so nothing else shows it meanwhile.
 */
export const fetchMarker = (tool: PythonTool, pid: number) => path.join(TOOLS_DIR, `${markerPrefix(tool)}${pid}`);
const markerPrefix = (tool: PythonTool) => `${path.basename(toolDir(tool))}.fetching-`;

/** Whether a live process is fetching the tool in the background. */
function fetchesUnderWay(tool: PythonTool): boolean {
  if (!existsSync(TOOLS_DIR)) return false;
  const prefix = markerPrefix(tool);
  return readdirSync(TOOLS_DIR).some((entry) => entry.startsWith(prefix) && alive(Number(entry.slice(prefix.length))));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
