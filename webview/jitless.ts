/**
 * Side-effect module, imported first by main.ts: zod compiles object parsers with new Function()
 * and probes for it while schemas are *defined*; under the board's CSP (no 'unsafe-eval') even the
 * guarded probe is reported as a violation. This must run before core/protocol/index.ts builds its schemas.
 */
import { z } from 'zod';

z.config({ jitless: true });
