/**
 * `baton commit-guard ID`, run by the pre-commit hook of card ID's worktree
 * (workspaces/commitGuard.ts installs it): reads the paths the commit changes (the index git is about
 * to commit, GIT_INDEX_FILE included; for a merge only the paths that differ from both parents), asks
 * the local hub for the live claims of the card's project and refuses the commit (exit 1) when a path
 * is covered by another claim's scope, naming the path, the holder's glob and the holder. Matching is
 * core/scope's ScopeIndex over each claim's live scope (liveScope). When the hub does not answer
 * (stopped, busy past the time limit), it says so and lets the commit through: the guard is a safety
 * net under the claim's own scope check, not the authority (docs/guide.md, Workspaces).
 * Must not: start a hub, change anything, or match globs itself.
 */
import path from 'node:path';

import { BatonError } from '../../core/errors';
import { errorText } from '../../core/log';
import { plural } from '../../core/plural';
import { type Card, limits } from '../../core/protocol';
import { liveScope } from '../../core/scope/conflicts';
import { ScopeIndex } from '../../core/scope/match';
import { git, splitNul } from '../workspaces/git';
import { type Command, type CommandContext, arg } from './command';
import { printJson } from './output';

/** How long the guard waits for the hub before letting the commit through. */
const hubTimeoutMs = 15_000;

/** One held glob: whose, and the entry as the holder's card has it. */
interface HeldGlob {
	cardId: string;
	holder: string;
	glob: string;
}

export interface GuardConflict extends HeldGlob {
	path: string;
}

/** The paths the commit being made changes, relative to the worktree's top, as git names them. */
export async function committedPaths(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
	// git commit -a / git commit <paths> commit a temporary index named by GIT_INDEX_FILE (relative to
	// the hook's working directory, the worktree's top); git.ts drops inherited GIT_* variables, so pass it on.
	if ((await git(dir, ['rev-parse', '--is-inside-work-tree'], { okCodes: [128] })).code !== 0) {
		throw new BatonError(
			'invalid_input',
			`${dir} is not in a git worktree: baton commit-guard runs in a card's worktree, from its pre-commit hook.`,
		);
	}
	const index = env.GIT_INDEX_FILE;
	const gitEnv = index === undefined || index === '' ? {} : { GIT_INDEX_FILE: path.resolve(dir, index) };
	const changed = async (against: string) =>
		splitNul(
			(
				await git(dir, ['diff', '--cached', '--name-only', '--no-renames', '--no-relative', '-z', against, '--'], {
					env: gitEnv,
				})
			).stdout,
		);
	const paths = await changed('HEAD');
	const merging = (await git(dir, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { okCodes: [1] })).code === 0;
	if (!merging) {
		return paths;
	}
	// Concluding a merge: what comes unchanged from the merged branch is not this card's change.
	const fromTheirs = new Set(await changed('MERGE_HEAD'));
	return paths.filter(p => fromTheirs.has(p));
}

/** The live claims of `project` other than `cardId`, their globs indexed for matching. */
export function heldIndex(cards: readonly Card[], project: string | null, cardId: string): ScopeIndex<HeldGlob> {
	const index = new ScopeIndex<HeldGlob>();
	for (const c of cards) {
		if (c.id === cardId || (c.project ?? null) !== project) {
			continue;
		}
		for (const glob of liveScope(c)) {
			index.add({ cardId: c.id, holder: c.claimOwner ?? 'unknown', glob }, [glob]);
		}
	}
	return index;
}

/** Each path held by another claim, with the first glob (in claim order) that covers it. */
export function guardConflicts(paths: readonly string[], index: ScopeIndex<HeldGlob>): GuardConflict[] {
	const out: GuardConflict[] = [];
	for (const p of paths) {
		const held = index.match(p, true)[0];
		if (held !== undefined) {
			out.push({ ...held, path: p });
		}
	}
	return out;
}

async function claimedCards(ctx: CommandContext, cardId: string): Promise<{ project: string | null; cards: Card[] }> {
	const hub = await ctx.hub({ spawn: false });
	const { card } = await hub.request('card/get', { cardId });
	const project = card.project ?? null;
	const cards: Card[] = [];
	let cursor: string | undefined;
	do {
		const page = await hub.request('card/list', {
			status: 'claimed',
			project,
			limit: limits.listLimit,
			...(cursor === undefined ? {} : { cursor }),
		});
		cards.push(...page.cards);
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	return { project, cards };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const late = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new BatonError('timeout', `the hub did not answer within ${ms / 1000} s`)), ms);
		timer.unref();
	});
	return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function refusal(cardId: string, project: string | null, conflicts: readonly GuardConflict[]): string {
	const shown = conflicts.slice(0, 20);
	const lines = [
		`baton: commit refused: it changes ${plural(conflicts.length, 'file')} held by another claim of ${project === null ? 'the cards without a project' : `project ${project}`}:`,
		...shown.map(c => `  ${c.path}: ${c.glob} held by ${c.cardId} (${c.holder})`),
		...(conflicts.length > shown.length ? [`  … and ${conflicts.length - shown.length} more`] : []),
		`Leave them out of ${cardId}'s commit (git restore --staged FILE) or wait until their card is done.`,
	];
	return lines.join('\n');
}

export const commitGuardCommand: Command = {
	name: 'commit-guard',
	summary: "Refuse a commit in card ID's worktree that changes files another live claim holds",
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {},
	notes:
		"Run by the pre-commit hook Baton installs in each card's worktree, in the worktree. Exit 0: the commit may go on\n" +
		'(also when the hub does not answer: it says so on stderr); exit 1: it is refused, naming each file, the\n' +
		"holder's glob and the holder.",
	async run(ctx) {
		const cardId = arg(ctx, 0);
		const paths = await committedPaths(process.cwd());
		let held: { project: string | null; cards: Card[] };
		try {
			held =
				paths.length === 0 ? { project: null, cards: [] } : await withTimeout(claimedCards(ctx, cardId), hubTimeoutMs);
		} catch (e) {
			const why = errorText(e);
			ctx.output.err(
				`baton: the commit guard could not check this commit (${why}); it was not checked against other claims.`,
			);
			if (ctx.json) {
				printJson(ctx.output, { allowed: true, checked: false, reason: why });
			}
			return 0;
		}
		const conflicts = guardConflicts(paths, heldIndex(held.cards, held.project, cardId));
		if (ctx.json) {
			printJson(ctx.output, { allowed: conflicts.length === 0, checked: true, paths: paths.length, conflicts });
		}
		if (conflicts.length > 0) {
			ctx.output.err(refusal(cardId, held.project, conflicts));
			return 1;
		}
		return 0;
	},
};
