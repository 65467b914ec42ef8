/**
 * CLI subcommands about the backlog as a whole and the hub: stats, events, agents, hub status, hub
 * stop, board. Moving data in and out (export, import, backup, restore) is dataCommands.ts.
 */
import { spawn } from 'node:child_process';

import { BatonError } from '../../core/errors';
import { hubPaths, resolveDataDir } from '../../core/paths';
import { AgentListParams, type BacklogEvent, EventsListParams, StatsParams, type UsageSum } from '../../core/protocol';
import { dollars, usageText } from '../../core/rules/usage';
import { type Command, type CommandContext, show } from './command';
import { cliFlags, paramFlags } from './flags';
import { forceStopHub } from './hubStop';
import { anyProject, chosenProject, noProjectFlag } from './project';
import { otherProjectsNote, projectParams, projectWords } from './projectNote';
import { agentTable, eventLine, eventTable, formatTable } from './output';

const statsFlags = paramFlags(StatsParams, {
	project: {
		value: 'ID',
		description: 'This project\'s cards and cards with none; "*": every project (default: this folder\'s)',
	},
});

/** The attempts' reported usage; with an unknown cost, the dollars that were reported. */
function statsUsage(total: UsageSum | undefined): string {
	if (total === undefined || (total.inputTokens === 0 && total.outputTokens === 0 && total.costUsd === 0)) {
		return 'none reported';
	}
	const known = total.costUsd === null && total.knownCostUsd > 0 ? ` (${dollars(total.knownCostUsd)} reported)` : '';
	return `${usageText(total)}${known}`;
}

const stats: Command = {
	name: 'stats',
	summary: 'Counts by status, claimable and waiting cards, agent health',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: { ...statsFlags.options, ...noProjectFlag.options },
	async run(ctx) {
		const { project: flag } = statsFlags.read(ctx.values);
		// Counted as list shows and claim takes them (projectNote.ts): the folder's project and cards with none.
		const project = await chosenProject(flag, noProjectFlag.read(ctx.values).noProject, ctx.workingProject);
		const hub = await ctx.hub();
		const s = await hub.request('card/stats', projectParams(project));
		const note = ctx.json ? undefined : await otherProjectsNote(hub, project, s, 'counted');
		// The words of list's STATUS column (core/rules/claimGuards.ts): ready = claimable now, then waiting,
		// deferred, paused; each ready card counted once, so the four add up to the ready cards list shows.
		show(ctx, s, () =>
			[
				...(project === anyProject ? [] : [`Counting ${projectWords(project)}.`]),
				formatTable(
					['', ''],
					[
						['total', String(s.total)],
						[
							'ready',
							`${s.claimable} claimable now (of ${s.counts.ready}: ${s.waiting} waiting, ${s.deferred} deferred, ${s.paused} paused)`,
						],
						['claimed', `${s.counts.claimed}${s.stalledClaims > 0 ? ` (${s.stalledClaims} stalled)` : ''}`],
						['in review', String(s.counts.review)],
						['needs input', String(s.needsInput)],
						['blocked', String(s.counts.blocked)],
						['done', String(s.counts.done)],
						['oldest ready', s.oldestReadyAgeSeconds === null ? '-' : `${Math.round(s.oldestReadyAgeSeconds)} s`],
						[
							'agents',
							`${s.agents.healthy} healthy, ${s.agents.late} late, ${s.agents.stale} stale, ${s.agents.dead} dead`,
						],
						['usage', statsUsage(s.usage?.total)],
						['last seq', String(s.lastSeq)],
					],
				)
					.split('\n')
					.slice(1)
					.join('\n'),
				...(note === undefined ? [] : [note]),
			].join('\n'),
		);
		return 0;
	},
};

const eventsFlags = paramFlags(EventsListParams, {
	afterSeq: { flag: 'after', value: 'SEQ' },
	cardId: { flag: 'card', value: 'ID' },
	limit: { description: 'At most this many (default 50 newest with no --after)' },
});
const followFlag = cliFlags({
	follow: {
		type: 'boolean',
		short: 'f',
		description: 'Keep printing new events until Ctrl-C (JSON lines with --json)',
	},
});

