/**
 * The V8 flags the processes a test starts run with: `--liftoff-only`, handed to the `baton` processes
 * as BATON_V8_FLAGS (read by mcp-server/bin.ts, so it reaches the hubs they spawn in turn) and to a
 * test's own `node` children as arguments; the npm test scripts give the test processes themselves the
 * same flag. A short-lived process then compiles PGlite's 9 MB WASM once, with V8's baseline compiler,
 * instead of also optimising its hot functions on the other core: a hub start measured 1.75 s of CPU
 * with the default tiers and 0.98 s with it. What the processes do is the same. The benchmarks
 * (test/bench) do not use these helpers and measure the default tiers. A BATON_V8_FLAGS already set
 * wins ('' for the default tiers). Must not set anything but V8 flags.
 */
export const testV8Flags = process.env.BATON_V8_FLAGS ?? '--liftoff-only';

/** The same flags as node arguments, for a test's own `node` children (`node --liftoff-only …`). */
export const testNodeArgs: readonly string[] = testV8Flags.split(/\s+/).filter(flag => flag !== '');
