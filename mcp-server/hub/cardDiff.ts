/**
 * `card/diff` (issue 33): the hub reads a card's branch against its base for a reviewer (the board, VS
 * Code, the CLI) through the workspaces layer (reviewDiff.ts), with the patch cut at
 * diffLimits.patchBytes. The hub runs git only for workspaces its own machine made; a card without a
 * workspace, one made on another host, and one already landed get an error saying what to do instead.
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
	const d = await reviewDiff({
		repo: ws.root,
		branch: ws.branch,
		base: ws.base,
		...(params.paths === undefined ? {} : { paths: params.paths }),
		maxBytes: diffLimits.patchBytes,
	});
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
		})),
		patch: d.patch,
		truncated: d.truncated,
		patchBytes: d.patchBytes,
	};
}
