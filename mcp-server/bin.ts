/**
 * dist/baton.js, the entry of the `baton` program (package.json `bin`, `npm start`, every MCP client
 * config): it only picks the bundle to load. `baton mcp`, one process per agent, loads dist/mcp.js,
 * which holds the MCP server and the hub client and nothing of the hub, the store (PGlite, pg) or the
 * CLI; every other command loads dist/program.js (main.ts). Parsing the whole 3 MB bundle cost each
 * agent process most of its start-up CPU. Must stay a few lines and import nothing of ours.
 *
 * BATON_V8_FLAGS (e.g. `--liftoff-only`) is handed to V8 before either bundle loads, after `baton mcp`'s
 * own: Node refuses V8 flags in NODE_OPTIONS, and an environment variable reaches the hubs a command spawns. The test
 * helpers set it so each short-lived hub compiles PGlite's WASM once, with the baseline compiler,
 * instead of also optimising it on a second core (about 45 % of a hub start's CPU). Unset: nothing.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';

/**
 * `baton mcp` runs V8 in lite mode: the interpreter only, no baseline or optimising
 * compiler, no code generated at run time. An MCP session spends its CPU in builtins (JSON, strings,
 * the socket and pipe writes), not in hot loops of its own, and each of up to 64 agents' processes
 * compiled and optimised its paths for its own few calls a minute: with 64 agents, lite mode measured
 * 1.5–1.6 against 2.1–2.3 ms of CPU per tool call and 55 against 62 MB resident per agent
 * (docs/benchmarks.md).
 * `baton mcp` loads no WebAssembly, which lite mode turns off. It also keeps V8's young generation at
 * its first size (1 MB a semi-space) instead of letting it double up to 16 MB: an MCP session's
 * garbage is short-lived and small, so the smaller nursery costs scavenges of almost nothing live (6 MB
 * less after start, 14 MB after hundreds of calls). Both take effect set here, after start-up: V8
 * consults them each time it would compile or grow the space, and nothing of ours has run yet.
 */
const mcpV8Flags = '--lite-mode --semi-space-growth-factor=1';

const mcp = process.argv[2] === 'mcp';
if (mcp) {
	setFlagsFromString(mcpV8Flags);
}
if (process.env.BATON_V8_FLAGS) {
	setFlagsFromString(process.env.BATON_V8_FLAGS);
}

// The real file of the program, whatever name started it (npm's `<prefix>/bin/baton` symlink, a copy):
// the commit guard's hook runs `node <this file> commit-guard` (mcp-server/workspaces/commitGuard.ts).
(globalThis as { batonProgramFile?: string }).batonProgramFile = __filename;

// process.argv[1] stays this file, so a hub spawned from either bundle is `node dist/baton.js hub`.
createRequire(__filename)(join(__dirname, mcp ? 'mcp.js' : 'program.js'));
