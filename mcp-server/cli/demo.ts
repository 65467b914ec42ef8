/**
 * `baton demo`: a fresh data dir, a small phased plan (a DAG), and three simulated agents, each a real
 * `baton mcp` driven by the MCP SDK client, exactly as an agent's client would. The first agent to
 * hold a build card is killed mid-card, so a newcomer sees the hub release its claim and another agent
 * pick the card up. Narrated on stdout; finishes by itself in well under a minute.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { plural } from '../../core/plural';
import type { BacklogEvent, CreateCardInput } from '../../core/protocol';
import type { Command, CommandContext } from './command';
import { cliFlags } from './flags';
import { batonScript, openHub } from './hubClient';
import { UsageError } from './output';

/** The sample plan: plan -> build (three in parallel) -> ship. */
export const demoPlan: CreateCardInput[] = [
	{ id: 'plan-api', title: 'Sketch the API', phase: 'plan', priority: 10 },
	{ id: 'build-store', title: 'Store schema and migrations', phase: 'build', dependsOn: ['plan-api'] },
	{ id: 'build-http', title: 'HTTP handlers', phase: 'build', dependsOn: ['plan-api'], priority: 5 },
	{ id: 'build-cli', title: 'CLI wrapper', phase: 'build', dependsOn: ['plan-api'] },
	{ id: 'build-docs', title: 'API reference', phase: 'build', dependsOn: ['build-http'] },
	{
		id: 'ship-tests',
		title: 'Integration tests',
		phase: 'ship',
		dependsOn: ['build-store', 'build-http', 'build-cli'],
	},
	{ id: 'ship-notes', title: 'Release notes', phase: 'ship', dependsOn: ['build-docs', 'ship-tests'] },
];

const agentNames = ['ada', 'bob', 'cy'] as const;
const demoTimeoutMs = 50_000;

interface ToolJson {
	card?: { id: string; title: string; phase?: string } | null;
	lease?: { epoch: number } | null;
	reason?: string;
	unblocked?: string[];
	counts?: { done: number };
	total?: number;
}