const events: Command = {
	name: 'events',
	summary: 'The audit log: every change, in order; --follow to keep watching',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: { ...eventsFlags.options, ...followFlag.options },
	async run(ctx) {
		const { afterSeq, cardId, limit } = eventsFlags.read(ctx.values);
		const { follow } = followFlag.read(ctx.values);
		const hub = await ctx.hub();
		let after = afterSeq;
		if (after === undefined && !follow) {
			// Without --after, show the newest page rather than the oldest.
			const { lastSeq } = await hub.request('events/list', { limit: 1 });
			after = Math.max(0, lastSeq - (limit ?? 50));
		}
		if (follow) {
			const print = (e: BacklogEvent): void => {
				if (cardId === undefined || e.cardId === cardId) {
					ctx.output.out(ctx.json ? JSON.stringify(e) : eventLine(e));
				}
			};
			hub.onEvent(print);
			hub.onResync(seq =>
				ctx.output.err(
					`Progress events before seq ${seq} were compacted away (the log keeps every state change, not every heartbeat); following from seq ${seq}.`,
				),
			);
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

const agentFlags = paramFlags(AgentListParams, {
	all: { description: 'Also agents whose sessions ended and hold nothing (kept for the agentRetentionDays setting)' },
});

const agents: Command = {
	name: 'agents',
	summary: 'Agents known to the hub, their health and the cards they hold',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: agentFlags.options,
	notes:
		'An agent whose last connection closed leaves this list unless it still holds cards; --all shows it\n' +
		'until the agentRetentionDays setting forgets it (baton settings --agent-days).',
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('agent/list', agentFlags.read(ctx.values));
		show(ctx, r, () => agentTable(r.agents));
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
					[
						'store',
						`${s.mode}, ${s.store === undefined || s.store.state === 'ok' ? 'takes writes' : s.store.state.replace('_', ' ')}`,
					],
					['data dir', s.dataDir],
					['started', s.startedAt],
					['clients', String(s.clients)],
					['port', s.port === null ? '-' : `127.0.0.1:${s.port}`],
					['last seq', String(s.lastSeq)],
					...(s.metrics === undefined
						? []
						: [['metrics', `${s.metrics.url ?? '-'} (scrape token: ${s.metrics.tokenFile})`]]),
				],
			)
				.split('\n')
				.slice(1)
				.concat((s.notices ?? []).map(n => `notice: ${n}`))
				.concat(s.store?.message === undefined ? [] : [`store: ${s.store.message}`])
				.join('\n'),
		);
		return 0;
	},
};

const forceFlag = cliFlags({
	force: {
		type: 'boolean',
		description: 'End a hub that does not answer: SIGTERM, then SIGKILL after 3 s (nothing acknowledged is lost)',
	},
});

const hubStop: Command = {
	name: 'hub stop',
	summary: 'Stop the hub cleanly (clients start a new one when needed)',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: forceFlag.options,
	async run(ctx) {
		if (forceFlag.read(ctx.values).force) {
			const r = await forceStopHub(hubPaths(ctx.dataDir ?? resolveDataDir()));
			show(ctx, { ok: true, running: r.how !== 'not running', ...r }, () =>
				r.how === 'not running'
					? 'No Baton hub is running for this data dir.'
					: `Ended the Baton hub (pid ${r.pid}) with ${r.how}; the next command starts a fresh one.`,
			);
			return 0;
		}
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

const noOpenFlag = cliFlags({ noOpen: { type: 'boolean', description: 'Only print the link' } });

const board: Command = {
	name: 'board',
	summary: 'Print a one-time link to the browser board and open it',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: noOpenFlag.options,
	notes: 'The link carries a ticket valid for 60 s and one use; the token never appears in it.',
	async run(ctx) {
		const hub = await ctx.hub();
		const { url } = await hub.request('hub/boardTicket', {});
		show(ctx, { url }, () => url);
		if (!noOpenFlag.read(ctx.values).noOpen) {
			openInBrowser(url, ctx.output);
		}
		return 0;
	},
};

export const adminCommands: readonly Command[] = [stats, events, agents, hubStatus, hubStop, board];
