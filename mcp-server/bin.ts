/**
 * dist/baton.js, the entry of the `baton` program (package.json `bin`, `npm start`, every MCP client
 * config): it only picks the bundle to load. `baton mcp`, one process per agent, loads dist/mcp.js,
 * which holds the MCP server and the hub client and nothing of the hub, the store (PGlite, pg) or the
 * CLI; every other command loads dist/program.js (main.ts). Parsing the whole 3 MB bundle cost each
 * agent process most of its start-up CPU (issue 14). Must stay a few lines and import nothing of ours.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';

// process.argv[1] stays this file, so a hub spawned from either bundle is `node dist/baton.js hub`.
createRequire(__filename)(join(__dirname, process.argv[2] === 'mcp' ? 'mcp.js' : 'program.js'));
