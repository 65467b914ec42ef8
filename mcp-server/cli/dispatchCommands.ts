/**
 * CLI subcommands of dispatch's line control: `pause` (a scope of the line: everything, a project, a
 * phase, a card or an agent kind; `--list` shows the pauses), `resume` (clears one, or `--all`), and
 * `assign` (who may claim a card: an agent id or `kind:K`; `--clear`). Each is one hub request; bad
 * input is one clear error before anything is sent, and the hub refuses what does not exist.
 * Must not: stop agents itself (the supervisor reads the pause and stops its agents with --stop).
 */
import { BatonError } from '../../core/errors';
import { Assignee, type Pause, type PauseScope } from '../../core/protocol';
import { type Command, type CommandContext, arg, show } from './command';
import { cliFlags } from './flags';
import { UsageError } from './output';

const scopeFlags = cliFlags({
	all: { type: 'boolean', description: 'Everything (resume --all: clear every pause)' },
	project: { type: 'string', value: 'ID', description: 'One project' },
	phase: { type: 'string', value: 'NAME', description: 'One phase' },
	card: { type: 'string', value: 'ID', description: 'One card' },
	kind: { type: 'string', value: 'KIND', description: 'One agent kind (claude, codex, gemini, …)' },
});

/** The one scope the flags name; a usage error when none or several are given. */
function readScope(ctx: CommandContext, verb: string): { scope: PauseScope; target?: string } {
	const f = scopeFlags.read(ctx.values);
	const given: { scope: PauseScope; target?: string }[] = [
		...(f.all ? [{ scope: 'all' as const }] : []),
		...(f.project === undefined ? [] : [{ scope: 'project' as const, target: f.project }]),
		...(f.phase === undefined ? [] : [{ scope: 'phase' as const, target: f.phase }]),
		...(f.card === undefined ? [] : [{ scope: 'card' as const, target: f.card }]),
		...(f.kind === undefined ? [] : [{ scope: 'kind' as const, target: f.kind }]),
	];
	const [one] = given;
	if (one === undefined || given.length > 1) {
		throw new UsageError(`${verb} takes exactly one of --all, --project, --phase, --card or --kind.`);
	}
	return one;
}

function what(p: Pick<Pause, 'scope' | 'target'>): string {
	return p.scope === 'all' ? 'everything' : `${p.scope} ${p.target ?? ''}`;
}

function pauseLine(p: Pause): string {
	const reason = p.reason === null || p.reason === '' ? '' : `: ${p.reason}`;
	return `${what(p)} paused by ${p.by} at ${p.at}${reason}${p.stop ? ' (agents stopped)' : ''}`;
}

const pauseFlags = cliFlags({
	reason: { type: 'string', value: 'TEXT', description: 'Why (shown in every refused claim)' },
	stop: {
		type: 'boolean',
		description: 'Stop the dispatched agents holding its cards now (their work is snapshotted); default: they finish',
	},
	list: { type: 'boolean', description: 'Show the pauses' },
});

const pause: Command = {
	name: 'pause',
	summary: 'Pause the line: no claim of the cards it covers is granted until resume',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: { ...scopeFlags.options, ...pauseFlags.options },
	notes:
		'Once pause returns, no claim of a paused card is granted to anyone (dispatched or not), on any hub;\n' +
		'a refused claim says "paused by <who>: <reason>". Agents already holding cards finish them (drain)\n' +
		'unless --stop. --kind pauses the agents of one kind rather than cards.',
	async run(ctx) {
		const { reason, stop, list } = pauseFlags.read(ctx.values);
		const hub = await ctx.hub();
		if (list) {
			const r = await hub.request('pause/list', {});
			show(ctx, r, () => (r.pauses.length === 0 ? 'Nothing is paused.' : r.pauses.map(pauseLine).join('\n')));
			return 0;
		}
		const scope = readScope(ctx, 'pause');
		const r = await hub.request('pause/set', {
			...scope,
			...(reason === undefined ? {} : { reason }),
			...(stop ? { stop: true } : {}),
		});
		show(ctx, r, () => {
			const held =
				r.cards.length === 0
					? 'No dispatched agent holds its cards.'
					: `Dispatched agents hold ${r.cards.join(', ')}: ${stop ? 'they are being stopped, their cards released.' : 'they finish them (pause --stop stops them now).'}`;
			return `Paused ${what(r.pause)}. ${held}\nbaton resume ${scopeWords(r.pause)} lets claims through again.`;
		});
		return 0;
	},
};

function scopeWords(p: Pick<Pause, 'scope' | 'target'>): string {
	return p.scope === 'all' ? '--all' : `--${p.scope} ${p.target ?? ''}`;
}

const resume: Command = {
	name: 'resume',
	summary: 'Clear a pause (--all: every pause)',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: scopeFlags.options,
	async run(ctx) {
		const scope = readScope(ctx, 'resume');
		const hub = await ctx.hub();
		const r = await hub.request('pause/clear', scope.scope === 'all' ? { all: true } : scope);
		show(ctx, r, () =>
			r.cleared.length === 0
				? `${what({ scope: scope.scope, target: scope.target ?? null })} was not paused; nothing changed.`
				: `Resumed ${r.cleared.map(what).join(', ')}.`,
		);
		return 0;
	},
};

const assignFlags = cliFlags({ clear: { type: 'boolean', description: 'Anyone may claim it again' } });

const assign: Command = {
	name: 'assign',
	summary: 'Let only one agent (or kind:K, any agent of that kind) claim a card',
	args: 'ID [AGENT|kind:K]',
	minArgs: 1,
	maxArgs: 2,
	options: assignFlags.options,
	async run(ctx) {
		const { clear } = assignFlags.read(ctx.values);
		const cardId = arg(ctx, 0);
		const given = ctx.positionals[1];
		if (clear === (given !== undefined)) {
			throw new UsageError('assign takes an agent id or kind:K, or --clear.');
		}
		if (given !== undefined && !Assignee.safeParse(given).success) {
			throw new BatonError(
				'invalid_input',
				`"${given}" is not an agent id or kind: agent ids have no spaces, and kind:K names a lowercase kind such as kind:claude.`,
			);
		}
		const r = await (await ctx.hub()).request('card/assign', { cardId, assignee: given ?? null });
		show(ctx, r, () =>
			r.card.assignee === null || r.card.assignee === undefined
				? `${r.card.id} may be claimed by anyone.`
				: `${r.card.id} may be claimed only by ${r.card.assignee}.`,
		);
		return 0;
	},
};

export const dispatchCommands: readonly Command[] = [pause, resume, assign];
