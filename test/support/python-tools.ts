import { ensurePythonTool, type ProvisionedTool } from '../../src/launcher/python-tool';

/** The PyPI tools the contract tests run, pinned; provisioned into node_modules/.cache/shiphook on first use. */
const HELP = 'Install Python 3 with pip (Debian: apt-get install python3-pip), or put the tool on PATH yourself.';

export const openapiSpecValidator = (): ProvisionedTool =>
  ensurePythonTool({ requirement: 'openapi-spec-validator==0.9.0', binary: 'openapi-spec-validator' }, HELP);

export const schemathesis = (): ProvisionedTool => ensurePythonTool({ requirement: 'schemathesis==4.32.5', binary: 'schemathesis' }, HELP);
