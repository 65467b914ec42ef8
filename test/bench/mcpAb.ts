/**
 * A/B of `baton mcp` + hub between two builds: MCP `create` of one card, `list` of a page of
 * 50 and a claim+complete pair, wall p50 through the real SDK client, CPU per call of the `baton mcp`
 * process and of the hub from /proc, and `baton mcp` resident memory (after start, after the calls). Each build gets its own hub and
 * data dir; the calls alternate A, B, A, B … one by one, so a busy machine slows both alike.
 * Standalone: `npm run build && node --import tsx test/bench/mcpAb.ts --base /tmp/base/dist/baton.js
 * [--rounds N] [--calls N]`; without --base it compares this build with itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

import { batonJs, cpuMsOf, type HubHandle, rssOf, startHub } from './hubProcess';
import { batonSession, call, type Session } from './mcpSession';
import { median, percentile, round } from './report';

function arg(name: string): string | undefined {
	const i = process.argv.indexOf(name);
	return i > 0 ? process.argv[i + 1] : undefined;
}

const base = arg('--base') ?? batonJs;
const rounds = Number(arg('--rounds') ?? 3);
const calls = Number(arg('--calls') ?? 200);
const mcpNodeArgs = (arg('--mcp-node-args') ?? '').split(' ').filter(a => a !== '');

interface Side {
	name: string;
	script: string;
	hub: HubHandle;
	session: Session;
	ms: Map<string, number[]>;
	cpu: Map<string, { mcp: number; hub: number; n: number }>;
	rssStart: number;
}

async function open(name: string, script: string, temp: string): Promise<Side> {
	const dataDir = join(temp, name);
	const hub = await startHub(dataDir, 60_000, {}, script);
	const session = await batonSession(dataDir, `ab-${name}`, script, mcpNodeArgs);
	await call(session, 'stats', {});
	await new Promise(r => setTimeout(r, 500));
	return { name, script, hub, session, ms: new Map(), cpu: new Map(), rssStart: rssOf(session.pid!).currentMb };
}

/** A claim and the complete of what it took: one "call" of the claim+complete phase. */
async function pair(session: Session): Promise<void> {
	const claimed = await call(session, 'claim', {});
	const lease = claimed.lease as { cardId: string } | null;
	if (lease === null) {
		throw new Error(`nothing to claim: ${JSON.stringify(claimed)}`);
	}
	await call(session, 'complete', { cardId: lease.cardId });
}

async function phase(
	sides: Side[],
	label: string,
	n: number,
	args: (i: number) => Record<string, unknown>,
	tool: string,
): Promise<void> {
	const start = sides.map(s => ({ mcp: cpuMsOf(s.session.pid!), hub: cpuMsOf(s.hub.pid) }));
	for (let i = 0; i < n; i++) {
		for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
			const t = performance.now();
			await (tool === 'pair' ? pair(s.session) : call(s.session, tool, args(i)));
			const ms = performance.now() - t;
			const list = s.ms.get(label) ?? [];
			list.push(ms);
			s.ms.set(label, list);
		}
	}
	sides.forEach((s, k) => {
		const c = s.cpu.get(label) ?? { mcp: 0, hub: 0, n: 0 };
		c.mcp += cpuMsOf(s.session.pid!) - start[k]!.mcp;
		c.hub += cpuMsOf(s.hub.pid) - start[k]!.hub;
		c.n += n;
		s.cpu.set(label, c);
	});
}

async function main(): Promise<void> {
	const temp = mkdtempSync('/tmp/bt-ab-');
	const sides: Side[] = [];
	try {
		sides.push(await open('A', base, temp));
		sides.push(await open('B', batonJs, temp));
		const load = [loadavg()[0]!];
		// Warm-up: 60 cards each, then the measured rounds.
		await phase(sides, 'warm', 60, i => ({ title: `Warm ${i}`, body: 'Side-by-side bench' }), 'create');
		for (const s of sides) {
			s.ms.clear();
			s.cpu.clear();
		}
		for (let r = 0; r < rounds; r++) {
			await phase(
				sides,
				'create',
				calls,
				i => ({ title: `Compare task ${r}.${i}`, body: 'Side-by-side bench' }),
				'create',
			);
			await phase(sides, 'list50', calls, () => ({ limit: 50 }), 'list');
			await phase(sides, 'pair', calls / 2, () => ({}), 'pair');
			load.push(loadavg()[0]!);
		}
		console.log(
			`A = ${base}\nB = ${batonJs}\n${rounds} rounds × ${calls} calls; load ${load.map(l => l.toFixed(1)).join(' ')}`,
		);
		for (const label of ['create', 'list50', 'pair']) {
			for (const s of sides) {
				const ms = s.ms.get(label)!;
				const c = s.cpu.get(label)!;
				console.log(
					`${s.name} ${label.padEnd(7)} p50 ${round(median(ms))} ms  p90 ${round(percentile(ms, 90))} ms  ` +
						`mcp CPU ${round(c.mcp / c.n)} ms/call  hub CPU ${round(c.hub / c.n)} ms/call`,
				);
			}
		}
		for (const s of sides) {
			const rss = rssOf(s.session.pid!);
			console.log(
				`${s.name} baton mcp RSS: after start ${round(s.rssStart)} MB, after the calls ${round(rss.currentMb)} MB, peak ${round(rss.peakMb)} MB`,
			);
		}
	} finally {
		for (const s of sides) {
			await s.session.close();
			await s.hub.stop();
		}
		rmSync(temp, { recursive: true, force: true });
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
