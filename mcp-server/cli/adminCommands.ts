/**
 * CLI subcommands about the backlog as a whole and the hub: stats, events, agents, export, import,
 * backup, hub status, hub stop, board. Export/import use core/exportFormat.ts, the same JSONL the
 * hub's rolling backups use, so an export restores losslessly into a fresh data dir.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

import { BatonError } from '../../core/errors';
import { collectExport, formatExport, importBatches, parseExport, writeExportFile } from '../../core/exportFormat';
import type { BacklogEvent } from '../../core/protocol';
import { type Command, type CommandContext, flag, intOpt, stringOpt } from './command';
import { UsageError, agentTable, eventLine, eventTable, formatTable, printJson } from './output';

function show(ctx: CommandContext, json: unknown, human: () => string): void {
	if (ctx.json) {
		printJson(ctx.output, json);
	} else {
		ctx.output.out(human());
	}
}

const stats: Command = {
	name: 'stats',
	summary: 'Counts by status, claimable and waiting cards, agent health',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {},
	async run(ctx) {
		const hub = await ctx.hub();
		const s = await hub.request('card/stats', {});
		show(ctx, s, () =>
			formatTable(
				['', ''],
				[
					['total', String(s.total)],
					['ready', `${s.counts.ready} (claimable ${s.claimable}, waiting ${s.waiting}, deferred ${s.deferred})`],
					['claimed', `${s.counts.claimed}${s.stalledClaims > 0 ? ` (${s.stalledClaims} stalled)` : ''}`],
					['blocked', String(s.counts.blocked)],
					['done', String(s.counts.done)],
					['oldest ready', s.oldestReadyAgeSeconds === null ? '-' : `${Math.round(s.oldestReadyAgeSeconds)} s`],
					[
						'agents',
						`${s.agents.healthy} healthy, ${s.agents.late} late, ${s.agents.stale} stale, ${s.agents.dead} dead`,
					],
					['last seq', String(s.lastSeq)],
				],
			)
				.split('\n')
				.slice(1)
				.join('\n'),
		);
		return 0;
	},
};

const events: Command = {
	name: 'events',
	summary: 'The audit log: every change, in order; --follow to keep watching',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {
		after: { type: 'string', value: 'SEQ', description: 'Only events after this seq' },
		card: { type: 'string', value: 'ID', description: 'Only events of this card' },
		limit: { type: 'string', value: 'N', description: 'At most this many (default 50 newest with no --after)' },
		follow: {
			type: 'boolean',
			short: 'f',
			description: 'Keep printing new events until Ctrl-C (JSON lines with --json)',
		},
	},
	async run(ctx) {
		const hub = await ctx.hub();
		const cardId = stringOpt(ctx, 'card');
		const limit = intOpt(ctx, 'limit');
		let after = intOpt(ctx, 'after');
		if (after === undefined && !flag(ctx, 'follow')) {
			// Without --after, show the newest page rather than the oldest.
			const { lastSeq } = await hub.request('events/list', { limit: 1 });
			after = Math.max(0, lastSeq - (limit ?? 50));
		}
		if (flag(ctx, 'follow')) {
			const print = (e: BacklogEvent): void => {
				if (cardId === undefined || e.cardId === cardId) {
					ctx.output.out(ctx.json ? JSON.stringify(e) : eventLine(e));
				}
			};
			hub.onEvent(print);
			await hub.subscribe(after ?? hub.hello?.seq ?? 0);
			await ctx.interrupted();
			return 0;
		}
		const r = await hub.request('events/list', {
			...(after === undefined ? {} : { afterSeq: after }),
			...(cardId === undefined ? {} : { cardId }),
			...(limit === undefined ? {} : { limit }),
		});
		show(ctx, r, () => eventTable(r.events));
		return 0;
	},
};

const agents: Command = {
	name: 'agents',
	summary: 'Agents known to the hub, their health and the cards they hold',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {},
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('agent/list', {});
		show(ctx, r, () => agentTable(r.agents));
		return 0;
	},
};

const exportCommand: Command = {
	name: 'export',
	summary: 'Write every card as JSONL (header line + one card per line); to stdout unless --out',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {
		out: { type: 'string', short: 'o', value: 'PATH', description: 'Write to this file (gzip if it ends in .gz)' },
	},
	async run(ctx) {
		const hub = await ctx.hub();
		const cards = await collectExport(cursor => hub.request('data/export', cursor === undefined ? {} : { cursor }));
		const out = stringOpt(ctx, 'out');
		if (out === undefined) {
			// The export itself is the machine output, with or without --json.
			process.stdout.write(formatExport(cards));
			return 0;
		}
		const bytes = writeExportFile(out, cards);
		show(
			ctx,
			{ path: out, cards: cards.length, bytes },
			() => `Exported ${cards.length} cards to ${out} (${bytes} bytes).`,
		);
		return 0;
	},
};

const importCommand: Command = {
	name: 'import',
	summary: 'Load cards from a JSONL export (cards whose id exists are skipped)',
	args: 'FILE',
	minArgs: 1,
	maxArgs: 1,
	options: {},
	notes: 'FILE may be "-" for stdin, and may be gzip-compressed.',
	async run(ctx) {
		const file = ctx.positionals[0] ?? '-';
		let data: Buffer;
		try {
			data = readFileSync(file === '-' ? 0 : file);
		} catch (e) {
			throw new UsageError(`Cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}.`);
		}
		const { cards } = parseExport(data);
		const hub = await ctx.hub();
		let imported = 0;
		let skipped = 0;
		for (const batch of importBatches(cards)) {
			const r = await hub.request('data/import', { cards: batch });
			imported += r.imported;
			skipped += r.skipped;
		}
		show(ctx, { imported, skipped }, () => `Imported ${imported} cards, skipped ${skipped} already present.`);
		return 0;
	},
};

const backup: Command = {
	name: 'backup',
	summary: 'Write a backup of every card into the data dir now',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {},
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('hub/backup', {});
		show(ctx, r, () => `Backed up ${r.cards} cards to ${r.path} (${r.bytes} bytes).`);
		return 0;
	},
};

const hubStatus: Command = {
	name: 'hub status',
	summary: "The running hub's pid, store, clients and ports (does not start one)",
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {},
	async run(ctx) {
		const hub = await ctx.hub({ spawn: false });
		const s = await hub.request('hub/status', {});
		show(ctx, s, () =>
			formatTable(
				['', ''],
				[
					['pid', String(s.pid)],
					['version', `${s.version} (protocol ${s.protocol})`],
					['store', s.mode],
					['data dir', s.dataDir],
					['started', s.startedAt],
					['clients', String(s.clients)],
					['port', s.port === null ? '-' : `127.0.0.1:${s.port}`],
					['last seq', String(s.lastSeq)],
				],
			)
				.split('\n')
				.slice(1)
				.concat((s.notices ?? []).map(n => `notice: ${n}`))
				.join('\n'),
		);
		return 0;
	},
};

const hubStop: Command = {
	name: 'hub stop',
	summary: 'Stop the hub cleanly (clients start a new one when needed)',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {},
	async run(ctx) {
		let hub;
		try {
			hub = await ctx.hub({ spawn: false });
		} catch (e) {
			if (BatonError.is(e, 'unavailable')) {
				show(ctx, { ok: true, running: false }, () => 'No Baton hub is running for this data dir.');
				return 0;
			}
			throw e;
		}
		const r = await hub.request('hub/stop', {});
		show(ctx, { ...r, running: true }, () => 'The Baton hub is stopping.');
		return 0;
	},
};

/** Opens a URL in the desktop's browser; failure (no display, no opener) is reported, not fatal. */
function openInBrowser(url: string, output: CommandContext['output']): void {
	const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
	try {
		const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
		child.on('error', () => output.err(`Could not run ${opener}; open the URL above yourself.`));
		child.unref();
	} catch {
		output.err(`Could not run ${opener}; open the URL above yourself.`);
	}
}

const board: Command = {
	name: 'board',
	summary: 'Print a one-time link to the browser board and open it',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: { 'no-open': { type: 'boolean', description: 'Only print the link' } },
	notes: 'The link carries a ticket valid for 60 s and one use; the token never appears in it.',
	async run(ctx) {
		const hub = await ctx.hub();
		const { url } = await hub.request('hub/boardTicket', {});
		show(ctx, { url }, () => url);
		if (!flag(ctx, 'no-open')) {
			openInBrowser(url, ctx.output);
		}
		return 0;
	},
};

export const adminCommands: readonly Command[] = [
	stats,
	events,
	agents,
	exportCommand,
	importCommand,
	backup,
	hubStatus,
	hubStop,
	board,
];
