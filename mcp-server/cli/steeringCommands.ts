/**
 * CLI subcommands with which a human steers agents' work (issue 12): comment (a message, or with
 * --question a question, to whoever holds the card), approve and reject (the review gate). Each is
 * one hub request whose flags are bound to its params schema (flags.ts). The CLI is a human's face:
 * the hub lets it approve any card in review except work it completed itself — but not from inside a
 * coding agent's process (insideAgent.ts, issue 27 §5): approvals come from a person.
 */
import { BatonError, describeIssues } from '../../core/errors';
import { CommentParams, type Result, ReviewParams } from '../../core/protocol';
import { statusLine } from './cardChange';
import { type Command, type CommandContext, arg, show } from './command';
import { paramFlags } from './flags';
import { approvalRefusal } from './insideAgent';

const commentFlags = paramFlags(CommentParams, { question: { description: 'Ask a human for an answer' } });

const comment: Command = {
	name: 'comment',
	summary: 'Post a message on a card (markdown, at most 4 KiB); its holder reads it on its next call',
	args: 'ID TEXT',
	minArgs: 2,
	maxArgs: 2,
	options: commentFlags.options,
	async run(ctx) {
		const p = commentFlags.read(ctx.values);
		const text = arg(ctx, 1);
		// Checked like the flags, before a hub is started: the hub would refuse it in the same words.
		const parsed = CommentParams.shape.text.safeParse(text);
		if (!parsed.success) {
			throw new BatonError('invalid_input', `TEXT: ${describeIssues(parsed.error.issues)}.`, { field: 'text' });
		}
		const r = await (await ctx.hub()).request('card/comment', { cardId: arg(ctx, 0), text, ...p });
		// Two sentences: the message, then the card as it stands ("WEB-4 is claimed by …"), which the
		// holder reads the message in.
		show(
			ctx,
			r,
			() => `${r.message.question ? 'Asked' : 'Posted'} message ${r.message.id} on ${r.card.id}. ${statusLine(r.card)}`,
		);
		return 0;
	},
};

const approveFlags = paramFlags(ReviewParams.pick({ note: true, version: true }), {
	note: { value: 'TEXT', description: 'A remark on the approval, kept in the log' },
	version: { value: 'N' },
});
const rejectFlags = paramFlags(ReviewParams.pick({ note: true, version: true }).required({ note: true }), {
	note: { value: 'TEXT', description: 'What to change; the next attempt starts from it' },
	version: { value: 'N' },
});

/** Refuses before any hub is reached when this process runs inside a coding agent (exit 1). */
function refuseInsideAgent(ctx: CommandContext, verb: 'approve' | 'reject'): void {
	const why = ctx.insideAgent();
	if (why !== undefined) {
		throw new BatonError('invalid_input', approvalRefusal(verb, arg(ctx, 0), why), { insideAgent: why });
	}
}

function reviewed(ctx: CommandContext, r: Result<'card/review'>): void {
	show(ctx, r, () => {
		const freed = r.unblocked.length === 0 ? '' : `\nNow claimable: ${r.unblocked.join(', ')}`;
		const ws = r.card.workspace;
		const landed =
			ws?.landed === undefined
				? ''
				: `\nLanded ${ws.branch} on ${ws.base} (${ws.landed.mode}) as ${ws.landed.commit.slice(0, 12)}.`;
		return `${statusLine(r.card)}${landed}${freed}`;
	});
}

const approve: Command = {
	name: 'approve',
	summary: "Approve a card in review: its branch lands (the project's land mode), it is done, its dependents may start",
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: approveFlags.options,
	notes:
		'With --version, a card that changed since you looked at it is refused. A card with a workspace lands\n' +
		'its branch first: a checkout of the base with changes to the landed files refuses the approval (exit 1),\n' +
		'and a conflict sends the card back to ready with the conflict as its hand-over (exit 1).',
	async run(ctx) {
		const p = approveFlags.read(ctx.values);
		refuseInsideAgent(ctx, 'approve');
		// An approval may land the card's branch first (issue 33): git gets two minutes, not the usual 15 s.
		const hub = await ctx.hub();
		reviewed(
			ctx,
			await hub.request('card/review', { cardId: arg(ctx, 0), approve: true, ...p }, { timeoutMs: 120_000 }),
		);
		return 0;
	},
};

const reject: Command = {
	name: 'reject',
	summary: 'Request changes on a card in review: back to ready, the note handed to the next attempt',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: rejectFlags.options,
	notes: 'Counts as a failed attempt: past its maxAttempts the card parks in blocked with the note.',
	async run(ctx) {
		const p = rejectFlags.read(ctx.values);
		refuseInsideAgent(ctx, 'reject');
		reviewed(ctx, await (await ctx.hub()).request('card/review', { cardId: arg(ctx, 0), approve: false, ...p }));
		return 0;
	},
};

export const steeringCommands: readonly Command[] = [comment, approve, reject];
