/**
 * `card/diff`: the hub reads a card's branch against its base for a reviewer (the board, VS
 * Code, the CLI) through the workspaces layer (reviewDiff.ts), with the patch read as git writes it and
 * kept within diffLimits.fileBytes per file and diffLimits.patchBytes in all, so a huge file on an
 * agent's branch costs the hub no more than the cap; at most diffLimits.concurrent diffs run at once,
 * diffLimits.waiting more wait, and further ones are refused (unavailable) until the line moves. The
 * hub runs git only for workspaces its own machine made; a card without a workspace, one made on
 * another host, and one already landed get an error saying what to do instead.
 * Must not: change a ref, a worktree or the card (a read, not mutating).
 */
import { hostname } from 'node:os';
import type { Backlog, OpContext } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { type ParsedParams, type Result, diffLimits } from '../../core/protocol';
import { reviewDiff } from '../workspaces/reviewDiff';

export async function cardDiff(
	backlog: Backlog,
	ctx: OpContext,
	params: ParsedParams<'card/diff'>,
	host: string = hostname(),
): Promise<Result<'card/diff'>> {
	const { card } = await backlog.get(ctx, { cardId: params.cardId });
	const ws = card.workspace;
	if (ws === undefined) {
		throw new BatonError(
			'not_found',
			`Card ${card.id} has no workspace, so there is no branch to diff. Cards get one when they are claimed in a project with worktrees on (\`baton settings --worktrees on\`); for another card, read its result.`,
			{ cardId: card.id },
		);
	}
	if (ws.landed !== undefined) {
		throw new BatonError(
			'not_found',
			`Card ${card.id} was landed into ${ws.base} (${ws.landed.mode}, commit ${ws.landed.commit.slice(0, 12)}) and its branch deleted; \`git show ${ws.landed.commit.slice(0, 12)}\` in ${ws.root} shows what it changed.`,
			{ cardId: card.id, landed: ws.landed },
		);
	}
	if (ws.host !== host) {
		throw new BatonError(
			'unavailable',
			`The workspace of ${card.id} is on the machine ${ws.host}, and this hub (on ${host}) runs git only for its own. Review it on ${ws.host}, or turn --push on for the project so its branch ${ws.branch} reaches origin.`,
			{ cardId: card.id, host: ws.host },
		);
	}
	const one = params.paths?.length === 1;
	const d = await turns.run(card.id, () =>
		reviewDiff({
			repo: ws.root,
			branch: ws.branch,
			base: ws.base,
			...(params.paths === undefined ? {} : { paths: params.paths }),
			budget: { totalBytes: diffLimits.patchBytes, fileBytes: one ? diffLimits.patchBytes : diffLimits.fileBytes },
		}),
	);
	return {
		cardId: card.id,
		base: ws.base,
		branch: ws.branch,
		mergeBase: d.mergeBase,
		head: d.head,
		root: ws.root,
		path: ws.path,
		files: d.files.map(f => ({
			path: f.path,
			...(f.oldPath === undefined ? {} : { oldPath: f.oldPath }),
			status: f.status,
			insertions: f.insertions,
			deletions: f.deletions,
			...(f.cut === true ? { cut: true } : {}),
		})),
		patch: d.patch,
		truncated: d.truncated,
		patchBytes: d.patchBytes,
		complete: d.complete,
		...(d.truncated ? { show: `git -C ${shellWord(ws.root)} diff ${d.mergeBase} ${d.head}` } : {}),
	};
}

/** A path as one shell word (single-quoted when it needs it), for a command a person copies. */
function shellWord(text: string): string {
	return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A few diffs at a time: each one's git and its patch budget are the hub's memory, not the requests'. */
class Turns {
	private running = 0;
	private readonly queue: (() => void)[] = [];

	constructor(
		private readonly concurrent: number,
		private readonly waiting: number,
	) {}

	async run<T>(cardId: string, task: () => Promise<T>): Promise<T> {
		if (this.running >= this.concurrent) {
			if (this.queue.length >= this.waiting) {
				throw new BatonError(
					'unavailable',
					`The hub is computing ${this.running} diffs and ${this.queue.length} more wait their turn, so the diff of ${cardId} was not started; ask again in a few seconds.`,
					{ cardId, running: this.running, waiting: this.queue.length },
				);
			}
			await new Promise<void>(resolve => this.queue.push(resolve));
		} else {
			this.running++;
		}
		try {
			return await task();
		} finally {
			const next = this.queue.shift();
			if (next === undefined) {
				this.running--;
			} else {
				next();
			}
		}
	}
}

const turns = new Turns(diffLimits.concurrent, diffLimits.waiting);
