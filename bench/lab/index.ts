import type { BenchSystem } from '../system';
import { batch } from './batch';
import { floor } from './floor';
import { held } from './held';
import { retry } from './retry';
import { saturation } from './saturation';
import { soak } from './soak';

/**
 * The lab: scenarios that no target in bench/targets.ts reads, kept for the questions they
 * answer (what the Temporal server allows per workflow, what a later attempt costs, how the
 * system falls behind and drains, what a batch saves, what grows over hours). They run only
 * when named (`npm run bench -- soak`, or `--only`), after the scenarios the targets read,
 * each with its own sizes and flags. Their figures: docs/performance-log.md.
 */
export interface LabScenario {
  /** One line for `--help`. */
  about: string;
  /** Flags of its own: name → help (each takes a value). */
  flags?: Record<string, string>;
  /** Engine settings it needs (bench/system.ts); it then runs alone. */
  env?: Record<string, string>;
  run(sys: BenchSystem, ctx: LabContext): Promise<Record<string, unknown>>;
}

export interface LabContext {
  quick: boolean;
  /** The flag as a positive number, or `fallback` when it was not given. */
  number(flag: string, fallback: number): number;
  /** The results of the scenarios that ran before (a lab scenario compares with the burst's). */
  results: Record<string, Record<string, unknown>>;
}

export const LAB: Record<string, LabScenario> = { floor, retry, saturation, batch, soak, held };
