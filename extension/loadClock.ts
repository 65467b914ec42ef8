/**
 * Records when dist/extension.js began to evaluate. main.ts imports it first (after `vscode`), so
 * the activation time it reports covers the evaluation of every bundled module, not only activate().
 */
export const moduleStartedAt = performance.now();
/** CPU time used by the process so far: less sensitive than wall time to a busy machine. */
export const moduleStartedCpu = process.cpuUsage();
