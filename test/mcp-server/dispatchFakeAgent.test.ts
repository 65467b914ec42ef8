/**
 * The hand-over from a seat to its agent without the supervisor: a seat connection (agent A,
 * session S, kind fake) makes the dispatched claim, then the fake agent CLI (test/fixtures/fakeAgent.mjs)
 * is started the way `baton run --command` starts it (template, env and MCP config file of
 * mcp-server/dispatch/) and talks to the real `baton mcp` of that file: its `claim {}` gets the card the
 * seat holds (no second claim, same epoch), its edits land in its folder, and its title decides whether
 * it completes, crashes or reports a rate limit before claiming.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { RpcClient } from '../../core/protocol/rpc';
import { launchFor, resolveAgentCommand } from '../../mcp-server/dispatch/agents';
import { agentMcpServer, batonMcpCommand, writeMcpConfig } from '../../mcp-server/dispatch/mcpConfigFile';
import { agentPrompt } from '../../mcp-server/dispatch/prompt';
import { type HubProcess, client, startHub } from '../helpers/hub';
import { batonJs, childEnv, cleanupDataDir, ensureBuilt } from '../helpers/mcp';

const fakeAgent = path.resolve(import.meta.dirname, '..', 'fixtures', 'fakeAgent.mjs');
let base: string;
let dataDir: string;
let hub: HubProcess;
let admin: RpcClient;
const seats: RpcClient[] = [];

before(async () => {
	ensureBuilt();
	base = mkdtempSync('/tmp/bt-fa-');
	dataDir = path.join(base, 'd');
	hub = await startHub({ dataDir });
	admin = await client(dataDir, { agent: { id: 'vscode:alice' } });
});

after(async () => {
	for (const s of seats) {
		s.close();
	}
	admin.close();
	await hub.stop();
	await cleanupDataDir(dataDir);
	rmSync(base, { recursive: true, force: true });
});

/** A seat claims the card titled `title` for agent `n`, then the fake agent runs for it. */
async function dispatch(n: number, title: string) {
	const { cards } = await admin.request('card/create', { cards: [{ title }] });
	const cardId = cards[0]?.id ?? '';
	const agent = `fake-default-s${n}-t${n}ab`;
	const session = `test-session-${n}-0123456789`;
	const seat = await client(dataDir, { agent: { id: agent, kind: 'fake' }, session });
	seats.push(seat);
	const claimed = await seat.request('card/claim', { cardId, dispatch: { run: 'default', seat: n, kind: 'fake' } });
	const card = claimed.card;
	assert.ok(card !== null && claimed.lease !== null, claimed.reason);
	assert.equal(card.id, cardId);
	assert.equal(card.dispatch?.seat, n);
	const workspace = path.join(base, `w${n}`);
	mkdirSync(workspace);
	const identity = { cardId, agent, session, kind: 'fake', dataDir };
	const server = agentMcpServer(batonMcpCommand(batonJs), identity);
	const mcpConfigPath = path.join(base, `${cardId}.mcp.json`);
	writeMcpConfig(mcpConfigPath, server);
	const command = resolveAgentCommand({
		command: `${process.execPath} ${fakeAgent} {mcpConfig}`,
		cwd: base,
		pathVar: process.env.PATH,
	});
	const launch = launchFor(
		command,
		{
			cardId,
			workspace,
			mcpConfigPath,
			promptFile: path.join(base, 'p.md'),
			prompt: agentPrompt({ card, workspace }),
			mcpServer: server,
		},
		childEnv(dataDir, { FAKE_AGENT_STATE_DIR: base }),
	);
	const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
		const child = spawn(launch.command, launch.args, {
			cwd: launch.cwd,
			env: launch.env,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let output = '';
		child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
		child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
		const timer = setTimeout(() => {
			child.kill('SIGKILL');
			reject(new Error(`the fake agent did not exit in 30 s:\n${output}`));
		}, 30_000);
		child.on('close', code => {
			clearTimeout(timer);
			resolve({ code, output });
		});
	});
	const { events } = await admin.request('events/list', { cardId });
	const after = await admin.request('card/get', { cardId });
	return { cardId, agent, epoch: claimed.lease.epoch, run, events, card: after.card, workspace };
}

describe('a seat hands its card to the fake agent it starts', () => {
	it("complete: the agent's claim {} returns the seat's card, and the agent completes it", async () => {
		const r = await dispatch(1, 'Write the notes complete 10ms');
		assert.equal(r.run.code, 0, r.run.output);
		assert.match(r.run.output, new RegExp(`claimed ${r.cardId} \\(epoch ${r.epoch}\\): complete`));
		assert.equal(r.card.status, 'done');
		assert.deepEqual(
			r.events.map(e => e.type).filter(t => t === 'claimed'),
			['claimed'],
			"one claim: the agent resumed the seat's",
		);
		assert.equal(r.events.find(e => e.type === 'completed')?.actor, r.agent);
		assert.ok(existsSync(path.join(r.workspace, `fake-${r.cardId}.txt`)));
	});

	it('crash: the agent edits its folder and exits 3 without completing', async () => {
		const r = await dispatch(2, 'Refactor crash');
		assert.equal(r.run.code, 3, r.run.output);
		assert.ok(existsSync(path.join(r.workspace, `fake-${r.cardId}.txt`)));
		assert.notEqual(r.card.status, 'done');
	});

	it('ratelimit-once: the first agent prints the 429 and exits 1 before claiming', async () => {
		const r = await dispatch(3, 'Tune ratelimit-once');
		assert.equal(r.run.code, 1, r.run.output);
		assert.match(r.run.output, /Error: 429 rate limit exceeded/);
		assert.equal(r.card.claimOwner, r.agent, 'still held by the seat, untouched by the agent');
		assert.ok(!existsSync(path.join(r.workspace, `fake-${r.cardId}.txt`)));
	});
});
