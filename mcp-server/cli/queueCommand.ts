/**
 * `baton queue [--project ID]`: the landing queue as it stands across every hub on the store (the hub's
 * `landing/queue`): per project and base branch, the card landing now and those waiting their turn,
 * then the newest landings that came back and why (a conflict, a failing check on the merged tree, a
 * refusal). People get a table per line, scripts the hub's answer under --json. Must not: change the
 * queue (a landing joins it by approval or completion, and leaves it when it ends).
 */
import type { Result } from '../../core/protocol';
import { type Command, show } from './command';
import { cliFlags } from './flags';
import { ago, formatTable, truncate } from './output';

const queueFlags = cliFlags({
	project: { type: 'string', value: 'ID', description: 'Only this project’s lines (default: every project)' },
});

/** What a person reads: a table per line, then what came back; an empty queue says how cards join it. */
export function queueText(q: Result<'landing/queue'>, now: number = Date.now()): string {
	const parts: string[] = [];
	const lines = new Map<string, typeof q.entries>();
	for (const e of q.entries) {
		const key = `${e.base} of ${e.project}`;
		lines.set(key, [...(lines.get(key) ?? []), e]);
	}
	for (const [line, entries] of lines) {
		parts.push(
			`Landing on ${line}:\n${formatTable(
				['#', 'STATE', 'ID', 'TITLE', 'APPROVED BY', 'SINCE'],
				entries.map(e => [
					String(e.place),
					e.state,
					e.cardId,
					truncate(e.title, 40),
					e.actor,
					e.state === 'landing' ? `landing ${ago(e.startedAt ?? e.queuedAt, now)}` : `joined ${ago(e.queuedAt, now)}`,
				]),
			)}`,
		);
	}
	if (parts.length === 0) {
		parts.push(
			'Nothing is waiting to land. A card joins its base branch’s line when a person approves it (or, under review none, when its agent completes it); one landing at a time moves a base, across every hub.',
		);
	}
	if (q.returned.length > 0) {
		parts.push(
			`Came back from landing (newest first):\n${q.returned
				.map(
					r =>
						`  ${r.cardId}  ${truncate(r.title, 40)}  ${ago(r.at, now)}\n    ${truncate(r.reason, 300)}${r.files.length === 0 ? '' : `\n    files: ${truncate(r.files.join(', '), 200)}`}`,
				)
				.join('\n')}`,
		);
	}
	return parts.join('\n\n');
}

export const queueCommand: Command = {
	name: 'queue',
	summary: 'Show the landing queue: what lands now on each base, what waits its turn, what came back and why',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: queueFlags.options,
	notes:
		'Every landing that moves a base (approve, --all-passing, a completion under review none) waits its\n' +
		"turn in its base branch's line, held in the store so hubs on one PostgreSQL share it. A card that\n" +
		'came back is in ready with the reason as its hand-over; `baton show ID` has the rest.',
	async run(ctx) {
		const { project } = queueFlags.read(ctx.values);
		const hub = await ctx.hub();
		const q = await hub.request('landing/queue', project === undefined ? {} : { project });
		show(ctx, q, () => queueText(q));
		return 0;
	},
};
