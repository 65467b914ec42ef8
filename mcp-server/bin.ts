/**
 * dist/baton.js, the entry of the `baton` program (package.json `bin`, `npm start`, every MCP client
 * config): it only picks the bundle to load. `baton mcp`, one process per agent, loads dist/mcp.js,
 * which holds the MCP server and the hub client and nothing of the hub, the store (PGlite, pg) or the
 * CLI; every other command loads dist/program.js (main.ts). Parsing the whole 3 MB bundle cost each
 * agent process most of its start-up CPU (issue 14). Must stay a few lines and import nothing of ours.
 *
 * BATON_V8_FLAGS (e.g. `--liftoff-only`) is handed to V8 before either bundle loads: Node refuses V8
 * flags in NODE_OPTIONS, and an environment variable reaches the hubs a command spawns. The test
 * helpers set it so each short-lived hub compiles PGlite's WASM once, with the baseline compiler,
 * instead of also optimising it on a second core (about 45 % of a hub start's CPU). Unset: nothing.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';

if (process.env.BATON_V8_FLAGS) {
	setFlagsFromString(process.env.BATON_V8_FLAGS);
}

// process.argv[1] stays this file, so a hub spawned from either bundle is `node dist/baton.js hub`.
createRequire(__filename)(join(__dirname, process.argv[2] === 'mcp' ? 'mcp.js' : 'program.js'));
