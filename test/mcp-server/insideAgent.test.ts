/**
 * insideAgent on its own: which environment markers count (an agent CLI's, baton run's), and the
 * walk up a process tree laid out like /proc in a temp folder (comm, cmdline, stat with a comm
 * holding spaces and parentheses), three ancestors deep and no further.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { insideAgent } from '../../mcp-server/cli/insideAgent';

const root = mkdtempSync('/tmp/bt-proc-');
after(() => rmSync(root, { recursive: true, force: true }));

/** A fake /proc entry: pid with comm, argv and parent. */
function proc(pid: number, comm: string, argv: string[], ppid: number): void {
	const dir = join(root, String(pid));
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, 'comm'), `${comm}\n`);
	writeFileSync(join(dir, 'cmdline'), `${argv.join('\0')}\0`);
	writeFileSync(join(dir, 'stat'), `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1`);
}

describe('insideAgent', () => {
	it('names the environment marker it found; empty, 0 and false do not count', () => {
		const none = { parentPid: 1, procRoot: root };
		assert.equal(insideAgent({ env: { CLAUDECODE: '1' }, ...none }), 'CLAUDECODE is set');
		assert.equal(insideAgent({ env: { GEMINI_CLI: '1' }, ...none }), 'GEMINI_CLI is set');
		assert.equal(insideAgent({ env: { CODEX_SANDBOX: 'seatbelt' }, ...none }), 'CODEX_SANDBOX is set');
		assert.equal(insideAgent({ env: { BATON_INSIDE_MCP: 'baton mcp (pid 7)' }, ...none }), 'BATON_INSIDE_MCP is set');
		for (const value of ['', '0', 'false']) {
			assert.equal(insideAgent({ env: { CLAUDECODE: value }, ...none }), undefined);
		}
		assert.equal(insideAgent({ env: { CODEX_HOME: '/home/me/.codex', HOME: '/home/me' }, ...none }), undefined);
	});

	it("counts an agent baton run started by the supervisor's variables, even with BATON_AGENT unset", () => {
		const none = { parentPid: 1, procRoot: root };
		const session = 'run-main-seat-1-0123456789abcdef';
		assert.equal(
			insideAgent({ env: { BATON_SESSION: session, BATON_CARD_ID: 'A1' }, ...none }),
			'BATON_SESSION is set: baton run started it',
		);
		assert.equal(insideAgent({ env: { BATON_CARD_ID: 'A1' }, ...none }), 'BATON_CARD_ID is set: baton run started it');
		assert.equal(insideAgent({ env: { BATON_SESSION: '', BATON_CARD_ID: '' }, ...none }), undefined);
		// BATON_AGENT alone is a person's --agent default (cli:alice), not a dispatched agent.
		assert.equal(insideAgent({ env: { BATON_AGENT: 'alice' }, ...none }), undefined);
	});

	it('finds an agent CLI among the three nearest ancestors, by comm or by a node script name', () => {
		// 100 `codex` ← 101 bash ← 102 node (npx) ← 103 sh ← baton
		proc(100, 'codex', ['/usr/bin/codex'], 1);
		proc(101, 'bash', ['/bin/bash', '-c', 'npx baton approve X'], 100);
		proc(102, 'node', ['node', '/usr/bin/npx', 'baton'], 101);
		proc(103, 'sh', ['sh', '-c', 'baton approve X'], 102);
		assert.equal(insideAgent({ env: {}, parentPid: 101, procRoot: root }), 'it runs under codex (pid 100)');
		assert.equal(insideAgent({ env: {}, parentPid: 102, procRoot: root }), 'it runs under codex (pid 100)');
		assert.equal(insideAgent({ env: {}, parentPid: 103, procRoot: root }), undefined, 'four levels up is too far');
		// Gemini runs as `node …/gemini.js`; its comm is node.
		proc(200, 'node', ['node', '/usr/lib/node_modules/@google/gemini-cli/dist/gemini.js'], 1);
		proc(201, 'weird (name) x', ['/bin/zsh'], 200);
		assert.equal(insideAgent({ env: {}, parentPid: 201, procRoot: root }), 'it runs under gemini (pid 200)');
		// A person's terminal.
		proc(300, 'sshd', ['sshd: me@pts/0'], 1);
		proc(301, 'bash', ['-bash'], 300);
		assert.equal(insideAgent({ env: {}, parentPid: 301, procRoot: root }), undefined);
	});
});
