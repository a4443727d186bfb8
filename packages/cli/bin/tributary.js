#!/usr/bin/env node
// The CLI runs from TypeScript source, like the services; tsx compiles it on load.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