function sleep(ms: number): Promise<void> {
	return new Promise(r => setTimeout(r, ms));
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolJson> {
	const result = await client.callTool({ name, arguments: args });
	const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
	if (result.isError === true) {
		throw new Error(first?.text ?? `${name} failed`);
	}
	return result.structuredContent ?? {};
}

class Narrator {
	private readonly start = Date.now();
	constructor(private readonly ctx: CommandContext) {}
	say(who: string, text: string): void {
		const t = ((Date.now() - this.start) / 1000).toFixed(1).padStart(5);
		this.ctx.output.out(`${t}s  ${who.padEnd(5)}  ${text}`);
	}
}

/** One simulated agent: a real `baton mcp` child process over stdio. */
async function runAgent(
	name: string,
	dataDir: string,
	narrator: Narrator,
	total: number,
	crash: { armed: boolean },
): Promise<void> {
	const transport = new StdioClientTransport({
		command: process.execPath,
		args: [batonScript(), 'mcp', '--agent', name],
		env: { ...process.env, BATON_DATA_DIR: dataDir },
		stderr: 'ignore',
	});
	const client = new Client({ name: `demo-${name}`, version: '1.0.0' });
	await client.connect(transport);
	narrator.say(name, 'connected (its own "baton mcp" process)');
	try {
		for (;;) {
			const r = await call(client, 'claim', { waitSeconds: 3 });
			if (r.card == null || r.lease == null) {
				const stats = await call(client, 'stats', {});
				if ((stats.counts?.done ?? 0) >= total) {
					narrator.say(name, 'nothing left to do, signing off');
					return;
				}
				narrator.say(name, `nothing claimable yet (${r.reason ?? 'waiting'})`);
				continue;
			}
			const card = r.card;
			narrator.say(name, `claims ${card.id} "${card.title}" (lease epoch ${r.lease.epoch})`);
			await sleep(300 + Math.floor(Math.random() * 300));
			await call(client, 'heartbeat', { cardId: card.id, progress: 50, note: 'half way' });
			narrator.say(name, `heartbeat on ${card.id}: 50%`);
			// Whoever first holds a build card crashes, so the crash happens while others still work.
			if (crash.armed && card.phase === 'build') {
				crash.armed = false;
				narrator.say('demo', `kill -9 ${name} (pid ${transport.pid ?? '?'}) while it holds ${card.id}`);
				if (transport.pid !== null) {
					process.kill(transport.pid, 'SIGKILL');
				}
				return;
			}
			await sleep(300 + Math.floor(Math.random() * 300));
			const done = await call(client, 'complete', { cardId: card.id, result: `done by ${name}` });
			const freed = done.unblocked ?? [];
			narrator.say(name, `completes ${card.id}${freed.length > 0 ? `; now claimable: ${freed.join(', ')}` : ''}`);
		}
	} finally {
		await client.close().catch(() => undefined);
	}
}

const keepFlag = cliFlags({
	keep: { type: 'boolean', description: 'Keep the data dir and its hub afterwards (to open the board)' },
});

export const demoCommand: Command = {
	name: 'demo',
	summary: 'Watch three simulated agents work a sample plan through MCP, with a crash and a recovery',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: keepFlag.options,
	notes: 'Uses a fresh temporary data dir unless --data-dir names an empty or new one.',
	async run(ctx) {
		let dataDir: string;
		let madeTemp = false;
		if (ctx.dataDir !== undefined) {
			dataDir = resolve(ctx.dataDir);
			mkdirSync(dataDir, { recursive: true });
			if (readdirSync(dataDir).length > 0) {
				throw new UsageError(`${dataDir} is not empty: the demo needs a fresh data dir.`);
			}
		} else {
			// Short path: the hub's Unix socket path must stay under 107 bytes.
			dataDir = mkdtempSync(join(tmpdir().length > 40 ? '/tmp' : tmpdir(), 'baton-demo-'));
			madeTemp = true;
		}
		const { keep } = keepFlag.read(ctx.values);
		const narrator = new Narrator(ctx);
		narrator.say('demo', `fresh data dir ${dataDir}; starting its hub`);
		const hub = await openHub({ dataDir, client: 'cli', agent: { id: 'demo', name: 'demo narrator', client: 'cli' } });
		let watchdog: NodeJS.Timeout | undefined;
		try {
			hub.onEvent((e: BacklogEvent) => {
				if (e.type === 'released' || e.type === 'reclaimed' || e.type === 'failed') {
					narrator.say(
						'hub',
						`${e.type} ${e.cardId}${e.data.reason === undefined ? '' : ` (${e.data.reason})`}; it is ready again`,
					);
				}
			});
			await hub.subscribe(hub.hello?.seq ?? 0);
			const created = await hub.request('card/create', { cards: demoPlan });
			narrator.say('demo', `created a ${created.cards.length}-card plan in 3 phases:`);
			for (const c of created.cards) {
				narrator.say(
					'',
					`  ${c.id.padEnd(12)} ${(c.phase ?? '').padEnd(6)} ${c.title}${c.dependsOn.length > 0 ? `  (after ${c.dependsOn.join(', ')})` : ''}`,
				);
			}
			const crash = { armed: true };
			const total = created.cards.length;
			const agents = Promise.all(agentNames.map(n => runAgent(n, dataDir, narrator, total, crash)));
			const timeout = new Promise<never>((_, reject) => {
				watchdog = setTimeout(
					() => reject(new Error(`the demo did not finish within ${demoTimeoutMs / 1000} s`)),
					demoTimeoutMs,
				);
			});
			await Promise.race([agents, timeout]);
			const stats = await hub.request('card/stats', {});
			const events = await hub.request('events/list', { afterSeq: 0, limit: 1000 });
			const count = (t: string): number => events.events.filter(e => e.type === t).length;
			narrator.say(
				'demo',
				`all ${stats.counts.done} of ${plural(stats.total, 'card')} done: ${plural(count('claimed'), 'claim')}, ${plural(count('heartbeat'), 'progress report')}, ${count('released')} released by the hub after the crash, ${plural(events.lastSeq, 'event')} logged`,
			);
			if (keep) {
				narrator.say('demo', `kept: BATON_DATA_DIR=${dataDir} node ${batonScript()} board`);
			} else {
				await hub.request('hub/stop', {});
			}
			return 0;
		} finally {
			clearTimeout(watchdog);
			hub.close();
			if (madeTemp && !keep) {
				// Give the stopping hub a moment to close PGlite before its files go.
				await sleep(500);
				rmSync(dataDir, { recursive: true, force: true });
			}
		}
	},
};
