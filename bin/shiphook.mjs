#!/usr/bin/env node
// The shiphook CLI. TypeScript runs through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
