/**
 * CLI subcommands with which a human steers agents' work: comment (a message, or with
 * --question a question, to whoever holds the card), approve and reject (the review gate). Each is
 * one hub request whose flags are bound to its params schema (flags.ts); approve, which also takes
 * several cards, is approveCommand.ts. The CLI is a human's face:
 * the hub lets it approve any card in review except work it completed itself — but not from inside a
 * coding agent's process (insideAgent.ts): approvals come from a person.
 */
import { BatonError, describeIssues } from '../../core/errors';
import { CommentParams, type Result, ReviewParams } from '../../core/protocol';
import { statusLine } from './cardChange';
import { type Command, type CommandContext, arg, show } from './command';
import { paramFlags } from './flags';
import { approveCommand } from './approveCommand';
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

const rejectFlags = paramFlags(ReviewParams.pick({ note: true, version: true }).required({ note: true }), {
	note: { value: 'TEXT', description: 'What to change; the next attempt starts from it' },
	version: { value: 'N' },
});

/** Refuses before any hub is reached when this process runs inside a coding agent (exit 1). */
function refuseInsideAgent(ctx: CommandContext, verb: 'reject'): void {
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

export const steeringCommands: readonly Command[] = [comment, approveCommand, reject];
